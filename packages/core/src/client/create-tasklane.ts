import {
  type FailureGroup,
  type LaneStore,
  MAX_TRACE_CONTEXT_LENGTH,
  type NewJob,
  type PutResult,
  type WorkerInfo,
} from "../adapter.ts";
import { ClosedError, ConfigError, UnsupportedError } from "../errors.ts";
import { TasklaneEventBus } from "../events.ts";
import type { PublishTelemetry } from "../instrumentation.ts";
import { stripUndefined } from "../strip-undefined.ts";
import { type AnyTask, type TaskResult, validatePayload } from "../task.ts";
import { createWorker, type Worker } from "../worker/create-worker.ts";
import type { WorkerHost } from "../worker/worker-host.ts";
import { resolveStopOptions } from "../worker/worker-options.ts";
import { resolveClientOptions } from "./client-options.ts";
import { type FlowDeps, type FlowEntry, publishFlow, putEntries } from "./flow.ts";
import { createJobEncoder } from "./job-encoder.ts";
import { toJobView } from "./job-view.ts";
import { createLaneHandle } from "./lane-handle.ts";
import { createSchedules } from "./schedules.ts";
import type { JobView, LaneHandle, Tasklane, TasklaneOptions } from "./tasklane.ts";
import { createWaitFor } from "./wait-for.ts";

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
  const resolved = resolveClientOptions(options);
  const { adapter, clock, namespace, configs, tasks, instrumentation } = resolved;
  const events = new TasklaneEventBus();
  const fullName = (name: string) => (namespace ? `${namespace}_${name}` : name);
  const encoder = createJobEncoder(
    adapter,
    resolved.maxPayloadBytes,
    (lane) => configs.get(lane)?.groups !== undefined,
    (lane) => (configs.has(lane) ? fullName(lane) : undefined),
  );
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
        logLimit: config.logLimit,
        retention: config.retention,
        ...(config.maxConcurrency !== undefined ? { maxConcurrency: config.maxConcurrency } : {}),
        ...(config.groups !== undefined ? { groups: stripUndefined(config.groups) } : {}),
        ...(config.rateLimit !== undefined ? { rateLimit: config.rateLimit } : {}),
      });
      if (instrumentation?.wrapLane !== undefined) {
        p = p.then((store) => instrumentation.wrapLane?.(store, name) ?? store);
      }
      // A failed open must not poison the cache: the next call tries again.
      p.catch(() => opened.delete(name));
      opened.set(name, p);
    }
    return p;
  };

  /** Idle local workers, woken at once by a publish from this process. */
  const localPublishListeners = new Set<(lane: string, dueAt?: number) => void>();
  const notifyLocalPublish = (lane: string, dueAt?: number) => {
    for (const wake of localPublishListeners) wake(lane, dueAt);
  };
  /** Local workers' schedule tickers, re-armed at once by an upsert or resume here. */
  const localScheduleListeners = new Set<(lane: string) => void>();
  const schedules = createSchedules({
    adapter,
    clock,
    events,
    encoder,
    lanes: () => [...configs.keys()],
    openLane,
    knownTask: (task) => knownTask(task),
    checkOpen: () => {
      if (closed) throw new ClosedError("tasklane client");
    },
    notifyLocalPublish: (lane) => notifyLocalPublish(lane),
    notifyLocalSchedule: (lane) => {
      for (const poke of localScheduleListeners) poke(lane);
    },
  });
  const workerHost: WorkerHost = {
    adapter,
    clock,
    random: resolved.random,
    events,
    tasks,
    maxPayloadBytes: resolved.maxPayloadBytes,
    instrumentation,
    configs,
    maxResultBytes: resolved.maxResultBytes,
    makeSelector: resolved.makeSelector,
    configName: (full) => configNameOf.get(full) ?? full,
    openLane,
    fireDueSchedules: async (lane) => {
      await schedules.fireDue(lane);
    },
    onLocalSchedule(listener) {
      localScheduleListeners.add(listener);
      return () => localScheduleListeners.delete(listener);
    },
    onLocalPublish(listener) {
      localPublishListeners.add(listener);
      return () => localPublishListeners.delete(listener);
    },
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

  /** Tell the instrumentation of a publish; its trace context goes into every job. */
  const observePublish = (task: AnyTask, jobs: NewJob[]): PublishTelemetry | undefined => {
    const observed = instrumentation?.publish?.(task.lane, task.name, jobs);
    const traceContext = observed?.traceContext;
    if (traceContext !== undefined && traceContext.length <= MAX_TRACE_CONTEXT_LENGTH) {
      for (const job of jobs) job.traceContext = traceContext;
    }
    return observed;
  };

  const write = async (task: AnyTask, jobs: NewJob[]): Promise<PutResult[]> => {
    const observed = instrumentation === undefined ? undefined : observePublish(task, jobs);
    let results: PutResult[];
    try {
      const store = await openLane(task.lane);
      const max = adapter.capabilities.maxBatch;
      if (jobs.length <= max) results = await store.put(jobs);
      else {
        // Chunks go out together: adapters that pipeline (Redis) keep their order, and
        // a round trip per chunk is not paid in sequence.
        const chunks: Promise<PutResult[]>[] = [];
        for (let i = 0; i < jobs.length; i += max) chunks.push(store.put(jobs.slice(i, i + max)));
        results = (await Promise.all(chunks)).flat();
      }
    } catch (error) {
      observed?.end(undefined, error);
      throw error;
    }
    observed?.end(results);
    if (events.listenerCount("published") > 0)
      for (const r of results)
        events.emit("published", {
          lane: task.lane,
          jobId: r.id,
          task: task.name,
          status: r.status,
        });
    notifyLocalPublish(task.lane, earliestRunAt(jobs));
    return results;
  };

  const flowDeps: FlowDeps = {
    adapter,
    clock,
    encoder,
    knownTask: (task) => knownTask(task),
    openLane,
    fullName,
    configName: (full) => configNameOf.get(full) ?? full,
  };

  /** Put jobs with dependencies (a flow, or one publish with dependsOn), as `write` puts others. */
  const writeFlow = async (
    root: AnyTask,
    entries: FlowEntry[],
  ): Promise<"created" | "duplicate"> => {
    const jobs = entries.map((e) => e.job);
    const observed = instrumentation === undefined ? undefined : observePublish(root, jobs);
    let status: "created" | "duplicate";
    try {
      status = await putEntries(flowDeps, entries);
    } catch (error) {
      observed?.end(undefined, error);
      throw error;
    }
    observed?.end(jobs.map((j) => ({ id: j.id, status })));
    if (events.listenerCount("published") > 0)
      for (const e of entries)
        events.emit("published", { lane: e.lane, jobId: e.job.id, task: e.task.name, status });
    if (status === "created")
      for (const lane of new Set(entries.map((e) => e.lane))) notifyLocalPublish(lane);
    return status;
  };

  const handles = new Map<string, LaneHandle>();
  const handle = (name: string): LaneHandle => {
    const config = configs.get(name);
    if (!config)
      throw new ConfigError(
        "lane",
        name,
        `no such lane (configured: ${[...configs.keys()].join(", ")})`,
      );
    let h = handles.get(name);
    if (!h) {
      h = createLaneHandle(config, {
        adapter,
        clock,
        openLane,
        hasLane: (lane) => configs.has(lane),
        notifyLocalPublish,
        configName: (full) => configNameOf.get(full) ?? full,
      });
      handles.set(name, h);
    }
    return h;
  };

  /** Every lane of the client, opened, in configuration order. */
  const allLanes = () =>
    Promise.all([...configs.keys()].map(async (name) => ({ name, store: await openLane(name) })));
  const waitFor = createWaitFor({ adapter, clock, lanes: allLanes });
  const configNameOf = new Map<string, string>();
  for (const name of configs.keys()) configNameOf.set(fullName(name), name);

  const publish = async (
    task: AnyTask,
    payload: unknown,
    opts: Parameters<Tasklane["publish"]>[2] = {},
  ): Promise<PutResult> => {
    if (closed) throw new ClosedError("tasklane client");
    const t = knownTask(task);
    let value = validatePayload(t, payload);
    if (value instanceof Promise) value = await value;
    const job = encoder.prepare(t, value, opts, clock.now());
    if (job.dependsOn !== undefined) {
      const status = await writeFlow(t, [{ lane: t.lane, task: t, job }]);
      return { id: job.id, status };
    }
    const [result] = await write(t, [job]);
    return result as PutResult;
  };

  const client: Tasklane = {
    events,
    adapter,
    clock,
    publish,
    async publishAndWait<T extends AnyTask>(
      task: T,
      payload: unknown,
      options: Parameters<Tasklane["publishAndWait"]>[2] = {},
    ) {
      const { timeoutMs, signal, ...publishOptions } = options;
      const waitOptions = {
        ...(timeoutMs !== undefined ? { timeoutMs } : {}),
        ...(signal !== undefined ? { signal } : {}),
      };
      if (!adapter.capabilities.waitFor || !adapter.watch) {
        // Refused before the publish: a job nobody can wait for would run unobserved.
        throw new UnsupportedError(adapter.name, "waiting for a job (publishAndWait)");
      }
      const { id } = await publish(task, payload, publishOptions);
      return (await waitFor(id, waitOptions)) as TaskResult<T>;
    },
    async waitFor<R>(jobId: string, options?: Parameters<Tasklane["waitFor"]>[1]) {
      if (closed) throw new ClosedError("tasklane client");
      return (await waitFor(jobId, options)) as R;
    },
    async getJob<R>(jobId: string): Promise<JobView<R> | undefined> {
      if (closed) throw new ClosedError("tasklane client");
      if (!adapter.capabilities.get) throw new UnsupportedError(adapter.name, "get");
      const lanes = await allLanes();
      const infos = await Promise.all(lanes.map((l) => l.store.get?.(jobId)));
      const i = infos.findIndex((info) => info !== undefined);
      const info = infos[i];
      return info === undefined
        ? undefined
        : toJobView<R>(info, lanes[i]?.name as string, flowDeps.configName);
    },
    async workers(): Promise<WorkerInfo[]> {
      if (closed) throw new ClosedError("tasklane client");
      if (!adapter.capabilities.workers || !adapter.workers) {
        throw new UnsupportedError(adapter.name, "the worker registry (workers)");
      }
      const all = await adapter.workers();
      const mine: WorkerInfo[] = [];
      for (const w of all) {
        if (!w.lanes.some((l) => configNameOf.has(l))) continue;
        const laneName = (l: string) => configNameOf.get(l) ?? l;
        mine.push({
          ...w,
          lanes: w.lanes.map(laneName),
          jobs: w.jobs.map((j) => ({ ...j, lane: laneName(j.lane) })),
        });
      }
      return mine;
    },
    async failures(): Promise<FailureGroup[]> {
      if (closed) throw new ClosedError("tasklane client");
      const lists = await Promise.all([...configs.keys()].map((name) => handle(name).failures()));
      return lists.flat().sort((a, b) => b.count - a.count);
    },
    async flow(root) {
      if (closed) throw new ClosedError("tasklane client");
      // The root is the last entry (children come first).
      return publishFlow(flowDeps, root, (entries) =>
        writeFlow((entries.at(-1) as FlowEntry).task, entries),
      );
    },
    async publishMany(task, items) {
      if (closed) throw new ClosedError("tasklane client");
      const t = knownTask(task);
      if (!Array.isArray(items))
        throw new ConfigError("items", items, "must be an array of { payload, ...options }");
      let jobs = encoder.prepareAll(t, items, clock.now());
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
      const w = createWorker(workerHost, workerOptions);
      workers.add(w);
      return w;
    },
    schedules,
    lane: handle,
    lanes: () => [...configs.keys()].map(handle),
    tasks: () => [...tasks.values()],
    async close(stopOptions) {
      if (closed) return;
      resolveStopOptions(stopOptions); // a bad option fails before anything stops
      closed = true;
      await Promise.all([...workers].map((w) => w.stop(stopOptions)));
      if (resolved.closeAdapter) await adapter.close();
    },
  };
  instrumentation?.attach?.(client);
  return client;
}

/** The earliest runAt of `jobs` when every one is delayed; undefined when one is due now. */
function earliestRunAt(jobs: readonly NewJob[]): number | undefined {
  let at = Number.POSITIVE_INFINITY;
  for (const job of jobs) {
    if (job.runAt === undefined) return undefined;
    if (job.runAt < at) at = job.runAt;
  }
  return at === Number.POSITIVE_INFINITY ? undefined : at;
}
