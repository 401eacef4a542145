import type { LaneStore, NewJob, PutResult } from "../adapter.ts";
import { ClosedError, ConfigError, UnsupportedError } from "../errors.ts";
import { TasklaneEventBus } from "../events.ts";
import { type AnyTask, validatePayload } from "../task.ts";
import { createWorker, type Worker } from "../worker/create-worker.ts";
import type { WorkerHost } from "../worker/worker-host.ts";
import { resolveClientOptions } from "./client-options.ts";
import { createJobEncoder } from "./job-encoder.ts";
import { createLaneHandle } from "./lane-handle.ts";
import type { LaneHandle, Tasklane, TasklaneOptions } from "./tasklane.ts";

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
  const { adapter, clock, namespace, configs, tasks } = resolved;
  const events = new TasklaneEventBus();
  const encoder = createJobEncoder(adapter, resolved.maxPayloadBytes);
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

  /** Idle local workers, woken at once by a publish from this process. */
  const localPublishListeners = new Set<(lane: string, dueAt?: number) => void>();
  const notifyLocalPublish = (lane: string, dueAt?: number) => {
    for (const wake of localPublishListeners) wake(lane, dueAt);
  };
  const workerHost: WorkerHost = {
    adapter,
    clock,
    random: resolved.random,
    events,
    tasks,
    configs,
    makeSelector: resolved.makeSelector,
    openLane,
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
    notifyLocalPublish(task.lane, earliestRunAt(jobs));
    return results;
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
      h = createLaneHandle(config, { adapter, clock, openLane, notifyLocalPublish });
      handles.set(name, h);
    }
    return h;
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
      const job = encoder.prepare(t, value, opts, clock.now());
      const [result] = await write(t, [job]);
      return result as PutResult;
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
    lane: handle,
    async close(stopOptions) {
      if (closed) return;
      closed = true;
      await Promise.all([...workers].map((w) => w.stop(stopOptions)));
      if (resolved.closeAdapter) await adapter.close();
    },
  };
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
