import { EventEmitter } from "eventemitter3";
import type { JobError } from "./adapter.ts";

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
  published: JobRef & { status: "created" | "duplicate" };
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
  /** Every lane the worker serves is empty and nothing is running. */
  drained: { lanes: string[] };
  /** An infrastructure error the worker survived (it backs off and goes on). */
  error: { error: unknown; during: string; lane?: string };
}

/** Typed event bus (eventemitter3). */
export class TasklaneEventBus extends EventEmitter<{
  [K in keyof TasklaneEvents]: (event: TasklaneEvents[K]) => void;
}> {}
