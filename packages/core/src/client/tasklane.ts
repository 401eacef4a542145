import type {
  Adapter,
  AdapterEvent,
  CancelResult,
  JobInfo,
  LaneCounts,
  ListOptions,
  PutResult,
} from "../adapter.ts";
import type { Clock } from "../clock.ts";
import type { TasklaneEventBus } from "../events.ts";
import type { Instrumentation } from "../instrumentation.ts";
import type { LaneConfig, LaneConfigInput } from "../lane-config.ts";
import type { SelectorName } from "../selectors/create-selector.ts";
import type { RandomSource, Selector } from "../selectors/selector.ts";
import type { DayStats } from "../stats.ts";
import type { AnyTask, TaskInput } from "../task.ts";
import type { Worker } from "../worker/create-worker.ts";
import type { StopOptions, WorkerOptions } from "../worker/worker-options.ts";

export interface TasklaneOptions {
  /** The storage backend. */
  adapter: Adapter;
  /** The lanes. Validated at creation; an invalid entry throws ConfigError naming the field. */
  lanes: LaneConfigInput[];
  /** Every task this client publishes or runs. Names must be unique. */
  tasks: AnyTask[];
  /** Lane selector for workers, or its name. Default "reduced-lottery" (Kale's). */
  selector?: Selector | SelectorName;
  /**
   * Prefix for every lane name on the backend (`<namespace>_<lane>`), e.g. a release
   * version so a new release gets fresh lanes, as Kale does. Default: none.
   */
  namespace?: string;
  /** Largest encoded payload (+ appData) accepted by publish, bytes. Default 262_144 (256 KiB). */
  maxPayloadBytes?: number;
  /** Time source and timers. Default the system clock; tests pass createManualClock(). */
  clock?: Clock;
  /** Randomness for selectors and retry jitter, in [0, 1). Default Math.random. */
  random?: RandomSource;
  /** Close the adapter when this client closes. Default true. */
  closeAdapter?: boolean;
  /**
   * Telemetry hooks: `createTelemetry()` from `@tasklane/opentelemetry` gives the client
   * producer and consumer spans and metrics. Default none (nothing is measured).
   */
  instrumentation?: Instrumentation;
}

export interface PublishOptions {
  /** Job-level priority inside its lane, integer −1000..1000, higher first. Default 0. */
  priority?: number;
  /** Run no earlier than this many ms from now. */
  delayMs?: number;
  /** Run no earlier than this epoch-ms time. Exclusive with delayMs. */
  runAt?: number;
  /** Job id; a second publish with the same id is a no-op ("duplicate"). Default a random UUID. */
  jobId?: string;
  /** Extra JSON data for the handler (`ctx.appData`), Kale's app_data. */
  appData?: unknown;
  /** Message group for FIFO backends (SQS FIFO). */
  groupId?: string;
}

/** One job of a `publishMany` call. */
export type PublishItem<P> = { payload: P } & PublishOptions;

/** Management view of one lane. Optional operations throw UnsupportedError when the adapter lacks them. */
export interface LaneHandle {
  readonly name: string;
  readonly config: LaneConfig;
  counts(): Promise<LaneCounts>;
  probe(): Promise<number>;
  get(jobId: string): Promise<JobInfo | undefined>;
  list(options: ListOptions): AsyncIterable<JobInfo>;
  cancel(jobIds: string[]): Promise<CancelResult[]>;
  retryFailed(jobIds?: string[]): Promise<number>;
  delete(jobIds: string[]): Promise<number>;
  pause(): Promise<void>;
  resume(): Promise<void>;
  isPaused(): Promise<boolean>;
  /** Stats for a UTC day, "YYYY-MM-DD" (default today). */
  stats(day?: string): Promise<DayStats | undefined>;
}

export interface Tasklane {
  readonly events: TasklaneEventBus;
  readonly adapter: Adapter;
  readonly clock: Clock;
  /** Validate, encode and store one job. Nothing is written when validation fails. */
  publish<T extends AnyTask>(
    task: T,
    payload: TaskInput<T>,
    options?: PublishOptions,
  ): Promise<PutResult>;
  /**
   * Publish many jobs of one task in as few adapter batches as its `maxBatch` allows
   * (one batch up to that size). All are validated first: one bad payload writes
   * nothing. Past `maxBatch` the batches go out together; if the backend fails one of
   * them, the others may already be written (publish again with the same job ids to
   * finish safely: duplicates are no-ops).
   */
  publishMany<T extends AnyTask>(
    task: T,
    items: Array<PublishItem<TaskInput<T>>>,
  ): Promise<PutResult[]>;
  /** Create a worker (not started) serving all lanes, or `options.lanes`. */
  worker(options?: WorkerOptions): Worker;
  /** Management view of a lane, by config name. */
  lane(name: string): LaneHandle;
  /** Management views of every lane of this client, in configuration order. */
  lanes(): LaneHandle[];
  /** Every task of this client, in the order given to `createTasklane`. */
  tasks(): AnyTask[];
  /**
   * Events of this client's lanes from every process (capability `subscribe`, else
   * UnsupportedError): `canceled` and `put`, and where the adapter has capability
   * `lifecycleEvents` also the lifecycle events of `LIFECYCLE_EVENT_TYPES` (`published`,
   * `started`, `succeeded`, `retrying`, `failed`, `stalled`, `released`, `retried`,
   * `deleted`; the Redis adapter publishes those when created with `lifecycleEvents: true`
   * in the processes that publish, run and manage the jobs). `lane` is the config name.
   * Delivery is at most once. Resolves once subscribed; call the function it returns to
   * stop.
   */
  subscribe(listener: (event: AdapterEvent) => void): Promise<() => Promise<void>>;
  /** Stop every worker (gracefully, within `graceMs`) and close the adapter. Idempotent. */
  close(options?: StopOptions): Promise<void>;
}
