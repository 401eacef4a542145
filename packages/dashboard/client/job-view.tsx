import { useEffect, useState } from "preact/hooks";
import { useApp, useAsync, useLive, useTick } from "./app-context.ts";
import type { Feature } from "./capabilities.ts";
import { fmtAgo, fmtMs, fmtTime } from "./format.ts";
import { href, jobsHref, navigate } from "./router.ts";
import type { Job, JobState } from "./types.ts";
import { ActionButton, ErrorNotice, JsonBlock, Notice, StateBadge } from "./ui.tsx";

interface Action {
  id: string;
  label: string;
  feature: Feature;
  states: JobState[];
  kind: "primary" | "plain" | "danger";
}

const ACTIONS: Action[] = [
  { id: "retry", label: "Retry", feature: "retry", states: ["failed"], kind: "primary" },
  { id: "promote", label: "Run now", feature: "promote", states: ["delayed"], kind: "plain" },
  {
    id: "cancel",
    label: "Cancel",
    feature: "cancel",
    states: ["waiting", "delayed", "active"],
    kind: "plain",
  },
  {
    id: "delete",
    label: "Delete",
    feature: "delete",
    states: ["waiting", "delayed", "succeeded", "failed", "canceled"],
    kind: "danger",
  },
];

function whyNot(action: Action, job: Job, can: (f: Feature) => string | null): string | null {
  const why = can(
    action.id === "cancel" && job.state === "active" ? "cancelActive" : action.feature,
  );
  if (why !== null) return why;
  if (!action.states.includes(job.state)) return `Only for ${action.states.join(", ")} jobs.`;
  return null;
}

/** Wait and run of each attempt, read from the history (reserved → next end). */
function attempts(
  job: Job,
): Array<{ n: number; waitMs: number | null; runMs: number | null; end: string }> {
  const out: Array<{ n: number; waitMs: number | null; runMs: number | null; end: string }> = [];
  let dueAt: number | null = job.publishedAt;
  let reservedAt: number | null = null;
  for (const h of job.history) {
    if (h.event === "reserved") {
      reservedAt = h.at;
      out.push({
        n: out.length + 1,
        waitMs: dueAt === null ? null : Math.max(0, h.at - dueAt),
        runMs: null,
        end: "running",
      });
    } else if (
      reservedAt !== null &&
      ["succeeded", "failed", "retrying", "stalled", "released", "canceled"].includes(h.event)
    ) {
      const last = out[out.length - 1];
      if (last !== undefined) {
        last.runMs = h.at - reservedAt;
        last.end = h.event;
      }
      reservedAt = null;
      dueAt =
        h.event === "retrying" || h.event === "released" || h.event === "stalled" ? null : dueAt;
    } else if (h.event === "retried") {
      dueAt = h.at;
    }
  }
  return out;
}

function Priority(props: { job: Job; reload: () => void }) {
  const { api, can, notify, live } = useApp();
  const [value, setValue] = useState(String(props.job.priority));
  const why =
    can("priority") ??
    (["waiting", "delayed"].includes(props.job.state)
      ? null
      : "Only for waiting and delayed jobs.");
  return (
    <form
      class="inline-form"
      onSubmit={async (e) => {
        e.preventDefault();
        try {
          await api.send(
            "POST",
            `lanes/${encodeURIComponent(props.job.lane)}/jobs/${encodeURIComponent(props.job.id)}/priority`,
            {
              priority: Number(value),
            },
          );
          notify("Priority changed");
        } catch (error) {
          notify(`Could not change the priority: ${(error as Error).message}`, "error");
        }
        await live.refresh();
        props.reload();
      }}
    >
      <label class="small">
        Priority{" "}
        <input
          type="number"
          min={-1000}
          max={1000}
          step={1}
          value={value}
          disabled={why !== null}
          onInput={(e) => setValue((e.target as HTMLInputElement).value)}
          aria-describedby={why === null ? undefined : "priority-why"}
        />
      </label>
      <button
        type="submit"
        class="btn btn-plain"
        disabled={why !== null || value === String(props.job.priority)}
      >
        Set
      </button>
      {why === null ? null : (
        <span class="why" id="priority-why">
          {why}
        </span>
      )}
    </form>
  );
}

