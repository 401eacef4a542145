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
  /** This lane's held jobs by id (for events that name a job). */
  readonly held: Map<string, HeldJob>;
  /** Where this lane's dispatched jobs wait for a runner: its priority's line. */
  readonly waiting: Fifo<HeldJob>;
}

/** The lane's ready count if learned within `ttlMs` of `now`; undefined when unknown. */
export function freshHint(ls: LaneState, now: number, ttlMs: number): number | undefined {
  return ls.hint !== undefined && now - ls.hintAt <= ttlMs ? ls.hint : undefined;
}

export function setHint(ls: LaneState, n: number | undefined, now: number): void {
  ls.hint = n;
  ls.hintAt = now;
}
