/**
 * Every error tasklane throws extends {@link TasklaneError} and carries a stable string
 * `code`, so callers can branch on `err.code` without `instanceof` across package copies.
 *
 * Expected races (a lease lost, a job canceled) are *return values* of adapter calls, not
 * exceptions. The lease errors below exist to abort a running handler's `ctx.signal`
 * with a meaningful `reason`.
 */
export type ErrorCode =
  | "CONFIG"
  | "VALIDATION"
  | "PAYLOAD_TOO_LARGE"
  | "UNSUPPORTED"
  | "CLOSED"
  | "LANE_FULL"
  | "LOCK_LOST"
  | "CANCELED"
  | "TIMEOUT"
  | "UNRECOVERABLE"
  | "SHUTDOWN"
  | "RETRY_AFTER"
  | "ADAPTER"
  | "UNKNOWN_TASK"
  | "RESULT_TOO_LARGE"
  | "JOB_FAILED"
  | "JOB_NOT_FOUND"
  | "WAIT_TIMEOUT"
  | "MOVED"
  | "DEPENDENCY_NOT_FOUND";

export class TasklaneError extends Error {
  readonly code: ErrorCode;
  constructor(code: ErrorCode, message: string, options?: ErrorOptions) {
    super(message, options);
    this.code = code;
    this.name = new.target.name;
  }
}

/** Invalid configuration. `field` is the dotted path of the offending option. */
export class ConfigError extends TasklaneError {
  readonly field: string;
  readonly value: unknown;
  constructor(field: string, value: unknown, problem: string) {
    super("CONFIG", `Invalid option ${field} = ${safeInspect(value)}: ${problem}`);
    this.field = field;
    this.value = value;
  }
}

/** One issue reported by a schema validator. */
export interface ValidationIssue {
  message: string;
  path: ReadonlyArray<PropertyKey>;
}

/**
 * A payload failed its task's schema (at publish, or when a worker decodes it), or a
 * handler's return value failed the task's `result` schema or could not be encoded as JSON
 * (`subject` "Result"), or a value given to `ctx.progress` could not (`subject` "Progress").
 */
export class ValidationError extends TasklaneError {
  readonly task: string;
  readonly issues: ReadonlyArray<ValidationIssue>;
  constructor(
    task: string,
    issues: ReadonlyArray<ValidationIssue>,
    subject: "Payload" | "Result" | "Progress" = "Payload",
  ) {
    const detail = issues
      .slice(0, 5)
      .map((i) => `${i.path.length > 0 ? i.path.map(String).join(".") : "(root)"}: ${i.message}`)
      .join("; ");
    super("VALIDATION", `${subject} for task "${task}" failed its schema: ${detail}`);
    this.task = task;
    this.issues = issues;
  }
}

/** The encoded payload (or the whole message, for a backend limit) is over the limit. */
export class PayloadTooLargeError extends TasklaneError {
  readonly sizeBytes: number;
  readonly limitBytes: number;
  constructor(what: string, sizeBytes: number, limitBytes: number) {
    super(
      "PAYLOAD_TOO_LARGE",
      `${what} is ${sizeBytes} bytes encoded, over the limit of ${limitBytes} bytes`,
    );
    this.sizeBytes = sizeBytes;
    this.limitBytes = limitBytes;
  }
}

/** The adapter does not support a feature or a value (a delay longer than it can hold…). */
export class UnsupportedError extends TasklaneError {
  readonly adapter: string;
  readonly feature: string;
  constructor(adapter: string, feature: string, detail?: string) {
    super(
      "UNSUPPORTED",
      `The ${adapter} adapter does not support ${feature}${detail ? `: ${detail}` : ""}`,
    );
    this.adapter = adapter;
    this.feature = feature;
  }
}

/** A call on a lane, adapter, client or worker that was already closed. */
export class ClosedError extends TasklaneError {
  constructor(what: string) {
    super("CLOSED", `${what} is closed`);
  }
}

