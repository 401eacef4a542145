import {
  ConfigError,
  JOB_STATES,
  type JobFilter,
  type JobState,
  type JobSummary,
} from "@tasklane/core/adapter";
import type { JobExtra } from "./extras.ts";
import type { JobRecord, ListNode } from "./job-record.ts";
import type { StateList } from "./state-list.ts";

/** When the job entered its current state. */
export function changedAtOf(rec: JobRecord): number {
  switch (rec.state) {
    case "waiting":
      // When it became due: its put, its runAt, the end of a stalled lease, a release…
      return rec.dueAt;
    case "delayed":
    case "blocked":
      return rec.reservedAt;
    case "active":
      return rec.reservedAt;
    default:
      return rec.finishedAt ?? rec.dueAt;
  }
}

/** Whether a job (in one of the filter's states) meets the filter's other conditions. */
export function matches(rec: JobRecord, filter: JobFilter, extra: JobExtra | undefined): boolean {
  if (filter.task !== undefined && rec.task !== filter.task) return false;
  if (filter.tag !== undefined && !(extra?.tags?.includes(filter.tag) ?? false)) return false;
  if (filter.errorName !== undefined && rec.error?.name !== filter.errorName) return false;
  if (filter.since !== undefined || filter.until !== undefined) {
    const at = changedAtOf(rec);
    if (filter.since !== undefined && at < filter.since) return false;
    if (filter.until !== undefined && at >= filter.until) return false;
  }
  return true;
}

/** The states a filter visits, in listing order; ConfigError for a state that is none. */
export function statesOf(filter: JobFilter): readonly JobState[] {
  if (typeof filter !== "object" || filter === null) {
    throw new ConfigError("filter", filter, "must be an object");
  }
  if (filter.state === undefined) return JOB_STATES;
  if (!JOB_STATES.includes(filter.state)) {
    throw new ConfigError("filter.state", filter.state, `must be one of ${JOB_STATES.join(", ")}`);
  }
  return [filter.state];
}

/**
 * Where a listing stands: the state it is in (index into statesOf), the entrySeq of the
 * last job it passed in that state's list, the entrySeq bound it began with (jobs entering
 * a state later have a higher one and are not listed), and the handle of a cursor node
 * parked at that place, if it still is (ParkedCursors).
 */
export interface ListPosition {
  state: number;
  after: number;
  bound: number;
  handle: number;
}

export function encodeCursor(p: ListPosition): string {
  return `m1.${p.state}.${p.after}.${p.bound}.${p.handle}`;
}

export function decodeCursor(cursor: string): ListPosition {
  const parts = typeof cursor === "string" ? cursor.split(".") : [];
  const nums = parts.slice(1).map(Number);
  if (
    parts[0] !== "m1" ||
    nums.length !== 4 ||
    !nums.every((n) => Number.isSafeInteger(n) && n >= 0)
  ) {
    throw new ConfigError("cursor", cursor, "is not a cursor of this lane's listPage");
  }
  const [state, after, bound, handle] = nums as [number, number, number, number];
  return { state, after, bound, handle };
}

/** The cursor nodes parked in state lists between pages, by handle; at most MAX_PARKED. */
const MAX_PARKED = 1_000;

export interface Parked {
  list: StateList;
  node: ListNode;
  /**
   * The entrySeq of the last job before the node: the `after` of the cursor that parked or
   * last moved it. A cursor passed again once its listing went on (a retry, a page seen
   * twice) has an older `after`: the node is past its place, so it finds it by entrySeq.
   */
  after: number;
}

/**
 * Listings in progress keep a cursor node parked in the list they are in, so the next
 * page starts where the last ended in O(1), however the list changed around it. Handles
 * are bounded: the oldest are taken out past MAX_PARKED (a listing that lost its node
 * finds its place again by entrySeq, in O(n)).
 */
export class ParkedCursors {
  private readonly byHandle = new Map<number, Parked>();
  private next = 1;

  get(handle: number, list: StateList): Parked | undefined {
    const p = this.byHandle.get(handle);
    return p !== undefined && p.list === list ? p : undefined;
  }

  park(list: StateList, node: ListNode, after: number): number {
    if (this.byHandle.size >= MAX_PARKED) {
      const [oldest] = this.byHandle.keys();
      if (oldest !== undefined) this.release(oldest);
    }
    const handle = this.next++;
    this.byHandle.set(handle, { list, node, after });
    return handle;
  }

  release(handle: number): void {
    const p = this.byHandle.get(handle);
    if (p === undefined) return;
    this.byHandle.delete(handle);
    p.list.removeCursor(p.node);
  }
}

/** A job without its bulky parts (fields "summary"). */
export function summaryOf(rec: JobRecord, lane: string, extra: JobExtra | undefined): JobSummary {
  const s: JobSummary = {
    id: rec.id,
    lane,
    task: rec.task,
    priority: rec.priority,
    state: rec.state,
    attempt: rec.attempt,
    publishedAt: rec.publishedAt,
    runAt: rec.dueAt,
    changedAt: changedAtOf(rec),
  };
  if (rec.finishedAt !== undefined) s.finishedAt = rec.finishedAt;
  if (rec.error !== undefined) {
    s.error = { name: rec.error.name, message: rec.error.message, reason: rec.error.reason };
  }
  if (extra?.tags !== undefined) s.tags = [...extra.tags];
  if (rec.group !== undefined) s.group = rec.group;
  if (extra?.expiresAt !== undefined) s.expiresAt = extra.expiresAt;
  return s;
}
