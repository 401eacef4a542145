/**
 * `tasklane jobs list|get|retry|cancel|delete|promote|priority|move`.
 *
 * Lists stream from the lane's `list()` cursor and are printed as they come, so memory
 * stays constant however many jobs match. Where the adapter can search (capability
 * `search`) the filters go to it; otherwise it lists one state at a time and `--task` is
 * checked here. Bulk operations (`--all`) walk the same cursor and act in bounded
 * batches (`--batch-size`): each batch is one adapter call, atomic on Redis, so an
 * interrupted run has done whole batches and nothing else.
 */
import {
  type JobInfo,
  type JobState,
  type JobSummary,
  type LaneHandle,
  type ListFilter,
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
  /** Only jobs of this task: searched by the adapter where it can, else checked here. */
  task?: string;
  /** Only jobs with this tag (capabilities search and tags). */
  tag?: string;
  /** Only jobs whose last error has this name: a failure group (capability search). */
  errorName?: string;
  /** Only jobs that entered their state at or after this epoch ms (capability search). */
  since?: number;
  /** Only jobs that entered their state before this epoch ms (capability search). */
  until?: number;
  /** Stop after this many matching jobs. */
  limit?: number;
  /** Jobs the adapter fetches per round trip. */
  pageSize?: number;
}

/** Whether the adapter searches by every filter (else it lists a state, and --task is ours). */
function searches(session: Session): boolean {
  return session.tl.adapter.capabilities.search === true;
}

/** Exit 3 naming the capability a filter needs, before anything is read. */
function checkFilters(session: Session, filters: JobFilters): void {
  const adapter = session.tl.adapter;
  if (filters.tag !== undefined && !adapter.capabilities.tags) {
    throw new UnsupportedError(adapter.name, "tags (capability tags)", "--tag needs it");
  }
  const needSearch = (["errorName", "since", "until", "tag"] as const).filter(
    (f) => filters[f] !== undefined,
  );
  if (needSearch.length > 0 && !searches(session)) {
    const flags = needSearch.map((f) => `--${f === "errorName" ? "error-name" : f}`);
    throw new UnsupportedError(
      adapter.name,
      "searching jobs (capability search)",
      `${flags.join(", ")} need${flags.length === 1 ? "s" : ""} it; --task is checked by the CLI`,
    );
  }
}

/**
 * The lane's list filter for one state: with `search`, every condition and the fields
 * wanted go to the adapter; without, the state alone (the adapter's `list`).
 */
function listFilter(
  session: Session,
  state: JobState,
  filters: JobFilters,
  fields: "full" | "summary",
): ListFilter {
  const filter: ListFilter = { state };
  if (filters.pageSize !== undefined) filter.pageSize = filters.pageSize;
  if (!searches(session)) return filter;
  if (fields === "summary") filter.fields = "summary";
  if (filters.task !== undefined) filter.task = filters.task;
  if (filters.tag !== undefined) filter.tag = filters.tag;
  if (filters.errorName !== undefined) filter.errorName = filters.errorName;
  if (filters.since !== undefined) filter.since = filters.since;
  if (filters.until !== undefined) filter.until = filters.until;
  return filter;
}

/** Whether a listed job passes what the adapter did not check (--task without search). */
function passes(session: Session, job: JobSummary, filters: JobFilters): boolean {
  return searches(session) || filters.task === undefined || job.task === filters.task;
}

function requireCapability(session: Session, capability: "list" | "get", what: string): void {
  const adapter = session.tl.adapter;
  if (!adapter.capabilities[capability]) {
    throw new UnsupportedError(adapter.name, what);
  }
}