/** A bounded lane is full (memory adapter `maxJobs`). Nothing of the batch was written. */
export class LaneFullError extends TasklaneError {
  readonly limit: number;
  constructor(lane: string, limit: number) {
    super("LANE_FULL", `Lane "${lane}" holds its maximum of ${limit} jobs`);
    this.limit = limit;
  }
}

/** The job's lease expired or was taken over: another worker may be running it now. */
export class LockLostError extends TasklaneError {
  readonly jobId: string;
  constructor(jobId: string) {
    super("LOCK_LOST", `Lost the lease on job ${jobId}`);
    this.jobId = jobId;
  }
}

/** The job was canceled while it ran. */
export class CanceledError extends TasklaneError {
  readonly jobId: string;
  constructor(jobId: string) {
    super("CANCELED", `Job ${jobId} was canceled`);
    this.jobId = jobId;
  }
}

/** The job ran past its task's `timeLimitMs`. Counts as a failure (retried if attempts remain). */
export class TimeoutError extends TasklaneError {
  readonly timeLimitMs: number;
  constructor(task: string, timeLimitMs: number) {
    super("TIMEOUT", `Task "${task}" exceeded its time limit of ${timeLimitMs} ms`);
    this.timeLimitMs = timeLimitMs;
  }
}

/** Throw from a handler to fail the job at once, without retries. */
export class UnrecoverableError extends TasklaneError {
  constructor(message: string, options?: ErrorOptions) {
    super("UNRECOVERABLE", message, options);
  }
}

/**
 * What `ctx.retryAfter(ms)` returns for the handler to throw: the job is handed back,
 * due again at `runAt`, and the attempt is not spent (a 429 from an API it calls).
 */
export class RetryAfterError extends TasklaneError {
  readonly runAt: number;
  constructor(runAt: number, delayMs: number) {
    super("RETRY_AFTER", `Retry after ${delayMs} ms (the attempt is not spent)`);
    this.runAt = runAt;
  }
}

/** The worker is stopping and its grace period ran out; the job is handed back. */
export class ShutdownError extends TasklaneError {
  constructor() {
    super("SHUTDOWN", "The worker is shutting down");
  }
}

/** An infrastructure failure in the backend (connection, protocol, unexpected reply). */
export class AdapterError extends TasklaneError {
  readonly adapter: string;
  constructor(adapter: string, message: string, options?: ErrorOptions) {
    super("ADAPTER", `[${adapter}] ${message}`, options);
    this.adapter = adapter;
  }
}

/** A job names a task this client or worker does not know. */
export class UnknownTaskError extends TasklaneError {
  readonly task: string;
  constructor(task: string) {
    super("UNKNOWN_TASK", `Unknown task "${task}"`);
    this.task = task;
  }
}

/**
 * A handler's return value is over the client's `maxResultBytes` once encoded. The
 * attempt fails as unrecoverable: the job goes dead with reason "invalid_result".
 */
export class ResultTooLargeError extends TasklaneError {
  readonly sizeBytes: number;
  readonly limitBytes: number;
  constructor(task: string, sizeBytes: number, limitBytes: number) {
    super(
      "RESULT_TOO_LARGE",
      `Result of task "${task}" is ${sizeBytes} bytes encoded, over the limit of ${limitBytes} bytes`,
    );
    this.sizeBytes = sizeBytes;
    this.limitBytes = limitBytes;
  }
}

/** The job was moved to another lane while it ran (the `put` event): another worker runs it there. */
export class MovedError extends TasklaneError {
  readonly jobId: string;
  constructor(jobId: string) {
    super("MOVED", `Job ${jobId} was moved to another lane`);
    this.jobId = jobId;
  }
}

function safeInspect(value: unknown): string {
  try {
    const s = typeof value === "string" ? JSON.stringify(value) : String(JSON.stringify(value));
    return s.length > 80 ? `${s.slice(0, 77)}...` : s;
  } catch {
    return String(value);
  }
}
