/**
 * `tasklane jobs list|get|retry|cancel|delete`.
 *
 * Lists stream from the adapter's `list()` cursor and are printed as they come, so memory
 * stays constant however many jobs match. Bulk operations (`--all`) walk the same cursor
 * and act in bounded batches (`--batch-size`): each batch is one adapter call, atomic on
 * Redis, so an interrupted run has done whole batches and nothing else.
 */
import {
  type JobInfo,
  type JobState,
  type LaneHandle,
  type ListOptions,
  UnsupportedError,
} from "@tasklane/core";
import cliProgress from "cli-progress";
import type { CommandContext } from "../context.ts";
import { CommandFailedError, InterruptedError, UsageError } from "../errors.ts";
import { formatTime, oneLine } from "../output.ts";
import { JOB_STATES } from "../parse.ts";
import type { Session } from "../session.ts";

/** Filters of `jobs list` and of the bulk operations. */
export interface JobFilters {
  lane?: string[];
  state?: JobState[];
  /** Only jobs of this task. Filtered by the CLI: the adapters' list() has no task filter. */
  task?: string;
  /** Stop after this many matching jobs. */
  limit?: number;
  /** Jobs the adapter fetches per round trip. */
  pageSize?: number;
}

/**
 * The adapter's list options for one state. Today an adapter filters by state only; the
 * filters the operator data model adds (tags, search) go here once ListOptions has them.
 */
function listOptions(state: JobState, filters: JobFilters): ListOptions {
  return { state, ...(filters.pageSize !== undefined ? { pageSize: filters.pageSize } : {}) };
}

function requireCapability(session: Session, capability: "list" | "get", what: string): void {
  const adapter = session.tl.adapter;
  if (!adapter.capabilities[capability]) {
    throw new UnsupportedError(adapter.name, what);
  }
}

/** A job as the CLI prints it: the adapter's JobInfo, `lane` as the config name. */
function jobRecord(handle: LaneHandle, job: JobInfo): JobInfo {
  return { ...job, lane: handle.name };
}

// ── list ────────────────────────────────────────────────────────────────────────────────

const LIST_COLUMNS: ReadonlyArray<[string, number, "left" | "right"]> = [
  ["id", 36, "left"],
  ["lane", 12, "left"],
  ["state", 9, "left"],
  ["task", 16, "left"],
  ["attempt", 7, "right"],
  ["priority", 8, "right"],
  ["published", 24, "left"],
  ["error", 0, "left"],
];

/** One row of the streamed list: fixed widths (a stream cannot measure rows it has not seen). */
function listRow(cells: readonly string[]): string {
  return LIST_COLUMNS.map(([, width, align], i) => {
    const cell = cells[i] ?? "";
    return align === "right" ? cell.padStart(width) : cell.padEnd(width);
  })
    .join("  ")
    .trimEnd();
}

export async function listJobs(ctx: CommandContext, filters: JobFilters): Promise<void> {
  const session = await ctx.connect();
  const handles = session.lanes(filters.lane);
  requireCapability(session, "list", "listing jobs (list)");
  const states = filters.state ?? JOB_STATES;
  let shown = 0;
  let header = false;
  scan: for (const handle of handles) {
    for (const state of states) {
      for await (const job of handle.list(listOptions(state, filters))) {
        if (filters.task !== undefined && job.task !== filters.task) continue;
        if (ctx.out.closed || ctx.signal.aborted) break scan;
        if (ctx.json) await ctx.out.json(jobRecord(handle, job));
        else {
          if (!header) {
            await ctx.out.line(listRow(LIST_COLUMNS.map(([name]) => name)));
            header = true;
          }
          await ctx.out.line(
            listRow([
              job.id,
              handle.name,
              job.state,
              job.task,
              String(job.attempt),
              String(job.priority),
              formatTime(job.publishedAt),
              job.error ? oneLine(`${job.error.name}: ${job.error.message}`, 100) : "",
            ]),
          );
        }
        shown++;
        if (filters.limit !== undefined && shown >= filters.limit) break scan;
      }
    }
  }
  if (shown === 0 && !ctx.json) ctx.note("no jobs found");
  if (ctx.signal.aborted) throw new InterruptedError(`stopped after ${shown} jobs`);
}

