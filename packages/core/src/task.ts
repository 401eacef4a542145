import type { StandardSchemaV1 } from "@standard-schema/spec";
import { z } from "zod";
import type { DependencyPolicy, FinishedState } from "./adapter.ts";
import { ConfigError, ValidationError } from "./errors.ts";
import { MAX_TIMER_MS, parseOptions } from "./options.ts";
import { type RetryOptions, type RetryPolicy, resolveRetry } from "./retry.ts";

/** What a handler gets besides its payload. */
export interface JobContext {
  readonly jobId: string;
  /** 1 on the first delivery, +1 on each retry or stall. */
  readonly attempt: number;
  /** Total attempts this task allows. */
  readonly maxAttempts: number;
  readonly lane: string;
  readonly task: string;
  /** Decoded `appData` given at publish (Kale's app_data), or undefined. */
  readonly appData: unknown;
  /**
   * Aborted when the job must stop: its time limit passed (TimeoutError), its lease was
   * lost (LockLostError), it was canceled (CanceledError) or the worker is shutting down
   * past its grace period (ShutdownError). `signal.reason` says which.
   */
  readonly signal: AbortSignal;
  /** Renew the lease now (heartbeats also run on their own). Resolves false if it was lost. */
  heartbeat(): Promise<boolean>;
  /**
   * Report progress (any JSON value, at most MAX_PROGRESS_BYTES encoded, else
   * PayloadTooLargeError is thrown here). Emitted as a `progress` event; where the adapter
   * has capability `reports` the latest value is stored with the job (`getJob(id).progress`)
   * and sent to other processes, batched: at most one call per lane every `reportMs`, and
   * the last value rides on the job's ack or nack.
   */
  progress(value: unknown): void;
  /**
   * Add a line to the job's log (emitted as a `progress` event with `{ log }`). Stored
   * like progress: a line longer than MAX_LOG_LINE_LENGTH characters is cut and marked;
   * the job keeps its lane's last `logLimit` lines and counts the ones dropped.
   */
  log(message: string): void;
  /**
   * Hand the job back to run again in `ms`, without spending an attempt (the API it called
   * answered 429): `throw ctx.retryAfter(30_000)`. The error it returns must be thrown (or
   * be what the handler rejects with). Needs capability `retryAfter` (else UnsupportedError
   * here); `ms` from 0 to the adapter's maxDelayMs (else ConfigError).
   */
  retryAfter(ms: number): Error;
  /**
   * The jobs this job waits (or waited) for: its flow's children and its `dependsOn`, in
   * the order given, each with how it ended ("pending" while it has not) and, where the
   * adapter stores results (capability `results`), what it returned. Read from the stored
   * job (one `get` per call), which keeps them once they ended, whatever retention does
   * to the children. Needs capability `flows` (else UnsupportedError); [] for a job that
   * waits for nothing.
   */
  children(): Promise<ChildJob[]>;
}

/** A job another waited for, as `ctx.children()` shows it. */
export interface ChildJob {
  id: string;
  /** Its lane's config name. */
  lane: string;
  /** Its task (absent only where the backend could not read it). */
  task?: string;
  onFailure: DependencyPolicy;
  /** How it ended: a finished state, "deleted" (removed before it ended), or "pending". */
  state: FinishedState | "deleted" | "pending";
  /** What its handler returned (JSON decoded), when it succeeded with a result. */
  result?: unknown;
}

type MaybePromise<T> = T | Promise<T>;

/** What `run` may return: the result schema's input when the task has one. */
export type RunReturn<R> = R extends StandardSchemaV1
  ? MaybePromise<StandardSchemaV1.InferInput<R>>
  : unknown;

/** What `defineTask` takes. */
export interface TaskOptions<
  S extends StandardSchemaV1,
  R extends StandardSchemaV1 | undefined = undefined,
> {
  /** Unique task name; stored with each job so a worker finds the handler. */
  name: string;
  /** The lane its jobs go to, by config name. */
  lane: string;
  /** A Standard Schema validator (zod, valibot, arktype…) for the payload. */
  schema: S;
  /**
   * Most time one attempt may run, ms: the signal aborts with TimeoutError and the
   * attempt fails. A job whose time limit no longer fits in its lease is handed back
   * unstarted (Kale's time budget). Default: no limit.
   */
  timeLimitMs?: number;
  /** Retry policy. Default `{ maxAttempts: 3, baseMs: 1000, maxMs: 3_600_000, jitter: 0.2 }`. */
  retry?: RetryOptions;
  /**
   * A Standard Schema validator for what `run` returns. The return value (with or without
   * a schema) is stored with the job as JSON where the adapter has capability `results`
   * (`getJob(id).result`, `waitFor`); one that fails this schema, cannot be encoded as
   * JSON or is over the client's `maxResultBytes` fails the attempt as unrecoverable
   * (dead, reason "invalid_result"). Default: none (any JSON value; `undefined` stores nothing).
   */
  result?: R;
  /** The handler. Throw to fail the attempt; throw UnrecoverableError to skip retries. */
  run(payload: StandardSchemaV1.InferOutput<S>, ctx: JobContext): RunReturn<R>;
}

