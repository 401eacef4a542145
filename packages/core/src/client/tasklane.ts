import type {
  Adapter,
  AdapterEvent,
  CancelResult,
  ChangeResult,
  DependencyPolicy,
  FailureGroup,
  JobFilter,
  JobInfo,
  JobPage,
  JobSummary,
  LaneCounts,
  ListFilter,
  MoveResult,
  PutResult,
  WorkerInfo,
} from "../adapter.ts";
import type { Clock } from "../clock.ts";
import type { TasklaneEventBus } from "../events.ts";
import type { Instrumentation } from "../instrumentation.ts";
import type { LaneConfig, LaneConfigInput } from "../lane-config.ts";
import type { SelectorName } from "../selectors/create-selector.ts";
import type { RandomSource, Selector } from "../selectors/selector.ts";
import type { DayStats } from "../stats.ts";
import type { AnyTask, TaskInput, TaskResult } from "../task.ts";
import type { Worker } from "../worker/create-worker.ts";
import type { StopOptions, WorkerOptions } from "../worker/worker-options.ts";
import type { Schedules } from "./schedules.ts";

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
  /**
   * Largest encoded handler return value, bytes: a larger one fails its attempt as
   * unrecoverable (dead, reason "invalid_result", ResultTooLargeError). Default 65_536 (64 KiB).
   */
  maxResultBytes?: number;
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
  /**
   * Fair group, e.g. a tenant (capability `groups`), for a lane configured with `groups`:
   * the lane serves its groups round-robin and runs at most `groups.concurrency` jobs of
   * one group at once. 1-128 characters.
   */
  group?: string;
  /**
   * Labels to find the job by: `list({ tag })`, `count({ tag })` (capability `tags`).
   * 1-16 distinct strings of 1-128 characters.
   */
  tags?: string[];
  /**
   * The job expires if it has not started this many ms from now: a job still waiting or
   * delayed then (first run or retry) ends in the state `expired`, never run (capability
   * `expiry`). Exclusive with expiresAt; must fall after runAt.
   */
  expiresInMs?: number;
  /** As expiresInMs, as an epoch-ms time. */
  expiresAt?: number;
  /**
   * Debounce or throttle by key (capability `debounce`). The first publish of a key opens
   * a window of `ms`; while its job has not started and the window lasts, a publish of the
   * same task and key creates no job and answers `debounced` with that job's id. keep
   * "last" (debounce, the default): the job is due at the window's end (or its runAt if
   * later) and runs with the payload (and appData) of the last publish inside the window.
   * keep "first" (throttle): the job is due as usual and the later publishes are dropped.
   * Once the job has started, or the window has ended, the next publish creates a new job
   * and a new window.
   */
  debounce?: { key: string; ms: number; keep?: "last" | "first" };
  /**
   * Jobs this one waits for (capability `flows`): it is stored `blocked` and becomes due
   * once they have ended, as each one's `onFailure` says (default "fail": one that ends
   * failed, canceled, expired or deleted fails this job unrun; README, "Flows"). A string
   * is a job id of this job's lane; `{ jobId, lane, onFailure }` names another lane
   * (config name). A job that has already ended counts at once; an id no lane holds
   * rejects with DependencyNotFoundError, writing nothing. 1-1,000 entries; not with
   * `debounce`, nor in publishMany.
   */
  dependsOn?: Array<string | JobDependencyInput>;
}

/** One job another waits for, as `dependsOn` names it. */
export interface JobDependencyInput {
  jobId: string;
  /** Its lane (config name). Default: the lane of the job that waits. */
  lane?: string;
  /** What its failure does to the job that waits. Default "fail". */
  onFailure?: DependencyPolicy;
}

/** A job of a flow (`tl.flow`): its task, payload and options, and its own children. */
export interface FlowNode<T extends AnyTask = AnyTask> {
  task: T;
  payload: TaskInput<T>;
  /** As publish's (`dependsOn` adds to the children; `debounce` is refused). */
  options?: PublishOptions;
  /** Jobs this one waits for, created with it: they run first. */
  children?: FlowChild[];
}

/** A child of a flow's job: a FlowNode, and what its failure does to its parent. */
export interface FlowChild<T extends AnyTask = AnyTask> extends FlowNode<T> {
  /** Default "fail" (see PublishOptions.dependsOn and README, "Flows"). */
  onFailure?: DependencyPolicy;
}

/** A job `tl.flow` put, and its children's, in the order given. */
export interface FlowJob {
  id: string;
  /** Config name. */
  lane: string;
  task: string;
  children: FlowJob[];
}

/**
 * What `tl.flow` answers: the root job with its children. "duplicate": a job of the flow
 * had the id of a stored job (a `jobId` given in options); nothing was written.
 */
export interface FlowResult extends FlowJob {
  status: "created" | "duplicate";
}

/** How long and how `waitFor` waits. */
export interface WaitOptions {
  /** Reject with WaitTimeoutError after this many ms (the job goes on). Default: no limit. */
  timeoutMs?: number;
  /** Stop waiting when it aborts (rejects with its reason; the job goes on). */
  signal?: AbortSignal;
}

/** A job as `tl.getJob` shows it: JSON decoded, and `lane` the config name. */
export interface JobView<R = unknown>
  extends Omit<JobInfo, "lane" | "payload" | "appData" | "result" | "progress"> {
  /** The lane's config name. */
  lane: string;
  payload: unknown;
  appData?: unknown;
  /** What the handler returned (capability `results`). */
  result?: R;
  /** The latest progress reported (capability `reports`). */
  progress?: unknown;
}

