/**
 * The errors of waiting for a job (`waitFor`, `publishAndWait`) and of a missing
 * dependency. Apart from errors.ts
 * because they carry the adapter contract's JobError, and adapter.ts imports errors.ts.
 */
import type { JobError } from "./adapter.ts";
import { TasklaneError } from "./errors.ts";

/**
 * What `waitFor` rejects with when the job ended without success: `state` "failed" (the
 * dead letter set; `error` is the stored error, with its stack), "canceled" or "expired".
 */
export class JobFailedError extends TasklaneError {
  readonly jobId: string;
  readonly lane: string;
  readonly state: "failed" | "canceled" | "expired";
  readonly error: JobError | undefined;
  constructor(
    jobId: string,
    lane: string,
    state: "failed" | "canceled" | "expired",
    error: JobError | undefined,
  ) {
    super(
      "JOB_FAILED",
      state === "failed"
        ? `Job ${jobId} failed: ${error ? `${error.name}: ${error.message}` : "no error stored"}`
        : `Job ${jobId} ended ${state}`,
    );
    this.jobId = jobId;
    this.lane = lane;
    this.state = state;
    this.error = error;
  }
}

/** No lane of the client holds the job (never published, deleted, or removed by retention). */
export class JobNotFoundError extends TasklaneError {
  readonly jobId: string;
  constructor(jobId: string) {
    super("JOB_NOT_FOUND", `No lane holds job ${jobId}`);
    this.jobId = jobId;
  }
}

/**
 * A publish's `dependsOn` (or a flow's) names a job its lane does not hold (never
 * published, deleted, or removed by retention): nothing was written.
 */
export class DependencyNotFoundError extends TasklaneError {
  readonly jobId: string;
  /** The dependency's lane (config name). */
  readonly lane: string;
  constructor(jobId: string, lane: string) {
    super(
      "DEPENDENCY_NOT_FOUND",
      `Dependency ${jobId} not found in lane "${lane}": nothing was written`,
    );
    this.jobId = jobId;
    this.lane = lane;
  }
}

/** `waitFor`'s `timeoutMs` passed before the job finished (the job itself goes on). */
export class WaitTimeoutError extends TasklaneError {
  readonly jobId: string;
  readonly timeoutMs: number;
  constructor(jobId: string, timeoutMs: number) {
    super("WAIT_TIMEOUT", `Job ${jobId} did not finish within ${timeoutMs} ms`);
    this.jobId = jobId;
    this.timeoutMs = timeoutMs;
  }
}
