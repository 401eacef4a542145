/**
 * Counts kept as plain numbers and read by observable counters at collection time: a job
 * costs a property increment per counter, not a call into the metrics SDK (which hashes
 * the attributes of every measurement). One tally per (lane, task), its attribute sets
 * built once.
 */
import type { Attributes } from "@opentelemetry/api";
import type { FailReason } from "@tasklane/core";
import { ATTR_FAIL_REASON, ATTR_LANE, ATTR_OUTCOME, ATTR_TASK, type Outcome } from "./names.ts";

export class Tally {
  readonly lane: string;
  readonly task: string;
  /** `{ tasklane.lane, tasklane.task }`. */
  readonly attributes: Attributes;
  /** The name of the lane's process spans, `process <lane>`, made once. */
  readonly processSpanName: string;
  created = 0;
  duplicate = 0;
  started = 0;
  succeeded = 0;
  retried = 0;
  stalled = 0;
  lockLost = 0;
  canceled = 0;
  /** Failed attempts (retried or dead), by reason. */
  readonly failed = new Map<FailReason, number>();
  /** Jobs gone to the dead letter set, by reason. */
  readonly dead = new Map<FailReason, number>();
  readonly #byOutcome = new Map<string, Attributes>();
  readonly #byReason = new Map<string, Attributes>();

  constructor(lane: string, task: string) {
    this.lane = lane;
    this.task = task;
    this.attributes = { [ATTR_LANE]: lane, [ATTR_TASK]: task };
    this.processSpanName = `process ${lane}`;
  }

  /** The tally's attributes and an outcome (built once per outcome). */
  withOutcome(outcome: Outcome | "created" | "duplicate"): Attributes {
    let a = this.#byOutcome.get(outcome);
    if (a === undefined) {
      a = { ...this.attributes, [ATTR_OUTCOME]: outcome };
      this.#byOutcome.set(outcome, a);
    }
    return a;
  }

  /** The tally's attributes and a fail reason (built once per reason). */
  withReason(reason: FailReason): Attributes {
    let a = this.#byReason.get(reason);
    if (a === undefined) {
      a = { ...this.attributes, [ATTR_FAIL_REASON]: reason };
      this.#byReason.set(reason, a);
    }
    return a;
  }
}

/** Tallies by lane and task. */
export class Tallies {
  readonly #byLane = new Map<string, Map<string, Tally>>();

  of(lane: string, task: string): Tally {
    let tasks = this.#byLane.get(lane);
    if (tasks === undefined) {
      tasks = new Map();
      this.#byLane.set(lane, tasks);
    }
    let t = tasks.get(task);
    if (t === undefined) {
      t = new Tally(lane, task);
      tasks.set(task, t);
    }
    return t;
  }

  *[Symbol.iterator](): IterableIterator<Tally> {
    for (const tasks of this.#byLane.values()) yield* tasks.values();
  }
}

export function bump(counts: Map<FailReason, number>, reason: FailReason): void {
  counts.set(reason, (counts.get(reason) ?? 0) + 1);
}