// ── get ─────────────────────────────────────────────────────────────────────────────────

export async function getJob(
  ctx: CommandContext,
  id: string,
  options: { lane?: string[] },
): Promise<void> {
  const session = await ctx.connect();
  const handles = session.lanes(options.lane);
  requireCapability(session, "get", "reading a job by id (get)");
  const found = (await Promise.all(handles.map(async (h) => ({ h, job: await h.get(id) })))).filter(
    (f): f is { h: LaneHandle; job: JobInfo } => f.job !== undefined,
  );
  if (found.length === 0) {
    throw new CommandFailedError(
      `job ${id} not found in lane${handles.length > 1 ? "s" : ""} ${handles.map((h) => h.name).join(", ")}`,
    );
  }
  for (const [i, { h, job }] of found.entries()) {
    if (ctx.json) await ctx.out.json(jobRecord(h, job));
    else {
      if (i > 0) await ctx.out.line("");
      await ctx.out.line(jobDetail(jobRecord(h, job)));
    }
  }
}

/** The human view of one job: a label per line, the stack and history indented. */
export function jobDetail(job: JobInfo): string {
  const label = (name: string) => name.padEnd(11);
  const indent = " ".repeat(11);
  const lines = [
    `${label("id")}${job.id}`,
    `${label("lane")}${job.lane}`,
    `${label("task")}${job.task}`,
    `${label("state")}${job.state}`,
    `${label("attempt")}${job.attempt}`,
    `${label("priority")}${job.priority}`,
    `${label("published")}${formatTime(job.publishedAt)}`,
    `${label("run at")}${formatTime(job.runAt)}`,
    `${label("finished")}${formatTime(job.finishedAt)}`,
    `${label("payload")}${job.payload}`,
    `${label("app data")}${job.appData ?? "-"}`,
  ];
  if (job.error) {
    lines.push(
      `${label("error")}${job.error.name}: ${job.error.message} (reason: ${job.error.reason})`,
    );
    for (const line of (job.error.stack ?? "").split("\n").slice(1)) {
      if (line.trim() !== "") lines.push(`${indent}${line.trim()}`);
    }
  }
  job.history.forEach((entry, i) => {
    const detail = entry.detail ? `  ${entry.detail}` : "";
    lines.push(
      `${i === 0 ? label("history") : indent}${formatTime(entry.at)}  ${entry.event}${detail}`,
    );
  });
  return lines.join("\n");
}

// ── retry, cancel, delete ───────────────────────────────────────────────────────────────

export type BulkAction = "retry" | "cancel" | "delete";

export interface BulkOptions extends JobFilters {
  /** Every job matching the filters (instead of ids). */
  all?: boolean;
  /** Jobs per adapter call. */
  batchSize: number;
  /** Draw a progress bar on stderr when it is a terminal. Default true. */
  progress?: boolean;
}

const PAST: Record<BulkAction, string> = {
  retry: "retried",
  cancel: "canceled",
  delete: "deleted",
};

/** Which states each action takes jobs from, and the default when `--state` is not given. */
const ACTION_STATES: Record<BulkAction, { allowed: JobState[]; default: JobState[] | undefined }> =
  {
    retry: { allowed: ["failed"], default: ["failed"] },
    cancel: { allowed: ["waiting", "delayed", "active"], default: ["waiting", "delayed"] },
    // No default: deleting is never implied.
    delete: {
      allowed: ["waiting", "delayed", "failed", "succeeded", "canceled"],
      default: undefined,
    },
  };

/** One lane's outcome, as `--json` prints it. */
export interface BulkResult {
  lane: string;
  action: BulkAction;
  /** Jobs the filters (or the ids) named. */
  matched: number;
  /** Jobs the action changed (others had moved on: finished, started, gone). */
  changed: number;
}

/** One batch, one adapter call: how many of `ids` the action changed. */
async function act(handle: LaneHandle, action: BulkAction, ids: string[]): Promise<number> {
  if (action === "retry") return handle.retryFailed(ids);
  if (action === "delete") return handle.delete(ids);
  const results = await handle.cancel(ids);
  return results.filter((r) => r === "canceled").length;
}