/** A job as the CLI prints it: the adapter's JobInfo, `lane` as the config name. */
function jobRecord<J extends JobSummary>(handle: LaneHandle, job: J): J {
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
  if (!searches(session)) requireCapability(session, "list", "listing jobs (list)");
  checkFilters(session, filters);
  const states = filters.state ?? JOB_STATES;
  // The table shows a summary's columns: the adapter need not send payloads and history.
  const fields = ctx.json ? "full" : "summary";
  let shown = 0;
  let header = false;
  scan: for (const handle of handles) {
    for (const state of states) {
      for await (const job of handle.list(listFilter(session, state, filters, fields))) {
        if (!passes(session, job, filters)) continue;
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
  if (job.tags !== undefined) lines.push(`${label("tags")}${job.tags.join(", ")}`);
  if (job.expiresAt !== undefined) {
    lines.push(`${label("expires")}${formatTime(job.expiresAt)} (unless it has started)`);
  }
  if (job.group !== undefined) lines.push(`${label("group")}${job.group}`);
  (job.dependencies ?? []).forEach((d, i) => {
    const ended = d.state === undefined ? "not ended" : d.state;
    lines.push(
      `${i === 0 ? label("waits for") : indent}${d.lane}:${d.id}  ${d.task ?? "?"}  ${ended}  (on failure: ${d.onFailure})`,
    );
  });
  (job.dependents ?? []).forEach((d, i) => {
    lines.push(`${i === 0 ? label("waited by") : indent}${d.lane}:${d.jobId}`);
  });
  if (job.result !== undefined) lines.push(`${label("result")}${job.result}`);
  if (job.progress !== undefined) lines.push(`${label("progress")}${progressLine(job.progress)}`);
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
  if (job.logsDropped !== undefined && job.logsDropped > 0) {
    lines.push(`${label("logs")}(${job.logsDropped} older lines dropped)`);
  }
  (job.logs ?? []).forEach((line, i) => {
    const first = i === 0 && !(job.logsDropped !== undefined && job.logsDropped > 0);
    lines.push(
      `${first ? label("logs") : indent}${formatTime(line.at)}  #${line.attempt}  ${oneLine(line.message, 1_000)}`,
    );
  });
  return lines.join("\n");
}

/**
 * A job's progress as stored (JSON text), with a bar when it reads as one: a number (a
 * percentage, 0-100) or `{ done, total }`.
 */
export function progressLine(progress: string): string {
  let value: unknown;
  try {
    value = JSON.parse(progress);
  } catch {
    return progress;
  }
  const fraction = progressFraction(value);
  if (fraction === undefined) return progress;
  const width = 20;
  const filled = Math.round(fraction * width);
  return `[${"#".repeat(filled)}${"-".repeat(width - filled)}] ${Math.round(fraction * 100)}%  ${progress}`;
}

/** A progress value as a fraction 0..1: a number is a percentage, `{ done, total }` a ratio. */
export function progressFraction(value: unknown): number | undefined {
  if (typeof value === "number" && Number.isFinite(value)) {
    return Math.min(1, Math.max(0, value / 100));
  }
  if (typeof value === "object" && value !== null) {
    const { done, total } = value as { done?: unknown; total?: unknown };
    if (typeof done === "number" && typeof total === "number" && total > 0) {
      return Math.min(1, Math.max(0, done / total));
    }
  }
  return undefined;
}

// ── retry, cancel, delete, promote, priority, move ──────────────────────────────────────

export type BulkAction = "retry" | "cancel" | "delete" | "promote" | "priority" | "move";

export interface BulkOptions extends JobFilters {
  /** Every job matching the filters (instead of ids). */
  all?: boolean;
  /** Jobs per adapter call. */
  batchSize: number;
  /** Draw a progress bar on stderr when it is a terminal. Default true. */
  progress?: boolean;
  /** `priority`: the new priority. */
  priority?: number;
  /** `move`: the lane to move the jobs to. */
  to?: string;
}

const PAST: Record<BulkAction, string> = {
  retry: "retried",
  cancel: "canceled",
  delete: "deleted",
  promote: "promoted",
  priority: "prioritized",
  move: "moved",
};

/** Which states each action takes jobs from, and the default when `--state` is not given. */
const ACTION_STATES: Record<BulkAction, { allowed: JobState[]; default: JobState[] | undefined }> =
  {
    retry: { allowed: ["failed"], default: ["failed"] },
    cancel: {
      allowed: ["waiting", "delayed", "blocked", "active"],
      default: ["waiting", "delayed"],
    },
    // No default: deleting is never implied.
    delete: {
      allowed: ["waiting", "delayed", "blocked", "failed", "succeeded", "canceled", "expired"],
      default: undefined,
    },
    promote: { allowed: ["delayed"], default: ["delayed"] },
    priority: { allowed: ["waiting", "delayed"], default: ["waiting", "delayed"] },
    // No default either: which jobs leave the lane is for the caller to say.
    move: { allowed: ["waiting", "delayed", "active", "failed"], default: undefined },
  };

/** The capability each action needs. */
const NEEDS = {
  retry: "retryFailed",
  cancel: "cancel",
  delete: "delete",
  promote: "promote",
  priority: "changePriority",
  move: "move",
} as const satisfies Record<BulkAction, string>;

/** One lane's outcome, as `--json` prints it. */
export interface BulkResult {
  lane: string;
  action: BulkAction;
  /** Jobs the filters (or the ids) named. */
  matched: number;
  /** Jobs the action changed (others had moved on: finished, started, gone). */
  changed: number;
}

/**
 * One batch, one adapter call: each id's result, as printed for ids (`ok` results read as
 * the action's past tense), and whether it changed the job.
 */
async function act(
  handle: LaneHandle,
  action: BulkAction,
  ids: string[],
  options: BulkOptions,
): Promise<Array<{ result: string; changed: boolean }>> {
  const each = (results: readonly string[], done: string) =>
    results.map((r) => ({ result: r === "ok" ? PAST[action] : r, changed: r === done }));
  switch (action) {
    case "retry":
    case "delete": {
      // Counts only: which ids changed is not told, so every id reads as the count says.
      const n = action === "retry" ? await handle.retryFailed(ids) : await handle.delete(ids);
      return ids.map((_, i) => ({ result: i < n ? PAST[action] : "unchanged", changed: i < n }));
    }
    case "cancel":
      return each(await handle.cancel(ids), "canceled");
    case "promote":
      return each(await handle.promote(ids), "ok");
    case "priority":
      return each(await handle.setPriority(ids, options.priority as number), "ok");
    case "move":
      return each(await handle.move(ids, options.to as string), "moved");
  }
}

function checkCapability(session: Session, action: BulkAction, byFilter: boolean): void {
  const adapter = session.tl.adapter;
  const caps = adapter.capabilities;
  if (!caps[NEEDS[action]]) {
    throw new UnsupportedError(adapter.name, `${action} (${NEEDS[action]})`);
  }
  if (byFilter && !caps.list && !caps.search && action !== "retry") {
    throw new UnsupportedError(adapter.name, "listing jobs (list)", `${action} --all needs it`);
  }
}

/** `jobs retry|cancel|delete|promote|priority|move`: by ids, or by filters with `--all`. */
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
    for (const flag of ["state", "task", "tag", "errorName", "since", "until", "limit"] as const) {
      if (options[flag] !== undefined) {
        const name = flag === "errorName" ? "error-name" : flag;
        throw new UsageError(`--${name}`, "filters go with --all, not with job ids");
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
  if (action === "move") {
    const to = options.to as string;
    session.lanes([to], "--to");
    const from = session.lanes(options.lane);
    if (from.some((h) => h.name === to) && (byFilter || from.length === 1)) {
      throw new UsageError("--to", `the jobs are in lane ${to} already: name another lane`);
    }
  }
  checkCapability(session, action, byFilter);
  if (byFilter) checkFilters(session, options);
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

/** Actions whose adapter call tells each id's result: the CLI prints one line per id. */
const PER_ID = new Set<BulkAction>(["cancel", "promote", "priority", "move"]);

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
  if (PER_ID.has(action)) {
    const failed: string[] = [];
    for (let i = 0; i < unique.length; i += options.batchSize) {
      const batch = unique.slice(i, i + options.batchSize);
      const results = await act(handle, action, batch, options);
      for (const [j, id] of batch.entries()) {
        const { result, changed } = results[j] ?? { result: "not_found", changed: false };
        if (!changed) failed.push(`${id} (${result.replace("_", " ")})`);
        if (ctx.json) await ctx.out.json({ lane: handle.name, id, result });
        else await ctx.out.line(`${id}  ${result}`);
      }
    }
    if (failed.length > 0) {
      throw new CommandFailedError(
        `${failed.length} of ${unique.length} not ${PAST[action]}: ${failed.slice(0, 10).join(", ")}`,
      );
    }
    return;
  }
  let changed = 0;
  for (let i = 0; i < unique.length; i += options.batchSize) {
    const results = await act(handle, action, unique.slice(i, i + options.batchSize), options);
    changed += results.filter((r) => r.changed).length;
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
 * receiving jobs cannot keep `cancel --all` going forever. The lanes' cursors survive the
 * jobs behind them leaving the state (and, where the adapter searches, list a job that
 * stays in its state once: a priority change walks each job once), so acting while
 * walking skips nothing.
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
  if (!caps.list && !caps.search) {
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
      if (searches(session)) {
        const counted = await Promise.all(
          states.map((state) => {
            const {
              fields: _,
              pageSize: __,
              ...filter
            } = listFilter(session, state, options, "full");
            return h.count(filter);
          }),
        );
        return counted.reduce((a, b) => a + b, 0);
      }
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
        const done = await act(handle, action, batch, options);
        result.changed += done.filter((r) => r.changed).length;
        batch = [];
        bar?.update(matchedAll, { lane: handle.name });
      };
      for (const state of states) {
        for await (const job of handle.list(listFilter(session, state, options, "summary"))) {
          if (ctx.signal.aborted) {
            // the jobs already taken go out as one last batch: whole, like every other
            await flush();
            break scan;
          }
          if (!passes(session, job, options)) continue;
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
