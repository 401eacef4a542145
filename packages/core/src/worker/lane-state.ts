import type { LaneStore } from "../adapter.ts";
import type { Fifo } from "../fifo.ts";
import type { LaneConfig } from "../lane-config.ts";
import type { Lane } from "../selectors/selector.ts";
import type { HeldJob } from "./held-job.ts";

/** What a worker keeps per lane it serves. */
export interface LaneState {
  /** The lane as the selector sees it. */
  readonly lane: Lane;
  readonly config: LaneConfig;
  /** The backend's handle of the lane. */
  readonly store: LaneStore;
  /**
   * The lane's ready count as last learned from a reserve or probe, and when: trusted
   * for `hintTtlMs`, so selectors skip lanes known empty without asking the backend.
   */
  hint: number | undefined;
  hintAt: number;
  /**
   * When a job of this lane may become takeable although the lane was found empty: a
   * delayed job or retry falling due, a lease running out (from the backend's reserve
   * reply, `ReserveResult.nextDueAt`, or a retry this worker scheduled). From then on the
   * lane counts as holding a job until a reserve or probe says otherwise, and a long poll
   * on another lane ends.
   */
  nextDueAt: number | undefined;
  /**
   * Publishes to this lane from this process so far. A reserve's or probe's answer that a
   * publish overtook (the count moved while it was in flight) may predate the new job: it
   * does not set the lane's hint to empty.
   */
  localPublishes: number;
  /** This lane's held jobs by id (for events that name a job). */
  readonly held: Map<string, HeldJob>;
  /** Where this lane's dispatched jobs wait for a runner: its priority's line. */
  readonly waiting: Fifo<HeldJob>;
}

/**
 * The lane's ready count if learned within `ttlMs` of `now`; undefined when unknown. A
 * lane known empty counts as holding one job once something of it has fallen due
 * (`nextDueAt`): a selector then serves it without a probe (a probe may not see it yet: SQS
 * counts are approximate and lag), and the reserve tells.
 */
export function freshHint(ls: LaneState, now: number, ttlMs: number): number | undefined {
  if (ls.nextDueAt !== undefined && now >= ls.nextDueAt && ls.hint === 0) return 1;
  if (ls.hint === undefined || now - ls.hintAt > ttlMs) return undefined;
  return ls.hint;
}

/**
 * What a reserve at `now` taught about the lane: its ready count and, when it has none,
 * when a job may become takeable (undefined: not told). A due time that has passed is
 * answered by this very look (it would have taken the job), so it is forgotten.
 */
export function setHint(
  ls: LaneState,
  n: number | undefined,
  now: number,
  nextDueAt?: number,
): void {
  ls.hint = n;
  ls.hintAt = now;
  if (nextDueAt !== undefined) ls.nextDueAt = nextDueAt;
  else if (ls.nextDueAt !== undefined && ls.nextDueAt <= now) ls.nextDueAt = undefined;
}

/**
 * The lane's ready count as a probe at `now` counted it (undefined: unknown, after a
 * publish). It never forgets a due time: a probe may not count a job that has fallen due
 * (SQS counts are approximate and lag; fauxqs leaves a delayed message out until a
 * receive), and one sent before the due time may answer after it. Only a reserve does.
 */
export function setCount(ls: LaneState, n: number | undefined, now: number): void {
  ls.hint = n;
  ls.hintAt = now;
}