function checkCapability(session: Session, action: BulkAction, byFilter: boolean): void {
  const adapter = session.tl.adapter;
  const caps = adapter.capabilities;
  const need = { retry: "retryFailed", cancel: "cancel", delete: "delete" } as const;
  if (!caps[need[action]]) throw new UnsupportedError(adapter.name, `${action} (${need[action]})`);
  if (byFilter && !caps.list && action !== "retry") {
    throw new UnsupportedError(adapter.name, "listing jobs (list)", `${action} --all needs it`);
  }
}

/** `jobs retry|cancel|delete`: by ids, or by filters with `--all`. */
export async function bulk(
  ctx: CommandContext,
  action: BulkAction,
  ids: string[],
  options: BulkOptions,
): Promise<void> {
  if (ids.length > 0 && options.all) {
    throw new UsageError("--all", "give job ids or --all, not both");
  }
  if (ids.length === 0 && !options.all) {
    throw new UsageError(
      "<ids...>",
      `name the jobs to ${action}, or pass --all to ${action} every job matching the filters`,
    );
  }
  const byFilter = ids.length === 0;
  const spec = ACTION_STATES[action];
  if (!byFilter) {
    for (const flag of ["state", "task", "limit"] as const) {
      if (options[flag] !== undefined) {
        throw new UsageError(`--${flag}`, "filters go with --all, not with job ids");
      }
    }
  }
  const states = options.state ?? spec.default;
  if (byFilter && states === undefined) {
    throw new UsageError(
      "--state",
      `${action} --all needs --state (one or more of ${spec.allowed.join(", ")})`,
    );
  }
  for (const state of states ?? []) {
    if (!spec.allowed.includes(state)) {
      throw new UsageError(
        "--state",
        `${action} takes jobs that are ${spec.allowed.join(", ")}, not ${state}`,
      );
    }
  }
  const session = await ctx.connect();
  checkCapability(session, action, byFilter);
  if (!byFilter) {
    await bulkByIds(ctx, session, action, ids, options);
    return;
  }
  const handles = session.lanes(options.lane);
  const results = await bulkByFilter(ctx, session, action, handles, states ?? [], options);
  for (const result of results) {
    if (ctx.json) await ctx.out.json(result);
    else {
      await ctx.out.line(
        `${result.lane}: ${PAST[action]} ${result.changed} job${result.changed === 1 ? "" : "s"} (${result.matched} matched)`,
      );
    }
  }
  if (ctx.signal.aborted) {
    throw new InterruptedError(
      `interrupted: stopped after the batch in flight (see the counts above)`,
    );
  }
}

async function bulkByIds(
  ctx: CommandContext,
  session: Session,
  action: BulkAction,
  ids: string[],
  options: BulkOptions,
): Promise<void> {
  if ((options.lane?.length ?? 0) > 1) {
    throw new UsageError("--lane", "job ids belong to one lane: give one --lane");
  }
  if (options.lane === undefined && session.laneNames.length > 1) {
    throw new UsageError(
      "--lane",
      `which lane are the jobs in? (lanes: ${session.laneNames.join(", ")})`,
    );
  }
  const [handle] = session.lanes(options.lane);
  if (handle === undefined) throw new UsageError("--lane", "names no lane");
  const unique = [...new Set(ids)];
  if (action === "cancel") {
    const failed: string[] = [];
    for (let i = 0; i < unique.length; i += options.batchSize) {
      const batch = unique.slice(i, i + options.batchSize);
      const results = await handle.cancel(batch);
      for (const [j, id] of batch.entries()) {
        const result = results[j] ?? "not_found";
        if (result !== "canceled") failed.push(`${id} (${result.replace("_", " ")})`);
        if (ctx.json) await ctx.out.json({ lane: handle.name, id, result });
        else await ctx.out.line(`${id}  ${result}`);
      }
    }
    if (failed.length > 0) {
      throw new CommandFailedError(
        `${failed.length} of ${unique.length} not canceled: ${failed.slice(0, 10).join(", ")}`,
      );
    }
    return;
  }
  let changed = 0;
  for (let i = 0; i < unique.length; i += options.batchSize) {
    changed += await act(handle, action, unique.slice(i, i + options.batchSize));
  }
  const result: BulkResult = { lane: handle.name, action, matched: unique.length, changed };
  if (ctx.json) await ctx.out.json(result);
  else {
    await ctx.out.line(
      `${handle.name}: ${PAST[action]} ${changed} of ${unique.length} job${unique.length === 1 ? "" : "s"}`,
    );
  }
  if (changed < unique.length) {
    const why =
      action === "retry" ? "not failed, or not found" : "active (cancel them first), or not found";
    throw new CommandFailedError(
      `${unique.length - changed} of ${unique.length} jobs were not ${PAST[action]}: ${why} in lane ${handle.name}`,
    );
  }
}