export function JobView(props: { lane: string; id: string }) {
  const { api, can, live, confirm, notify } = useApp();
  const liveState = useLive();
  const now = useTick(1_000);
  const path = `lanes/${encodeURIComponent(props.lane)}/jobs/${encodeURIComponent(props.id)}`;
  const getWhy = can("get");
  const job = useAsync<Job | null>(
    (signal) => (getWhy === null ? api.get<Job>(path, signal) : Promise.resolve(null)),
    [path],
  );

  // Follow the job: read it again on its events, or every 3 s without live events.
  useEffect(
    () =>
      live.onEvent((e) => {
        if (e.jobId === props.id && (e.lane === undefined || e.lane === props.lane)) job.reload();
      }),
    [live, props.id, props.lane],
  );
  const polling = liveState.connection !== "live";
  useEffect(() => {
    if (!polling || getWhy !== null) return;
    const timer = setInterval(job.reload, 3_000);
    return () => clearInterval(timer);
  }, [polling, getWhy]);

  const run = async (action: Action, j: Job) => {
    if (action.id === "delete") {
      const ok = await confirm({
        title: "Delete this job?",
        body: `Job ${j.id} (${j.task}, ${j.state}) will be removed from ${j.lane}. It cannot be brought back.`,
        confirm: "Delete",
        danger: true,
      });
      if (!ok) return;
    }
    try {
      if (action.id === "delete") await api.send("DELETE", path);
      else await api.send("POST", `${path}/${action.id}`);
      notify(
        `Job ${action.id === "delete" ? "deleted" : action.id === "retry" ? "retried" : action.id === "cancel" ? "canceled" : "promoted"}`,
      );
    } catch (error) {
      notify(`Could not ${action.label.toLowerCase()}: ${(error as Error).message}`, "error");
    }
    await live.refresh();
    if (action.id === "delete") navigate(jobsHref(j.lane, j.state));
    else job.reload();
  };

  const crumbs = (
    <nav class="crumbs" aria-label="Breadcrumb">
      <a href={href({ view: "lanes" })}>Lanes</a> /{" "}
      <a href={href({ view: "lane", lane: props.lane })}>{props.lane}</a>
      {job.data ? (
        <>
          {" "}
          / <a href={jobsHref(props.lane, job.data.state)}>{job.data.state}</a>
        </>
      ) : null}{" "}
      / <span aria-current="page">job</span>
    </nav>
  );
  if (getWhy !== null) {
    return (
      <>
        {crumbs}
        <Notice>{getWhy}</Notice>
      </>
    );
  }
  if (job.error?.status === 404 && job.data === undefined) {
    return (
      <>
        {crumbs}
        <Notice kind="warn">
          No job {props.id} in {props.lane}: it may have been deleted, or removed by the lane's
          retention.
        </Notice>
      </>
    );
  }
  const j = job.data;
  return (
    <>
      {crumbs}
      <div class="page-head">
        <h1 class="job-title">
          <span class="mono">{props.id}</span>
          {j ? <StateBadge state={j.state} /> : null}
        </h1>
      </div>
      <ErrorNotice error={job.error} what="Reading the job failed" />
      {j === undefined || j === null ? (
        <div class="placeholder" style={{ height: "360px" }} />
      ) : (
        <>
          <fieldset class="actions-bar">
            <legend class="sr-only">Job actions</legend>
            {ACTIONS.map((a) => (
              <ActionButton
                key={a.id}
                why={whyNot(a, j, can)}
                showWhy={false}
                kind={a.kind}
                onClick={() => run(a, j)}
              >
                {a.label}
              </ActionButton>
            ))}
            <Priority job={j} reload={job.reload} />
          </fieldset>
          <ul class="why-list">
            {ACTIONS.map((a) => {
              const why = whyNot(a, j, can);
              return why === null || why.startsWith("Only for") ? null : (
                <li key={a.id}>
                  <strong>{a.label}:</strong> {why}
                </li>
              );
            })}
          </ul>
          <div class="grid-2">
            <section class="card" aria-labelledby="facts-title">
              <h2 id="facts-title">Job</h2>
              <dl class="facts">
                <div>
                  <dt>Task</dt>
                  <dd>{j.task}</dd>
                </div>
                <div>
                  <dt>Lane</dt>
                  <dd>
                    <a href={href({ view: "lane", lane: j.lane })}>{j.lane}</a>
                  </dd>
                </div>
                <div>
                  <dt>State</dt>
                  <dd>
                    <StateBadge state={j.state} />
                  </dd>
                </div>
                <div>
                  <dt>Attempt</dt>
                  <dd class="num">{j.attempt}</dd>
                </div>
                <div>
                  <dt>Priority</dt>
                  <dd class="num">{j.priority}</dd>
                </div>
                <div>
                  <dt>Published</dt>
                  <dd title={fmtTime(j.publishedAt)}>{fmtAgo(j.publishedAt, now)}</dd>
                </div>
                <div>
                  <dt>{j.runAt > now ? "Runs" : "Due"}</dt>
                  <dd title={fmtTime(j.runAt)}>{fmtAgo(j.runAt, now)}</dd>
                </div>
                <div>
                  <dt>Finished</dt>
                  <dd title={j.finishedAt === undefined ? undefined : fmtTime(j.finishedAt)}>
                    {j.finishedAt === undefined ? "–" : fmtAgo(j.finishedAt, now)}
                  </dd>
                </div>
              </dl>
              <h3>Attempts</h3>
              {attempts(j).length === 0 ? (
                <p class="muted small">Not run yet.</p>
              ) : (
                <table class="table compact" aria-label="Attempts">
                  <thead>
                    <tr>
                      <th scope="col" class="n">
                        #
                      </th>
                      <th scope="col" class="n">
                        wait
                      </th>
                      <th scope="col" class="n">
                        run
                      </th>
                      <th scope="col">ended</th>
                    </tr>
                  </thead>
                  <tbody>
                    {attempts(j).map((a) => (
                      <tr key={a.n}>
                        <td class="n">{a.n}</td>
                        <td class="n">{fmtMs(a.waitMs)}</td>
                        <td class="n">{fmtMs(a.runMs)}</td>
                        <td>{a.end}</td>
                      </tr>
                    ))}
                  </tbody>
                </table>
              )}
            </section>
            <section class="card" aria-labelledby="history-title">
              <h2 id="history-title">History</h2>
              <ol class="timeline">
                {j.history.map((h, i) => (
                  <li key={i} class={`ev-${h.event}`}>
                    <time dateTime={new Date(h.at).toISOString()} title={fmtTime(h.at)}>
                      {i === 0
                        ? fmtTime(h.at).slice(11)
                        : `+${fmtMs(h.at - (j.history[0]?.at ?? h.at))}`}
                    </time>
                    <span>
                      <span class="ev">{h.event}</span>
                      {h.detail ? <span class="muted small"> · {h.detail}</span> : null}
                    </span>
                  </li>
                ))}
              </ol>
            </section>
          </div>
          {j.error ? (
            <section class="card card-error" aria-labelledby="error-title">
              <h2 id="error-title">Error</h2>
              <p class="error-line">
                <strong>{j.error.name}</strong>: {j.error.message}{" "}
                <span class="badge">{j.error.reason}</span>
              </p>
              {j.error.stack ? <pre class="code stack">{j.error.stack}</pre> : null}
            </section>
          ) : null}
          <section class="card" aria-labelledby="payload-title">
            <h2 id="payload-title">Payload</h2>
            {j.payloadText !== undefined ? (
              <>
                <Notice kind="warn">The stored payload is not JSON; its text:</Notice>
                <pre class="code">{j.payloadText}</pre>
              </>
            ) : (
              <JsonBlock value={j.payload} label="Payload" />
            )}
            {j.appData !== undefined ? (
              <>
                <h3>App data</h3>
                <JsonBlock value={j.appData} label="App data" />
              </>
            ) : null}
          </section>
          {(["result", "progress", "logs"] as const).map((field) => {
            const value = j[field];
            if (value !== undefined) {
              return (
                <section class="card" key={field} aria-label={field}>
                  <h2>{field[0]?.toUpperCase() + field.slice(1)}</h2>
                  {field === "logs" && Array.isArray(value) ? (
                    <pre class="code">
                      {value.map((l) => (typeof l === "string" ? l : JSON.stringify(l))).join("\n")}
                    </pre>
                  ) : (
                    <JsonBlock value={value} label={field} />
                  )}
                </section>
              );
            }
            return null;
          })}
          {(() => {
            // One line for the fields this version does not store, rather than three.
            const missing = (["results", "progress", "logs"] as const).filter(
              (f) => can(f) !== null && j[f === "results" ? "result" : f] === undefined,
            );
            return missing.length === 0 ? null : (
              <p class="muted small">
                Not stored by this version of tasklane yet: {missing.join(", ")}.
              </p>
            );
          })()}
        </>
      )}
    </>
  );
}
