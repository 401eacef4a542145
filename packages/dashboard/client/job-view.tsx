import { useEffect, useState } from "preact/hooks";
import { useApp, useAsync, useLive, useTick } from "./app-context.ts";
import type { Feature } from "./capabilities.ts";
import { DependenciesCard } from "./dependencies-card.tsx";
import { fmtAgo, fmtMs, fmtTime } from "./format.ts";
import { href, jobsHref, navigate } from "./router.ts";
import type { Job, JobState, LogLine } from "./types.ts";
import {
  ActionButton,
  ErrorNotice,
  JsonBlock,
  Notice,
  ProgressBar,
  StateBadge,
  TagList,
} from "./ui.tsx";

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
    states: ["waiting", "delayed", "blocked", "active"],
    kind: "plain",
  },
  {
    id: "delete",
    label: "Delete",
    feature: "delete",
    states: ["waiting", "delayed", "blocked", "succeeded", "failed", "canceled", "expired"],
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
      ["succeeded", "failed", "retrying", "stalled", "released", "canceled", "moved"].includes(
        h.event,
      )
    ) {
      const last = out[out.length - 1];
      if (last !== undefined) {
        last.runMs = h.at - reservedAt;
        last.end = h.event;
      }
      reservedAt = null;
      dueAt =
        h.event === "retrying" ||
        h.event === "released" ||
        h.event === "stalled" ||
        h.event === "moved"
          ? null
          : dueAt;
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

/** Move the job to another lane: a lane to choose, and a confirmation. */
function Move(props: { job: Job; reload: () => void }) {
  const { api, can, notify, live, info, confirm } = useApp();
  const others = info.lanes.filter((l) => l !== props.job.lane);
  const [to, setTo] = useState(others[0] ?? "");
  if (others.length === 0) return null;
  const why =
    can("move") ??
    (["waiting", "delayed", "active", "failed"].includes(props.job.state)
      ? null
      : "Only for waiting, delayed, active and failed jobs.");
  return (
    <form
      class="inline-form"
      onSubmit={async (e) => {
        e.preventDefault();
        const ok = await confirm({
          title: `Move this job to ${to}?`,
          body: `Job ${props.job.id} leaves ${props.job.lane} for ${to}, keeping its id.${props.job.state === "active" ? " Its running handler is aborted, and it runs again there." : ""}`,
          confirm: "Move",
        });
        if (!ok) return;
        try {
          await api.send(
            "POST",
            `lanes/${encodeURIComponent(props.job.lane)}/jobs/${encodeURIComponent(props.job.id)}/move`,
            { toLane: to },
          );
          notify(`Job moved to ${to}`);
          await live.refresh();
          navigate({ view: "job", lane: to, id: props.job.id });
        } catch (error) {
          notify(`Could not move the job: ${(error as Error).message}`, "error");
          props.reload();
        }
      }}
    >
      <label class="small">
        Move to{" "}
        <select
          value={to}
          disabled={why !== null}
          onChange={(e) => setTo((e.target as HTMLSelectElement).value)}
          aria-describedby={why === null ? undefined : "move-why"}
        >
          {others.map((l) => (
            <option key={l} value={l}>
              {l}
            </option>
          ))}
        </select>
      </label>
      <button type="submit" class="btn btn-plain" disabled={why !== null}>
        Move
      </button>
      {why === null ? null : (
        <span class="why" id="move-why">
          {why}
        </span>
      )}
    </form>
  );
}

/** The job's log lines: time, attempt, message; how many older ones were dropped. */
function Logs(props: { logs: LogLine[]; dropped: number | undefined }) {
  return (
    <>
      {props.dropped !== undefined && props.dropped > 0 ? (
        <p class="muted small">
          {props.dropped} older line{props.dropped === 1 ? "" : "s"} dropped (the lane keeps the
          last ones).
        </p>
      ) : null}
      {props.logs.length === 0 ? (
        <p class="muted small">No lines.</p>
      ) : (
        <table class="table compact logs" aria-label="Log lines">
          <thead>
            <tr>
              <th scope="col">time</th>
              <th scope="col" class="n">
                attempt
              </th>
              <th scope="col">message</th>
            </tr>
          </thead>
          <tbody>
            {props.logs.map((l, i) => (
              <tr key={i}>
                <td title={fmtTime(l.at)}>{fmtTime(l.at).slice(11)}</td>
                <td class="n">{l.attempt}</td>
                <td>{l.message}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </>
  );
}

export function JobView(props: { lane: string; id: string }) {
  const { api, can, live, confirm, notify, info } = useApp();
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
            <Move job={j} reload={job.reload} />
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
                {j.expiresAt !== undefined ? (
                  <div>
                    <dt>
                      {j.state === "expired"
                        ? "Expired"
                        : j.state === "waiting" || j.state === "delayed"
                          ? "Expires"
                          : "Expiry"}
                    </dt>
                    <dd title={fmtTime(j.expiresAt)}>
                      {j.state === "waiting" || j.state === "delayed" ? (
                        <>
                          {fmtAgo(j.expiresAt, now)}
                          <span class="muted small"> unless started</span>
                        </>
                      ) : j.state === "expired" ? (
                        fmtAgo(j.expiresAt, now)
                      ) : (
                        <span class="muted">started in time</span>
                      )}
                    </dd>
                  </div>
                ) : null}
                {j.group !== undefined ? (
                  <div>
                    <dt>Group</dt>
                    <dd>{j.group}</dd>
                  </div>
                ) : null}
                {j.tags !== undefined && j.tags.length > 0 ? (
                  <div>
                    <dt>Tags</dt>
                    <dd>
                      <TagList
                        tags={j.tags}
                        href={
                          can("search") === null
                            ? (tag) => jobsHref(j.lane, j.state, { tag })
                            : undefined
                        }
                      />
                    </dd>
                  </div>
                ) : null}
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
          <DependenciesCard job={j} />
          {j.progress !== undefined ? (
            <section class="card" aria-labelledby="progress-title">
              <h2 id="progress-title">Progress</h2>
              <ProgressBar value={j.progress} />
              <JsonBlock value={j.progress} label="Progress" />
            </section>
          ) : null}
          {j.result !== undefined ? (
            <section class="card" aria-labelledby="result-title">
              <h2 id="result-title">Result</h2>
              <JsonBlock value={j.result} label="Result" />
            </section>
          ) : null}
          {j.logs !== undefined ? (
            <section class="card" aria-labelledby="logs-title">
              <h2 id="logs-title">Logs</h2>
              <Logs logs={j.logs} dropped={j.logsDropped} />
            </section>
          ) : null}
          {(() => {
            // One line for what the adapter does not keep, rather than three empty cards.
            const missing = [
              can("results") !== null ? "results" : null,
              can("progress") !== null ? "progress or logs" : null,
            ].filter((m) => m !== null);
            return missing.length === 0 ? null : (
              <p class="muted small">
                The {info.adapter.name} adapter does not store {missing.join(", ")}.
              </p>
            );
          })()}
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
        </>
      )}
    </>
  );
}