/**
 * Walk each lane's jobs in the given states, and act on the matching ones in batches.
 *
 * Jobs that enter a state after the command started are left alone (by `finishedAt` for
 * finished jobs, `publishedAt` for pending ones, against this machine's clock): a job that
 * a worker fails again while `retry --all` runs is not retried twice, and a lane that keeps
 * receiving jobs cannot keep `cancel --all` going forever. Both adapters' cursors survive
 * the jobs behind them leaving the state, so acting while walking skips nothing.
 */
async function bulkByFilter(
  ctx: CommandContext,
  session: Session,
  action: BulkAction,
  handles: LaneHandle[],
  states: JobState[],
  options: BulkOptions,
): Promise<BulkResult[]> {
  const caps = session.tl.adapter.capabilities;
  if (!caps.list) {
    // SQS: its dead-letter queue cannot be listed, but retryFailed() moves all of it.
    if (options.task !== undefined || options.limit !== undefined) {
      throw new UnsupportedError(
        session.tl.adapter.name,
        "listing jobs (list)",
        "--task and --limit need it; retry --all alone moves every failed job",
      );
    }
    const results: BulkResult[] = [];
    for (const handle of handles) {
      const moved = await handle.retryFailed();
      results.push({ lane: handle.name, action, matched: moved, changed: moved });
    }
    return results;
  }
  const startedAt = Date.now();
  const totals = await Promise.all(
    handles.map(async (h) => {
      const counts = await h.counts();
      return states.reduce((n, state) => n + (counts[state] ?? 0), 0);
    }),
  );
  let total = totals.reduce((a, b) => a + b, 0);
  if (options.limit !== undefined) total = Math.min(total, options.limit);
  const bar =
    options.progress !== false && ctx.err.isTTY === true
      ? new cliProgress.SingleBar(
          {
            format: `${action} {bar} {percentage}% | {value}/{total} jobs | {lane}`,
            stream: ctx.err,
            hideCursor: true,
            etaBuffer: 50,
          },
          cliProgress.Presets.shades_classic,
        )
      : undefined;
  bar?.start(total, 0, { lane: handles[0]?.name ?? "" });
  const results: BulkResult[] = [];
  let matchedAll = 0;
  try {
    scan: for (const handle of handles) {
      const result: BulkResult = { lane: handle.name, action, matched: 0, changed: 0 };
      results.push(result);
      let batch: string[] = [];
      const flush = async () => {
        if (batch.length === 0) return;
        result.changed += await act(handle, action, batch);
        batch = [];
        bar?.update(matchedAll, { lane: handle.name });
      };
      for (const state of states) {
        for await (const job of handle.list(listOptions(state, options))) {
          if (ctx.signal.aborted) {
            // the jobs already taken go out as one last batch: whole, like every other
            await flush();
            break scan;
          }
          if (options.task !== undefined && job.task !== options.task) continue;
          if ((job.finishedAt ?? job.publishedAt) > startedAt) continue;
          batch.push(job.id);
          result.matched++;
          matchedAll++;
          const full = options.limit !== undefined && matchedAll >= options.limit;
          if (batch.length >= options.batchSize || full) await flush();
          if (full) break scan;
        }
        await flush();
      }
    }
  } finally {
    // The filters may match fewer than the states' counts: a finished run ends at 100%.
    if (!ctx.signal.aborted && matchedAll > 0) bar?.setTotal(matchedAll);
    bar?.update(matchedAll);
    bar?.stop();
  }
  return results;
}
