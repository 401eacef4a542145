import { EventEmitter } from "eventemitter3";
import type { JobError } from "./adapter.ts";

/** The adapter call that settles a held job. */
export type SettleCall = "ack" | "nack" | "release";

interface JobRef {
  lane: string;
  jobId: string;
  task: string;
}

/**
 * Every event tasklane emits, with its payload. Names are snake_case, one payload object
 * each. `lock_lost`, `canceled` and `put` are the three that stop a running job.
 */
export interface TasklaneEvents {
  /** A job was stored (or found to be a duplicate). */
  published: JobRef & { status: "created" | "duplicate" | "debounced" };
  /** A handler started. */
  started: JobRef & { attempt: number };
  /** A handler reported progress or a log line. */
  progress: JobRef & { value: unknown };
  /** A job finished and its ack was accepted. */
  succeeded: JobRef & { attempt: number; runMs: number };
  /** An attempt failed and the job was scheduled again. */
  retrying: JobRef & { attempt: number; error: JobError; runAt: number };
  /** A job went to the dead letter set. */
  failed: JobRef & { attempt: number; error: JobError };
  /** The worker lost a job's lease; its handler's signal was aborted. */
  lock_lost: JobRef;
  /** A running job was canceled; its handler's signal was aborted. */
  canceled: JobRef;
  /** A running job was moved or replaced elsewhere; its handler's signal was aborted. */
  put: JobRef;
  /** The worker's own lease expired before a heartbeat could renew it (event-loop stall). */
  stalled: JobRef;
  /**
   * A job's ack, nack or release failed in the backend (it threw: whether it took effect
   * is unknown), and retrying it inside the job's lease did not settle the question.
   * `detail`: "lost_on_retry", a retry found the lease no longer held, most likely because
   * the failed call did take effect (the lease may also have run out meanwhile);
   * "lease_expired", the lease ran out before a retry got through; "stopped", the worker's
   * stop grace period ended, or the adapter closed, first. When the call had not taken
   * effect, the backend delivers the job again once the lease has run out (at least once).
   * Never a `lock_lost`: the handler had already finished.
   */
  unconfirmed: JobRef & {
    attempt: number;
    call: SettleCall;
    detail: "lost_on_retry" | "lease_expired" | "stopped";
  };
  /** Every lane the worker serves is empty and nothing is running. */
  drained: { lanes: string[] };
  /** An infrastructure error the worker survived (it backs off and goes on). */
  error: { error: unknown; during: string; lane?: string };
}

/** Typed event bus (eventemitter3). */
export class TasklaneEventBus extends EventEmitter<{
  [K in keyof TasklaneEvents]: (event: TasklaneEvents[K]) => void;
}> {}
