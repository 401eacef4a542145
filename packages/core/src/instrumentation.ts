/**
 * Instrumentation hooks: how telemetry (`@tasklane/opentelemetry`) sees what a client and
 * its workers do, without core importing any telemetry library.
 *
 *   createTasklane ─► wrapLane(store)        every lane store the client opens
 *                  ─► attach(client)         once, with the finished client
 *   publish(Many)  ─► publish(lane, task, jobs) ─► traceContext into each job ─► put ─► end
 *   tl.worker()    ─► worker(view)           what a gauge reads at collection time
 *   a runner takes a job ─► job(lane, job) ─► run(handler) ─► settling(outcome) ─► end(status)
 *
 * Every hook is optional. A client without `instrumentation` calls none of them: the cost
 * is one `undefined` check per publish, per job and per settle.
 */
import type { JobError, LaneStore, NewJob, PutResult, ReservedJob } from "./adapter.ts";
import type { Tasklane } from "./client/tasklane.ts";
import type { WorkerMetrics } from "./worker/worker-metrics.ts";

export interface Instrumentation {
  /** Called once, as `createTasklane` returns, with the client (its lanes, clock, adapter). */
  attach?(client: Tasklane): void;
  /**
   * Every lane store the client opens (for workers, publishes and lane handles alike),
   * before anything uses it. Returns the store to use in its place: a wrapper that counts
   * the adapter calls, keeping the store's `name` and exactly its optional methods.
   */
  wrapLane?(store: LaneStore, lane: string): LaneStore;
  /**
   * A `publish` or `publishMany` is about to write `jobs` (validated and encoded) of `task`
   * to `lane` (config names). Called once per call, before its first adapter call.
   */
  publish?(lane: string, task: string, jobs: readonly NewJob[]): PublishTelemetry | undefined;
  /** A worker the client created (not started yet). */
  worker?(worker: WorkerView): void;
  /**
   * A runner took a reserved job of `lane` (once per delivery; a job handed back unstarted
   * at shutdown never gets here). The telemetry returned follows that delivery to its end.
   */
  job?(lane: string, job: ReservedJob): JobTelemetry | undefined;
}

/** One publish call. */
export interface PublishTelemetry {
  /** Stored with every job of the call (`NewJob.traceContext`), when set. */
  readonly traceContext: string | undefined;
  /** The write was answered (`results`, in order) or threw (`error`). */
  end(results: readonly PutResult[] | undefined, error?: unknown): void;
}

/** One delivery of a job to a worker. */
export interface JobTelemetry {
  /**
   * The handler starts now: call `handler` and return what it returns, in the telemetry's
   * context, so spans the handler makes nest under the job's. Not called for a job that
   * goes dead or is handed back before its handler starts.
   */
  run<T>(handler: () => T): T;
  /** The worker decided how the delivery ends; the backend has not answered yet. */
  settling(outcome: JobSettling): void;
  /** The job left this worker (once): see {@link JobEnd}. */
  end(status: JobEnd): void;
}

/** How the worker settles a delivery. `cause` is what the handler threw, if it threw. */
export type JobSettling =
  | { kind: "ack" }
  | { kind: "retry"; error: JobError; cause: unknown; runAt: number }
  | { kind: "dead"; error: JobError; cause: unknown }
  | { kind: "release" };

/**
 * How a delivery left the worker: `"ok"` its settling call was accepted; `"lost"` the
 * lease was lost (a heartbeat or the settling call said so); `"stalled"` lost because it
 * ran out while held (an event-loop stall); `"canceled"`; `"put"` the job was moved;
 * `"unconfirmed"` the settling call failed and whether it took effect stays unknown.
 */
export type JobEnd = "ok" | "lost" | "stalled" | "canceled" | "put" | "unconfirmed";

/** What instrumentation may read of a worker, at any time. */
export interface WorkerView {
  /** Jobs it runs at once, at most. */
  readonly concurrency: number;
  /** True between its start() and the end of its stop(). */
  readonly started: boolean;
  /** Jobs whose lease it holds now: running, prefetched, or settling. */
  readonly held: number;
  /** Jobs whose handler runs now. */
  readonly running: number;
  /** Its counters since start (`worker.metrics()`). */
  metrics(): WorkerMetrics;
}
