import type { JobLogLine, ReservedJob } from "../adapter.ts";
import type { Clock } from "../clock.ts";
import type { JobTelemetry } from "../instrumentation.ts";
import type { AnyTask } from "../task.ts";
import type { LaneState } from "./lane-state.ts";

/**
 * One reserved job while this worker holds its lease: from reserve until its ack, nack or
 * release has been answered, or until the worker learns the lease is gone.
 *
 * A held job settles exactly once; whichever comes first wins: the handler's result, its
 * time limit, a lost lease (a heartbeat or an ack said "lost"), a cancel (an event or a
 * status "canceled"), or the end of the shutdown grace period. Later outcomes are
 * ignored, and the adapter's fencing refuses a late ack, so a job never completes twice.
 */
export interface HeldJob {
  readonly lane: LaneState;
  readonly job: ReservedJob;
  /** Undefined for a job of a task this worker does not know (it goes dead) or one handed back unseen. */
  readonly task: AnyTask | undefined;
  startedAt: number;
  /** True while its handler runs. */
  running: boolean;
  /** Set once the job's outcome is decided; later outcomes are ignored. */
  settled: boolean;
  /** Set while its ack/nack/release is in flight or waits to be retried (no heartbeats then). */
  finishing: boolean;
  /**
   * Set when a settling call for it failed in the backend (threw): whether that call took
   * effect is unknown, so a "lost" answer to its retry is no proof the lease was lost.
   */
  unsure: boolean;
  /** `ctx.retryAfter`: the release hands it back due at this time. */
  releaseAt?: number;
  /** The last wait before retrying its settling call, ms (0 before the first retry). */
  retryDelayMs: number;
  abortReason: Error | undefined;
  /** Created on the handler's first read of `ctx.signal`. */
  controller: AbortController | undefined;
  /** Ends the handler race early (time limit, lease lost, cancel, shutdown). */
  interrupt: (() => void) | undefined;
  /** The time limit's timer. */
  timer: unknown;
  /** What the client's instrumentation follows of this delivery, from a runner on. */
  telemetry: JobTelemetry | undefined;
  /** The handler's return value, encoded, to store with the ack (adapters with `results`). */
  result: string | undefined;
  /** What the handler reported and the worker has not sent yet (adapters with `reports`). */
  report: ReportBuffer | undefined;
}

/** A held job's unsent report: its latest progress and the log lines since the last send. */
export interface ReportBuffer {
  progress: string | undefined;
  logs: JobLogLine[];
  /** Lines dropped from `logs` (oldest first) to keep it within the lane's logLimit. */
  dropped: number;
  /** True while the job waits for the reporter's next send. */
  queued: boolean;
}

export function createHeldJob(
  lane: LaneState,
  job: ReservedJob,
  task: AnyTask | undefined,
  now: number,
): HeldJob {
  return {
    lane,
    job,
    task,
    startedAt: now,
    running: false,
    settled: false,
    finishing: false,
    unsure: false,
    retryDelayMs: 0,
    abortReason: undefined,
    controller: undefined,
    interrupt: undefined,
    timer: undefined,
    telemetry: undefined,
    result: undefined,
    report: undefined,
  };
}

/** Stop a held job's handler: abort its signal with `reason` and end its race. */
export function abortHeld(h: HeldJob, reason: Error, clock: Clock): void {
  h.abortReason = reason;
  if (h.timer !== undefined) clock.clearTimeout(h.timer as never);
  h.controller?.abort(reason);
  h.interrupt?.();
}
