import { useApp, useAsync, useLive, useTick } from "./app-context.ts";
import { fmtAgo, fmtInt, fmtTime, shortId } from "./format.ts";
import { href, jobsHref } from "./router.ts";
import type { BulkResult, FailureGroup, Job } from "./types.ts";
import { ActionButton, ErrorNotice, Notice } from "./ui.tsx";

/** Failed jobs read per lane to group them here, while the API cannot group. */
const GROUP_SCAN = 1_000;
/** Ids per bulk retry call (the API's default bulkLimit). */
const RETRY_CHUNK = 1_000;

/**
 * An error message with what varies between jobs (ids, numbers) taken out, so that
 * "mailbox user7@… does not exist" and "mailbox user9@…" are one group.
 */
export function normalizeMessage(message: string): string {
  return message
    .replace(/\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b/gi, "…")
    .replace(/\b0x[0-9a-f]+\b/gi, "#")
    .replace(/\d+(\.\d+)?/g, "#");
}

/** What to search the failed list for to find a group's jobs: its longest literal part. */
function searchFor(normalized: string): string {
  return normalized
    .split(/[#…]/)
    .map((part) => part.trim())
    .reduce((a, b) => (b.length > a.length ? b : a), "");
}

interface Group {
  lane: string;
  task: string;
  name: string;
  message: string;
  ids: string[];
  lastAt: number;
  stack: string | undefined;
  /** The latest job's own message (the group's has its varying parts taken out). */
  latest: string;
}

async function groupFailed(
  api: ReturnType<typeof useApp>["api"],
  lanes: Array<{ name: string; failed: number }>,
  signal: AbortSignal,
): Promise<{ groups: Group[]; scanned: Record<string, number> }> {
  const groups = new Map<string, Group>();
  const scanned: Record<string, number> = {};
  for (const lane of lanes) {
    let n = 0;
    await api.lines<Job>(
      `lanes/${encodeURIComponent(lane.name)}/jobs?state=failed&limit=${GROUP_SCAN}`,
      (job) => {
        n++;
        const name = job.error?.name ?? "Error";
        const message = normalizeMessage(job.error?.message ?? "(no error recorded)");
        const key = `${lane.name}\0${job.task}\0${name}\0${message}`;
        let g = groups.get(key);
        if (g === undefined) {
          g = {
            lane: lane.name,
            task: job.task,
            name,
            message,
            ids: [],
            lastAt: 0,
            stack: undefined,
            latest: "",
          };
          groups.set(key, g);
        }
        g.ids.push(job.id);
        const at = job.finishedAt ?? job.runAt;
        if (at >= g.lastAt) {
          g.lastAt = at;
          g.stack = job.error?.stack;
          g.latest = job.error?.message ?? "";
        }
        return true;
      },
      signal,
    );
    scanned[lane.name] = n;
  }
  return {
    groups: [...groups.values()].sort((a, b) => b.ids.length - a.ids.length || b.lastAt - a.lastAt),
    scanned,
  };
}

/** The signature of the lanes' failed counts: groups are read again when it changes. */
function useFailedSignature() {
  const state = useLive();
  const failing = (state.lanes ?? [])
    .filter((l) => l.counts.failed > 0)
    .map((l) => ({ name: l.name, failed: l.counts.failed }));
  return { failing, signature: failing.map((l) => `${l.name}:${l.failed}`).join(","), state };
}

export function FailuresView() {
  const { can } = useApp();
  return can("failureGroups") === null ? <GroupedByApi /> : <GroupedHere />;
}

/**
 * The API's failure groups (capability failureGroups): failed jobs by error name, per
 * lane, counted in the backend whatever their number. Retry and delete act on every job of
 * a group, through the bulk endpoints with the group's errorName, in bounded calls.
 */
function GroupedByApi() {
  const { api, can, live, notify, confirm } = useApp();
  const now = useTick(5_000);
  const { signature } = useFailedSignature();
  const result = useAsync(
    (signal) => api.get<{ groups: FailureGroup[] }>("failure-groups", signal),
    [signature],
  );

  const act = async (g: FailureGroup, verb: "retry" | "delete") => {
    const ok = await confirm({
      title: `${verb === "retry" ? "Retry" : "Delete"} ${fmtInt(g.count)} failed job${g.count === 1 ? "" : "s"}?`,
      body:
        verb === "retry"
          ? `Every job in ${g.lane} that failed with ${g.group} goes back to waiting, its attempts starting again.`
          : `Every job in ${g.lane} that failed with ${g.group} is removed. Deleted jobs cannot be brought back.`,
      confirm: verb === "retry" ? "Retry" : "Delete",
      danger: verb === "delete",
    });
    if (!ok) return;
    let changed = 0;
    try {
      // Each call changes up to the API's bulkLimit, taking them out of the group.
      for (;;) {
        const r = await api.send<BulkResult>(
          "POST",
          `lanes/${encodeURIComponent(g.lane)}/jobs/${verb}`,
          { filter: { state: "failed", errorName: g.group } },
        );
        changed += r.changed;
        if (!r.more || r.changed === 0) break;
      }
      notify(`${fmtInt(changed)} ${g.group} jobs ${verb === "retry" ? "retried" : "deleted"}`);
    } catch (e) {
      notify(`Stopped after ${fmtInt(changed)}: ${(e as Error).message}`, "error");
    }
    await live.refresh();
    result.reload();
  };

  const groups = result.data?.groups;
  return (
    <>
      <div class="page-head">
        <h1>Failures</h1>
        <span class="muted small">
          Failed jobs (the dead letter set), grouped by lane and error name
        </span>
      </div>
      <ErrorNotice error={result.error} what="Reading the failure groups failed" />
      {groups === undefined ? (
        <div class="placeholder" style={{ height: "200px" }} />
      ) : groups.length === 0 ? (
        <p class="empty">No failed jobs. </p>
      ) : (
        <div class="table-wrap">
          <table class="table failures-table" aria-label="Failure groups">
            <thead>
              <tr>
                <th scope="col">Error</th>
                <th scope="col">Lane</th>
                <th scope="col" class="n">
                  Jobs
                </th>
                <th scope="col">Last</th>
                <th scope="col">
                  <span class="sr-only">Actions</span>
                </th>
              </tr>
            </thead>
            <tbody>
              {groups.map((g) => (
                <tr key={`${g.lane}\0${g.group}`}>
                  <td class="error-cell-wide">
                    <strong>{g.group}</strong>: {g.sample.message}
                    <span class="muted small latest">
                      latest:{" "}
                      <a href={href({ view: "job", lane: g.lane, id: g.sample.jobId })}>
                        {shortId(g.sample.jobId)}
                      </a>{" "}
                      ({g.sample.task})
                    </span>
                    {g.sample.stack ? (
                      <details>
                        <summary>Stack of the latest</summary>
                        <pre class="code stack">{g.sample.stack}</pre>
                      </details>
                    ) : null}
                  </td>
                  <td>{g.lane}</td>
                  <td class="n">{fmtInt(g.count)}</td>
                  <td title={fmtTime(g.sample.failedAt)}>{fmtAgo(g.sample.failedAt, now)}</td>
                  <td class="row-actions">
                    <span class="cell-row">
                      <ActionButton
                        why={can("retry")}
                        showWhy={false}
                        kind="primary"
                        label={`Retry the ${g.count} ${g.group} jobs of ${g.lane}`}
                        onClick={() => act(g, "retry")}
                      >
                        Retry {fmtInt(g.count)}
                      </ActionButton>
                      <ActionButton
                        why={can("delete")}
                        showWhy={false}
                        kind="danger"
                        label={`Delete the ${g.count} ${g.group} jobs of ${g.lane}`}
                        onClick={() => act(g, "delete")}
                      >
                        Delete
                      </ActionButton>
                      <a
                        class="btn btn-plain"
                        href={jobsHref(g.lane, "failed", { errorName: g.group })}
                      >
                        Show
                      </a>
                    </span>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      {[can("retry"), can("delete")].some((w) => w !== null) ? (
        <Notice>{[can("retry"), can("delete")].filter((w) => w !== null).join(" ")}</Notice>
      ) : null}
    </>
  );
}

/**
 * Groups made here, in the browser, where the adapter cannot group failures: the first
 * GROUP_SCAN failed jobs of each lane, by task and by message with its varying parts
 * taken out.
 */
function GroupedHere() {
  const { api, can, live, notify, confirm } = useApp();
  const now = useTick(5_000);
  const { failing, signature, state } = useFailedSignature();
  const groupsWhy = can("failureGroups");
  const listWhy = can("list");
  const result = useAsync(
    (signal) =>
      listWhy === null && state.lanes !== null
        ? groupFailed(api, failing, signal)
        : Promise.resolve(null),
    [signature, state.lanes === null],
  );

  const retry = async (g: Group) => {
    const ok = await confirm({
      title: `Retry ${fmtInt(g.ids.length)} failed job${g.ids.length === 1 ? "" : "s"}?`,
      body: `Every ${g.task} job in ${g.lane} that failed with “${g.name}: ${g.message}” (of those read) goes back to waiting.`,
      confirm: "Retry",
    });
    if (!ok) return;
    let changed = 0;
    try {
      for (let i = 0; i < g.ids.length; i += RETRY_CHUNK) {
        const r = await api.send<BulkResult>(
          "POST",
          `lanes/${encodeURIComponent(g.lane)}/jobs/retry`,
          { ids: g.ids.slice(i, i + RETRY_CHUNK) },
        );
        changed += r.changed;
      }
      notify(`${fmtInt(changed)} jobs retried`);
    } catch (e) {
      notify(`Retry stopped after ${fmtInt(changed)}: ${(e as Error).message}`, "error");
    }
    await live.refresh();
    result.reload();
  };

  const data = result.data;
  return (
    <>
      <div class="page-head">
        <h1>Failures</h1>
        <span class="muted small">
          Failed jobs (the dead letter set), grouped by lane, task and error
        </span>
      </div>
      {groupsWhy !== null ? (
        <Notice>
          {groupsWhy}{" "}
          {listWhy === null
            ? `These groups are made here, in the browser, from the first ${fmtInt(GROUP_SCAN)} failed jobs of each lane.`
            : ""}
        </Notice>
      ) : null}
      {listWhy !== null ? (
        <Notice>{listWhy} Failed jobs cannot be read, only counted (see Lanes).</Notice>
      ) : null}
      <ErrorNotice error={result.error} what="Reading failed jobs failed" />
      {listWhy === null && data === undefined ? (
        <div class="placeholder" style={{ height: "200px" }} />
      ) : null}
      {data === null || data === undefined ? null : data.groups.length === 0 ? (
        <p class="empty">No failed jobs. </p>
      ) : (
        <div class="table-wrap">
          <table class="table failures-table" aria-label="Failure groups">
            <thead>
              <tr>
                <th scope="col">Error</th>
                <th scope="col">Task</th>
                <th scope="col">Lane</th>
                <th scope="col" class="n">
                  Jobs
                </th>
                <th scope="col">Last</th>
                <th scope="col">
                  <span class="sr-only">Actions</span>
                </th>
              </tr>
            </thead>
            <tbody>
              {data.groups.map((g) => (
                <tr key={`${g.lane}\0${g.task}\0${g.name}\0${g.message}`}>
                  <td class="error-cell-wide">
                    <strong>{g.name}</strong>: {g.message}
                    {g.latest !== g.message ? (
                      <span class="muted small latest">latest: {g.latest}</span>
                    ) : null}
                    {g.stack ? (
                      <details>
                        <summary>Stack of the latest</summary>
                        <pre class="code stack">{g.stack}</pre>
                      </details>
                    ) : null}
                  </td>
                  <td>{g.task}</td>
                  <td>{g.lane}</td>
                  <td class="n">
                    {fmtInt(g.ids.length)}
                    {(data.scanned[g.lane] ?? 0) >= GROUP_SCAN ? "+" : ""}
                  </td>
                  <td title={fmtTime(g.lastAt)}>{fmtAgo(g.lastAt, now)}</td>
                  <td class="row-actions">
                    <span class="cell-row">
                      <ActionButton
                        why={can("retry")}
                        showWhy={false}
                        kind="primary"
                        label={`Retry ${g.ids.length} ${g.task} jobs failed with ${g.message}`}
                        onClick={() => retry(g)}
                      >
                        Retry {fmtInt(g.ids.length)}
                      </ActionButton>
                      <a
                        class="btn btn-plain"
                        href={jobsHref(g.lane, "failed", { q: searchFor(g.message), task: g.task })}
                      >
                        Show
                      </a>
                    </span>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </>
  );
}
