import type { StandardSchemaV1 } from "@standard-schema/spec";
import type {
  Adapter,
  AdapterEvent,
  CancelResult,
  JobInfo,
  JobState,
  LaneCounts,
  LaneStore,
  ListOptions,
  NewJob,
  PutResult,
} from "./adapter.ts";
import { type Clock, systemClock } from "./clock.ts";
import { byteLength, encodeJson } from "./codec.ts";
import { ClosedError, ConfigError, PayloadTooLargeError, UnsupportedError } from "./errors.ts";
import { TasklaneEventBus } from "./events.ts";
import { createJobId } from "./job-id.ts";
import { type LaneConfig, type LaneConfigInput, parseLaneConfig } from "./lane-config.ts";
import { createSelector, type SelectorName } from "./selectors/index.ts";
import type { RandomSource, Selector } from "./selectors/selector.ts";
import type { DayStats } from "./stats.ts";
import { type AnyTask, schemaError, type TaskInput, validatePayload } from "./task.ts";
import { createWorker, type StopOptions, type Worker, type WorkerOptions } from "./worker.ts";

/** Job-level priority bounds (inclusive). Higher runs first inside a lane. */
export const MIN_JOB_PRIORITY = -1000;
export const MAX_JOB_PRIORITY = 1000;

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

/** Everything the worker needs from the client. Internal. */
export interface ClientInternals {
  adapter: Adapter;
  clock: Clock;
  random: RandomSource;
  events: TasklaneEventBus;
  tasks: ReadonlyMap<string, AnyTask>;
  configs: ReadonlyMap<string, LaneConfig>;
  makeSelector(): Selector;
  openLane(name: string): Promise<LaneStore>;
  /** Called after a local publish: lets idle local workers wake at once. */
  onLocalPublish: Set<(lane: string) => void>;
}

/** The name of an option in errors: of publish's options, or of publishMany's item. */
function fieldOf(index: number | undefined, field: string): string {
  return index === undefined ? `options.${field}` : `items[${index}].${field}`;
}

/**
 * Create a tasklane client: it publishes jobs and creates workers.
 *
 * @example
 * const tl = createTasklane({ adapter: createMemoryAdapter(), lanes: [{ name: "default" }], tasks: [sendEmail] });
 * await tl.publish(sendEmail, { to: "a@example.com" });
 * const worker = tl.worker({ concurrency: 50 });
 * await worker.start();
 */
