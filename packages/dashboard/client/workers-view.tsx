import { useApp, usePolledGet, useTick } from "./app-context.ts";
import { fmtAgo, fmtInt, fmtMs, fmtTime, shortId } from "./format.ts";
import { href } from "./router.ts";
import type { WorkerInfo } from "./types.ts";
import { ErrorNotice, Notice } from "./ui.tsx";

/** How often the registry is read again. */
const POLL_MS = 2_000;

/**
 * A worker's entry lapses three heartbeat periods after its last renewal; one whose last
 * heartbeat is more than one and a half periods old has missed at least one.
 */
export function isLate(w: WorkerInfo, now: number): boolean {
  const period = (w.expiresAt - w.lastHeartbeatAt) / 3;
  return now - w.lastHeartbeatAt > period * 1.5;
}

/**
 * The worker registry (capability workers): every running worker serving the lanes, from
 * every process, with what it holds and when its entry lapses unless renewed.
 */
export function WorkersView() {
  const { can } = useApp();
  const why = can("workers");
  const now = useTick(1_000);
  const result = usePolledGet<{ workers: WorkerInfo[] }>("workers", why, { workers: [] }, POLL_MS);
  const workers = result.data?.workers;
  const held = workers?.reduce((n, w) => n + w.held, 0) ?? 0;
  const running = workers?.reduce((n, w) => n + w.running, 0) ?? 0;
  return (
    <>
      <div class="page-head">
        <h1>Workers</h1>
        <span class="muted small">
          {workers === undefined || why !== null
            ? "Worker processes serving this client's lanes"
            : `${fmtInt(workers.length)} running · ${fmtInt(running)} job${running === 1 ? "" : "s"} running, ${fmtInt(held)} held · read every ${POLL_MS / 1_000} s`}
        </span>
      </div>
      {why !== null ? (
        <Notice>{why} Running workers are not listed.</Notice>
      ) : (
        <>
          <ErrorNotice error={result.error} what="Reading the workers failed" />
          {workers === undefined ? (
            <div class="placeholder" style={{ height: "160px" }} />
          ) : workers.length === 0 ? (
            <p class="empty">No worker is running.</p>
          ) : (
            <div class="table-wrap">
              <table class="table workers-table" aria-label="Workers">
                <thead>
                  <tr>
                    <th scope="col">Worker</th>
                    <th scope="col">Host</th>
                    <th scope="col" class="n">
                      PID
                    </th>
                    <th scope="col">Lanes</th>
                    <th scope="col" class="n">
                      Concurrency
                    </th>
                    <th scope="col" class="n">
                      Held
                    </th>
                    <th scope="col" class="n">
                      Running
                    </th>
                    <th scope="col">Started</th>
                    <th scope="col">Last heartbeat</th>
                    <th scope="col">Lapses</th>
                    <th scope="col">Jobs</th>
                  </tr>
                </thead>
                <tbody>
                  {workers.map((w) => {
                    const late = isLate(w, now);
                    return (
                      <tr key={w.id}>
                        <th scope="row" class="mono" title={`${w.id} · tasklane ${w.version}`}>
                          {shortId(w.id)}
                        </th>
                        <td>{w.host}</td>
                        <td class="n">{w.pid}</td>
                        <td>
                          {w.lanes.map((l, i) => (
                            <span key={l}>
                              {i > 0 ? ", " : ""}
                              <a href={href({ view: "lane", lane: l })}>{l}</a>
                            </span>
                          ))}
                        </td>
                        <td class="n">{w.concurrency}</td>
                        <td class="n">{w.held}</td>
                        <td class="n">{w.running}</td>
                        <td title={fmtTime(w.startedAt)}>{fmtAgo(w.startedAt, now)}</td>
                        <td title={fmtTime(w.lastHeartbeatAt)} class={late ? "late" : undefined}>
                          {fmtAgo(w.lastHeartbeatAt, now)}
                          {late ? " · late" : ""}
                        </td>
                        <td title={fmtTime(w.expiresAt)}>
                          {w.expiresAt > now ? `in ${fmtMs(w.expiresAt - now)}` : "lapsed"}
                        </td>
                        <td>
                          {w.jobs.slice(0, 3).map((j, i) => (
                            <span key={`${j.lane}/${j.jobId}`}>
                              {i > 0 ? ", " : ""}
                              <a
                                class="mono"
                                href={href({ view: "job", lane: j.lane, id: j.jobId })}
                                title={`${j.lane} / ${j.jobId}`}
                              >
                                {shortId(j.jobId)}
                              </a>
                            </span>
                          ))}
                          {w.held > 3 ? <span class="muted"> +{fmtInt(w.held - 3)}</span> : null}
                        </td>
                      </tr>
                    );
                  })}
                </tbody>
              </table>
            </div>
          )}
          <p class="muted small">
            A worker registers when it starts and on every heartbeat, and leaves when it stops. One
            whose process died drops out three heartbeat periods after its last heartbeat
            (“lapses”); “late” marks one that has missed a heartbeat.
          </p>
        </>
      )}
    </>
  );
}