/** Which jobs `deleteJobs` removes: a filter, or a failure group. Active jobs are never deleted. */
export interface DeleteFilter extends JobFilter {
  /** A failure group (an error name): the same as `{ state: "failed", errorName: group }`. */
  group?: string;
  /** Delete at most this many. Default: every match. */
  limit?: number;
}

/** Which failed jobs `retryFailed` puts back: by id, or a failure group. */
export type RetryTarget =
  | string[]
  | { ids: string[] }
  | {
      /** A failure group: the failed jobs whose error has this name. */
      group: string;
      /** Retry at most this many (oldest failure first). Default: every job of the group. */
      limit?: number;
    };

/** One job of a `publishMany` call. */
export type PublishItem<P> = { payload: P } & PublishOptions;

/** Management view of one lane. Optional operations throw UnsupportedError when the adapter lacks them. */
export interface LaneHandle {
  readonly name: string;
  readonly config: LaneConfig;
  counts(): Promise<LaneCounts>;
  probe(): Promise<number>;
  /**
   * A job of this lane, as stored (capability `get`): payload, appData and result as
   * encoded JSON; the lanes of its `dependencies` and `dependents` are config names.
   */
  get(jobId: string): Promise<JobInfo | undefined>;
  /**
   * The lane's jobs matching `filter`, streamed page by page in constant memory. With
   * only `state` it needs capability `list`; any other condition, or no state, needs
   * `search` (`tag`: also `tags`). `fields: "summary"` leaves out payloads and other
   * bulky parts. Jobs that stay in their state are listed once; jobs that enter a
   * matching state after the listing began may be left out.
   */
  list(filter: ListFilter & { fields: "summary" }): AsyncIterable<JobSummary>;
  list(filter?: ListFilter): AsyncIterable<JobInfo>;
  /** One page of `list`: pass the returned cursor back for the next (capability `search`). */
  listPage(
    filter: ListFilter & { fields: "summary" },
    cursor?: string,
  ): Promise<JobPage<JobSummary>>;
  listPage(filter?: ListFilter, cursor?: string): Promise<JobPage<JobInfo>>;
  /** How many jobs match (capability `search`; a filter of only `state` needs just `counts`). */
  count(filter?: JobFilter): Promise<number>;
  /** Failed jobs grouped by error name, largest group first (capability `failureGroups`). */
  failures(): Promise<FailureGroup[]>;
  cancel(jobIds: string[]): Promise<CancelResult[]>;
  /**
   * Put failed jobs back to waiting, attempts reset; returns how many. No argument: every
   * failed job. `{ group, limit }`: a failure group, in batches of at most 1,000 per call
   * (capabilities `search` and `retryFailed`).
   */
  retryFailed(target?: RetryTarget): Promise<number>;
  delete(jobIds: string[]): Promise<number>;
  /**
   * Delete the jobs matching a filter or a failure group (never active ones), in batches
   * of at most 1,000 per call; returns how many (capabilities `search` and `delete`).
   */
  deleteJobs(filter: DeleteFilter): Promise<number>;
  /** Change waiting and delayed jobs' priority, −1000..1000 (capability `changePriority`). */
  setPriority(jobIds: string[], priority: number): Promise<ChangeResult[]>;
  /** Make delayed jobs due now (capability `promote`). */
  promote(jobIds: string[]): Promise<ChangeResult[]>;
  /**
   * Move jobs to another lane (config name), keeping their ids: waiting, delayed and
   * failed ones, and active ones, whose handler aborts with the `put` event (its late ack
   * is refused) while the job runs again in the target lane (capability `move`).
   */
  move(jobIds: string[], toLane: string): Promise<MoveResult[]>;
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
  /**
   * Publish a job and wait for it to finish (`waitFor`): resolves with what its handler
   * returned, typed by the task's result schema.
   */
  publishAndWait<T extends AnyTask>(
    task: T,
    payload: TaskInput<T>,
    options?: PublishOptions & WaitOptions,
  ): Promise<TaskResult<T>>;
  /**
   * Wait until a job of this client's lanes finishes, from any process (capability
   * `waitFor`): resolves with what its handler returned (undefined without `results`);
   * rejects with JobFailedError (failed, canceled or expired), JobNotFoundError,
   * WaitTimeoutError or the signal's reason. A job that finished before the call is
   * seen: the waiter watches first, then reads.
   */
  waitFor<R = unknown>(jobId: string, options?: WaitOptions): Promise<R>;
  /** A job of any of this client's lanes, decoded (capability `get`); undefined if none holds it. */
  getJob<R = unknown>(jobId: string): Promise<JobView<R> | undefined>;
  /**
   * The running workers serving any of this client's lanes, from any process (capability
   * `workers`): each registers at start and on every heartbeat, and drops out three
   * heartbeat periods after its last one.
   */
  workers(): Promise<WorkerInfo[]>;
  /** Failure groups of every lane of this client, largest first (capability `failureGroups`). */
  failures(): Promise<FailureGroup[]>;
  /**
   * Publish a job and the children it waits for, to any lanes of this client, in one
   * step (capability `flows`, else UnsupportedError, nothing written): every payload is
   * validated first, and one bad payload writes nothing. The children (nested to any
   * depth, at most the adapter's maxBatch jobs in all) run first; the root is `blocked`
   * until they have ended, then runs, and reads them with `ctx.children()`. Each child's
   * `onFailure` says what its failure does (README, "Flows").
   */
  flow<T extends AnyTask>(flow: FlowNode<T> & { children: FlowChild[] }): Promise<FlowResult>;
  /** Create a worker (not started) serving all lanes, or `options.lanes`. */
  worker(options?: WorkerOptions): Worker;
  /** Management view of a lane, by config name. */
  /** Recurring schedules (capability `schedules`; README, "Recurring schedules"). */
  readonly schedules: Schedules;
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