export function createTasklane(options: TasklaneOptions): Tasklane {
  if (!options || typeof options !== "object")
    throw new ConfigError("options", options, "must be an object");
  const { adapter } = options;
  if (!adapter || typeof adapter.lane !== "function") {
    throw new ConfigError(
      "adapter",
      adapter,
      "must be a tasklane adapter (e.g. createMemoryAdapter())",
    );
  }
  const clock = options.clock ?? systemClock;
  const random = options.random ?? Math.random;
  const maxPayloadBytes = options.maxPayloadBytes ?? 262_144;
  if (!(Number.isInteger(maxPayloadBytes) && maxPayloadBytes > 0)) {
    throw new ConfigError("maxPayloadBytes", maxPayloadBytes, "must be a positive integer");
  }
  const namespace = options.namespace;
  if (namespace !== undefined && !/^[A-Za-z0-9_-]{1,32}$/.test(namespace)) {
    throw new ConfigError("namespace", namespace, "1-32 letters, digits, '-' or '_'");
  }
  if (!Array.isArray(options.lanes) || options.lanes.length === 0) {
    throw new ConfigError("lanes", options.lanes, "must be a non-empty array of lane configs");
  }
  const configs = new Map<string, LaneConfig>();
  options.lanes.forEach((q, i) => {
    const config = parseLaneConfig(q, `lanes[${i}]`);
    if (configs.has(config.name))
      throw new ConfigError(`lanes[${i}].name`, config.name, "duplicate lane name");
    if (config.leaseMs > adapter.capabilities.maxLeaseMs) {
      throw new UnsupportedError(
        adapter.name,
        `a lease of ${config.leaseMs} ms`,
        `lanes[${i}].leaseMs exceeds the maximum of ${adapter.capabilities.maxLeaseMs} ms`,
      );
    }
    if (config.maxConcurrency !== undefined && !adapter.capabilities.maxConcurrency) {
      throw new UnsupportedError(adapter.name, "maxConcurrency", `lanes[${i}].maxConcurrency`);
    }
    configs.set(config.name, config);
  });
  if (!Array.isArray(options.tasks))
    throw new ConfigError("tasks", options.tasks, "must be an array of tasks");
  const tasks = new Map<string, AnyTask>();
  options.tasks.forEach((t, i) => {
    if (!t || typeof t.run !== "function")
      throw new ConfigError(`tasks[${i}]`, t, "must be a task from defineTask()");
    if (tasks.has(t.name)) throw new ConfigError(`tasks[${i}].name`, t.name, "duplicate task name");
    const config = configs.get(t.lane);
    if (!config)
      throw new ConfigError(
        `tasks[${i}].lane`,
        t.lane,
        `no such lane (configured: ${[...configs.keys()].join(", ")})`,
      );
    if (t.timeLimitMs !== undefined && t.timeLimitMs > config.leaseMs) {
      // Kale's time budget: a job only starts when its time limit fits in its lease, so a
      // limit longer than the lease could never start.
      throw new ConfigError(
        `tasks[${i}].timeLimitMs`,
        t.timeLimitMs,
        `must not exceed lane "${t.lane}" leaseMs (${config.leaseMs})`,
      );
    }
    tasks.set(t.name, t);
  });

  // Built-in selectors keep per-worker state (turns, passes), so each worker gets its own;
  // a Selector object given by the user is shared as given.
  const selectorOption = options.selector ?? "reduced-lottery";
  let makeSelector: () => Selector;
  if (typeof selectorOption === "string") {
    createSelector(selectorOption, { random, clock }); // validate the name now, not at worker start
    makeSelector = () => createSelector(selectorOption, { random, clock });
  } else if (selectorOption && typeof selectorOption.select === "function") {
    makeSelector = () => selectorOption;
  } else {
    throw new ConfigError("selector", selectorOption, "must be a Selector or a selector name");
  }

  const events = new TasklaneEventBus();
  const fullName = (name: string) => (namespace ? `${namespace}_${name}` : name);
  const opened = new Map<string, Promise<LaneStore>>();
  let closed = false;
  const workers = new Set<Worker>();

  const openLane = (name: string): Promise<LaneStore> => {
    if (closed) return Promise.reject(new ClosedError("tasklane client"));
    let p = opened.get(name);
    if (!p) {
      const config = configs.get(name);
      if (!config) return Promise.reject(new ConfigError("lane", name, "no such lane"));
      p = adapter.lane(fullName(name), {
        maxStalls: config.maxStalls,
        historyLimit: config.historyLimit,
        retention: config.retention,
        ...(config.maxConcurrency !== undefined ? { maxConcurrency: config.maxConcurrency } : {}),
      });
      // A failed open must not poison the cache: the next call tries again.
      p.catch(() => opened.delete(name));
      opened.set(name, p);
    }
    return p;
  };

  const internals: ClientInternals = {
    adapter,
    clock,
    random,
    events,
    tasks,
    configs,
    makeSelector,
    openLane,
    onLocalPublish: new Set(),
  };

  const knownTask = (task: AnyTask): AnyTask => {
    const t = task && tasks.get(task.name);
    if (!t || t !== task) {
      throw new ConfigError(
        "task",
        task?.name,
        "is not one of this client's tasks (pass it in createTasklane({ tasks }))",
      );
    }
    return t;
  };

  /** Encode and check one validated job; throws before anything is written. */
  const prepare = (
    task: AnyTask,
    value: unknown,
    opts: PublishOptions,
    now: number,
    index?: number,
  ): NewJob => {
    const encoded = encodeJson(value);
    if (
      opts.priority === undefined &&
      opts.delayMs === undefined &&
      opts.runAt === undefined &&
      opts.jobId === undefined &&
      opts.appData === undefined &&
      opts.groupId === undefined
    ) {
      // No options (publishMany's usual item): nothing to check but the size. Kept apart
      // from prepareWithOptions so the function run per job stays small, which V8
      // optimizes sooner and runs with fewer checks.
      const size = byteLength(encoded);
      if (size > maxPayloadBytes) throw payloadTooLarge(task, size, index);
      return {
        id: createJobId(),
        freshId: true,
        task: task.name,
        payload: encoded,
        priority: 0,
        publishedAt: now,
      };
    }
    return prepareWithOptions(task, encoded, opts, now, index);
  };

  /**
   * Validate and encode publishMany's items, in order; throws at the first bad one, before
   * anything is written. A plain loop in a function of its own, not in publishMany: V8
   * compiles a long loop while it runs, and here that is neither inside an async function
   * nor followed by code that has not run yet (which deoptimized the compiled loop on
   * every call; see packInto in the Redis adapter). The schema is called straight from the
   * loop (one call per item until V8 inlines it). The first schema that answers with a
   * Promise hands the rest of the items to prepareRest.
   */
  const prepareAll = (
    task: AnyTask,
    items: readonly PublishItem<unknown>[],
    now: number,
  ): NewJob[] | Promise<NewJob[]> => {
    const jobs: NewJob[] = [];
    const schema = task.schema["~standard"];
    for (let i = 0; i < items.length; i++) {
      const item = items[i] as PublishItem<unknown>;
      const result = schema.validate(item.payload);
      if (result instanceof Promise) return prepareRest(task, items, now, jobs, i, result);
      if (result.issues) throw schemaError(task.name, result.issues, i);
      jobs.push(prepare(task, result.value, item, now, i));
    }
    return jobs;
  };

  /** prepareAll from item `from` on, whose validation is `pending`; awaits what needs it. */
  const prepareRest = async (
    task: AnyTask,
    items: readonly PublishItem<unknown>[],
    now: number,
    jobs: NewJob[],
    from: number,
    pending: Promise<StandardSchemaV1.Result<unknown>>,
  ): Promise<NewJob[]> => {
    const schema = task.schema["~standard"];
    for (let i = from; i < items.length; i++) {
      const item = items[i] as PublishItem<unknown>;
      const result = await (i === from ? pending : schema.validate(item.payload));
      if (result.issues) throw schemaError(task.name, result.issues, i);
      jobs.push(prepare(task, result.value, item, now, i));
    }
    return jobs;
  };

  const payloadTooLarge = (task: AnyTask, size: number, index: number | undefined) =>
    new PayloadTooLargeError(
      `Payload of task "${task.name}"${index === undefined ? "" : ` (item ${index})`}`,
      size,
      maxPayloadBytes,
    );

  const prepareWithOptions = (
    task: AnyTask,
    encoded: string,
    opts: PublishOptions,
    now: number,
    index: number | undefined,
  ): NewJob => {
    const appData = opts.appData === undefined ? undefined : encodeJson(opts.appData);
    const size = byteLength(encoded) + (appData ? byteLength(appData) : 0);
    if (size > maxPayloadBytes) throw payloadTooLarge(task, size, index);
    const priority = opts.priority ?? 0;
    if (!Number.isInteger(priority) || priority < MIN_JOB_PRIORITY || priority > MAX_JOB_PRIORITY) {
      throw new ConfigError(
        fieldOf(index, "priority"),
        priority,
        `must be an integer from ${MIN_JOB_PRIORITY} to ${MAX_JOB_PRIORITY}`,
      );
    }
    if (priority !== 0 && !adapter.capabilities.priorities) {
      throw new UnsupportedError(
        adapter.name,
        "job-level priorities",
        "use separate lanes instead",
      );
    }
    if (opts.delayMs !== undefined && opts.runAt !== undefined) {
      throw new ConfigError(
        fieldOf(index, "delayMs"),
        opts.delayMs,
        "give delayMs or runAt, not both",
      );
    }
    if (opts.delayMs !== undefined && !(Number.isFinite(opts.delayMs) && opts.delayMs >= 0)) {
      throw new ConfigError(
        fieldOf(index, "delayMs"),
        opts.delayMs,
        "must be a finite number >= 0",
      );
    }
    if (opts.runAt !== undefined && !Number.isFinite(opts.runAt)) {
      throw new ConfigError(fieldOf(index, "runAt"), opts.runAt, "must be an epoch-ms number");
    }
    const runAt = opts.runAt ?? (opts.delayMs ? now + opts.delayMs : undefined);
    if (runAt !== undefined && runAt - now > adapter.capabilities.maxDelayMs) {
      throw new UnsupportedError(
        adapter.name,
        `a delay of ${runAt - now} ms`,
        `the maximum is ${adapter.capabilities.maxDelayMs} ms`,
      );
    }
    const freshId = opts.jobId === undefined;
    const jobId = freshId ? createJobId() : opts.jobId;
    if (typeof jobId !== "string" || jobId.length === 0 || jobId.length > 128) {
      throw new ConfigError(fieldOf(index, "jobId"), jobId, "must be a string of 1-128 characters");
    }
    const job: NewJob = {
      id: jobId,
      freshId,
      task: task.name,
      payload: encoded,
      priority,
      publishedAt: now,
    };
    if (appData !== undefined) job.appData = appData;
    if (runAt !== undefined && runAt > now) job.runAt = runAt;
    if (opts.groupId !== undefined) job.groupId = opts.groupId;
    return job;
  };

  const write = async (task: AnyTask, jobs: NewJob[]): Promise<PutResult[]> => {
    const store = await openLane(task.lane);
    const max = adapter.capabilities.maxBatch;
    let results: PutResult[];
    if (jobs.length <= max) results = await store.put(jobs);
    else {
      // Chunks go out together: adapters that pipeline (Redis) keep their order, and
      // a round trip per chunk is not paid in sequence.
      const chunks: Promise<PutResult[]>[] = [];
      for (let i = 0; i < jobs.length; i += max) chunks.push(store.put(jobs.slice(i, i + max)));
      results = (await Promise.all(chunks)).flat();
    }
    if (events.listenerCount("published") > 0)
      for (const r of results)
        events.emit("published", {
          lane: task.lane,
          jobId: r.id,
          task: task.name,
          status: r.status,
        });
    for (const wake of internals.onLocalPublish) wake(task.lane);
    return results;
  };

  const handle = (name: string): LaneHandle => {
    const config = configs.get(name);
    if (!config)
      throw new ConfigError(
        "lane",
        name,
        `no such lane (configured: ${[...configs.keys()].join(", ")})`,
      );
    const caps = adapter.capabilities;
    const need = <K extends keyof LaneStore>(
      q: LaneStore,
      method: K,
      capable: boolean,
    ): NonNullable<LaneStore[K]> => {
      const fn = q[method];
      if (!capable || typeof fn !== "function")
        throw new UnsupportedError(adapter.name, String(method));
      return (fn as (...args: unknown[]) => unknown).bind(q) as NonNullable<LaneStore[K]>;
    };
    return {
      name,
      config,
      counts: async () => (await openLane(name)).counts(),
      probe: async () => (await openLane(name)).probe(),
      get: async (id) => need(await openLane(name), "get", caps.get)(id),
      async *list(opts) {
        const q = await openLane(name);
        yield* need(q, "list", caps.list)(opts);
      },
      cancel: async (ids) => need(await openLane(name), "cancel", caps.cancel)(ids),
      retryFailed: async (ids) => need(await openLane(name), "retryFailed", caps.retryFailed)(ids),
      delete: async (ids) => need(await openLane(name), "delete", caps.delete)(ids),
      pause: async () => need(await openLane(name), "pause", caps.pause)(),
      resume: async () => {
        await need(await openLane(name), "resume", caps.pause)();
        for (const wake of internals.onLocalPublish) wake(name);
      },
      isPaused: async () => need(await openLane(name), "isPaused", caps.pause)(),
      stats: async (day) =>
        need(
          await openLane(name),
          "stats",
          caps.stats,
        )(day ?? new Date(clock.now()).toISOString().slice(0, 10)),
    };
  };

  return {
    events,
    adapter,
    clock,
    async publish(task, payload, opts = {}) {
      if (closed) throw new ClosedError("tasklane client");
      const t = knownTask(task);
      let value = validatePayload(t, payload);
      if (value instanceof Promise) value = await value;
      const job = prepare(t, value, opts, clock.now());
      const [result] = await write(t, [job]);
      return result as PutResult;
    },
    async publishMany(task, items) {
      if (closed) throw new ClosedError("tasklane client");
      const t = knownTask(task);
      if (!Array.isArray(items))
        throw new ConfigError("items", items, "must be an array of { payload, ...options }");
      let jobs = prepareAll(t, items, clock.now());
      if (jobs instanceof Promise) jobs = await jobs;
      return jobs.length === 0 ? [] : write(t, jobs);
    },
    async subscribe(listener) {
      if (closed) throw new ClosedError("tasklane client");
      if (!adapter.subscribe || !adapter.capabilities.subscribe) {
        throw new UnsupportedError(
          adapter.name,
          "events from other processes (subscribe)",
          "watch jobs with lane(name).get(id) instead",
        );
      }
      // The adapter names lanes by their full (namespaced) name; listeners get config names.
      const byFullName = new Map([...configs.keys()].map((name) => [fullName(name), name]));
      return adapter.subscribe((event) => {
        const lane = byFullName.get(event.lane);
        if (lane !== undefined) listener({ ...event, lane });
      });
    },
    worker(workerOptions = {}) {
      if (closed) throw new ClosedError("tasklane client");
      const w = createWorker(internals, workerOptions);
      workers.add(w);
      return w;
    },
    lane: handle,
    async close(stopOptions) {
      if (closed) return;
      closed = true;
      await Promise.all([...workers].map((w) => w.stop(stopOptions)));
      if (options.closeAdapter ?? true) await adapter.close();
    },
  };
}

export type { JobState };