/**
 * A defined task. `Input` is what `publish` takes, `Output` what `run` receives, `Result`
 * what `waitFor` resolves with (the result schema's output; `unknown` without one).
 */
export interface Task<Input = unknown, Output = unknown, Result = unknown> {
  readonly name: string;
  readonly lane: string;
  readonly schema: StandardSchemaV1<Input, Output>;
  /** The result schema, if any. */
  readonly result: StandardSchemaV1<unknown, Result> | undefined;
  readonly timeLimitMs: number | undefined;
  readonly retry: RetryPolicy;
  readonly run: (payload: Output, ctx: JobContext) => unknown;
}

// biome-ignore lint/suspicious/noExplicitAny: a heterogeneous task list needs an open type
export type AnyTask = Task<any, any, any>;

/** Payload type `publish` accepts for a task. */
export type TaskInput<T> = T extends Task<infer I, infer _O, infer _R> ? I : never;

/** What `waitFor` and `publishAndWait` resolve with for a task's job. */
export type TaskResult<T> = T extends Task<infer _I, infer _O, infer R> ? R : never;

/** The Result type parameter of a task defined with result schema `R`. */
type ResultOf<R> = R extends StandardSchemaV1 ? StandardSchemaV1.InferOutput<R> : unknown;

export const taskOptionsSchema = z
  .object({
    name: z.string(),
    lane: z.string().min(1, "must be a non-empty string"),
    schema: z.custom<StandardSchemaV1>(
      (v) =>
        typeof v === "object" &&
        v !== null &&
        typeof (v as StandardSchemaV1)["~standard"]?.validate === "function",
      "must be a Standard Schema validator (e.g. a zod schema)",
    ),
    result: z
      .custom<StandardSchemaV1>(
        (v) =>
          typeof v === "object" &&
          v !== null &&
          typeof (v as StandardSchemaV1)["~standard"]?.validate === "function",
        "must be a Standard Schema validator (e.g. a zod schema)",
      )
      .optional(),
    timeLimitMs: z
      .number()
      .positive("must be a positive number of ms")
      .max(MAX_TIMER_MS, `must be <= ${MAX_TIMER_MS} ms (the longest timer Node keeps)`)
      .optional(),
    // Checked by resolveRetry, which fills its defaults.
    retry: z.unknown().optional(),
    run: z.custom<(...args: never[]) => unknown>(
      (v) => typeof v === "function",
      "must be a function",
    ),
  })
  .strict();

/**
 * Define a typed task. The payload type flows from `schema` into `run` and into
 * `publish`, and the payload is validated at runtime on both sides.
 *
 * `result` (optional) types and validates what `run` returns, which `waitFor` resolves with.
 *
 * @example
 * const sendEmail = defineTask({
 *   name: "send-email",
 *   lane: "default",
 *   schema: z.object({ to: z.string().email() }),
 *   async run({ to }, ctx) { await mailer.send(to, { signal: ctx.signal }) },
 * });
 */
export function defineTask<
  S extends StandardSchemaV1,
  R extends StandardSchemaV1 | undefined = undefined,
>(
  options: TaskOptions<S, R>,
): Task<StandardSchemaV1.InferInput<S>, StandardSchemaV1.InferOutput<S>, ResultOf<R>> {
  if (typeof options?.name !== "string" || options.name.length === 0) {
    throw new ConfigError("task.name", options?.name, "must be a non-empty string");
  }
  const field = `task(${JSON.stringify(options.name)})`;
  parseOptions(taskOptionsSchema, options, field);
  return {
    name: options.name,
    lane: options.lane,
    schema: options.schema as StandardSchemaV1<
      StandardSchemaV1.InferInput<S>,
      StandardSchemaV1.InferOutput<S>
    >,
    result: options.result as StandardSchemaV1<unknown, ResultOf<R>> | undefined,
    timeLimitMs: options.timeLimitMs,
    retry: resolveRetry(options.retry, `${field}.retry`),
    run: options.run as Task<
      StandardSchemaV1.InferInput<S>,
      StandardSchemaV1.InferOutput<S>
    >["run"],
  };
}

/**
 * Validate a value against a task's schema. Returns the schema's output (defaults and
 * transforms applied) or throws ValidationError. Synchronous schemas stay synchronous.
 */
export function validatePayload<I, O>(task: Task<I, O>, value: unknown): O | Promise<O> {
  const result = task.schema["~standard"].validate(value);
  if (result instanceof Promise) return result.then((r) => unwrap(task.name, r));
  return unwrap(task.name, result);
}

function unwrap<O>(taskName: string, result: StandardSchemaV1.Result<O>): O {
  if (result.issues) throw schemaError(taskName, result.issues);
  return result.value;
}

/**
 * The ValidationError of a schema's issues; `index` (publishMany's item) goes in front of
 * every issue's path.
 */
export function schemaError(
  taskName: string,
  issues: ReadonlyArray<StandardSchemaV1.Issue>,
  index?: number,
  subject: "Payload" | "Result" = "Payload",
): ValidationError {
  return new ValidationError(
    taskName,
    issues.map((i) => {
      const path = (i.path ?? []).map((p) => (typeof p === "object" ? p.key : p));
      return { message: i.message, path: index === undefined ? path : [index, ...path] };
    }),
    subject,
  );
}
