import { useApp, useAsync } from "./app-context.ts";
import { ErrorNotice, Notice } from "./ui.tsx";

const WHAT = {
  workers: {
    title: "Workers",
    intro:
      "Worker processes running this client's lanes: host, lanes, concurrency, jobs held, last heartbeat.",
  },
  schedules: {
    title: "Schedules",
    intro: "Recurring jobs: task, schedule, next and last run.",
  },
} as const;

/** The rows of an answer: its first array (the answer's shape may grow). */
function rowsOf(data: unknown): Array<Record<string, unknown>> {
  if (Array.isArray(data)) return data as Array<Record<string, unknown>>;
  if (typeof data === "object" && data !== null) {
    for (const value of Object.values(data))
      if (Array.isArray(value)) return value as Array<Record<string, unknown>>;
  }
  return [];
}

const cell = (v: unknown) =>
  v === null || v === undefined ? "–" : typeof v === "object" ? JSON.stringify(v) : String(v);

/**
 * Workers and schedules: the API answers 501 until core keeps them. Until then the view
 * says so; once GET / no longer lists them as not supported, it shows what the API answers.
 */
export function RegistryView(props: { kind: "workers" | "schedules" }) {
  const { api, can } = useApp();
  const why = can(props.kind);
  const what = WHAT[props.kind];
  const result = useAsync(
    (signal) => (why === null ? api.get<unknown>(props.kind, signal) : Promise.resolve(null)),
    [props.kind, why],
  );
  const rows = rowsOf(result.data);
  const columns = [...new Set(rows.flatMap((r) => Object.keys(r)))];
  return (
    <>
      <div class="page-head">
        <h1>{what.title}</h1>
      </div>
      <p class="muted">{what.intro}</p>
      {why !== null ? (
        <Notice>{why} This page fills in when the API offers it.</Notice>
      ) : (
        <>
          <ErrorNotice error={result.error} what={`Reading ${props.kind} failed`} />
          {result.data !== undefined && rows.length === 0 ? <p class="empty">None.</p> : null}
          {rows.length > 0 ? (
            <div class="table-wrap">
              <table class="table" aria-label={what.title}>
                <thead>
                  <tr>
                    {columns.map((c) => (
                      <th scope="col" key={c}>
                        {c}
                      </th>
                    ))}
                  </tr>
                </thead>
                <tbody>
                  {rows.map((r, i) => (
                    <tr key={i}>
                      {columns.map((c) => (
                        <td key={c}>{cell(r[c])}</td>
                      ))}
                    </tr>
                  ))}
                </tbody>
              </table>
            </div>
          ) : null}
        </>
      )}
    </>
  );
}
