import { systemClock } from "@tasklane/core";
import {
  type Adapter,
  type AdapterEvent,
  type Capabilities,
  type Clock,
  ClosedError,
  ConfigError,
  clockSchema,
  count,
  type FlowItem,
  type FlowPutResult,
  fullCapabilities,
  type JobFinishedEvent,
  type JobRef,
  type LaneStoreOptions,
  parseOptions,
  type SubscribeOptions,
  validateLaneStoreOptions,
  type WorkerInfo,
  type WorkerRegistration,
} from "@tasklane/core/adapter";
import { z } from "zod";
import { putFlow } from "./flows.ts";
import { type AdapterShared, type MemoryLane, MemoryLaneImpl } from "./memory-lane.ts";

export interface MemoryAdapterOptions {
  /**
   * Source of time and timers: every time read (due-ness, lease expiry, retention, stats
   * days) and every timer (long-poll deadlines and wake-ups) goes through it. Pass
   * `createManualClock()` in tests to move an hour forward instantly.
   * Default: `systemClock` from `@tasklane/core` (wall clock, unref'd timers).
   */
  clock?: Clock;
  /**
   * Most pending jobs (waiting + delayed + active + blocked) one lane holds; a put batch,
   * flow, move or `retryFailed` whose jobs do not fit is refused whole with
   * `LaneFullError`, writing nothing. Finished jobs do not count: the lane's retention
   * policy bounds them. Unit: jobs. Default 1_000_000.
   */
  maxJobs?: number;
}

/** The memory adapter: every optional method is present. */
export interface MemoryAdapter extends Adapter {
  lane(name: string, options: LaneStoreOptions): Promise<MemoryLane>;
  subscribe(
    listener: (event: AdapterEvent) => void,
    options?: SubscribeOptions,
  ): Promise<() => Promise<void>>;
  watch(jobs: JobRef[], listener: (event: JobFinishedEvent) => void): Promise<() => Promise<void>>;
  registerWorker(worker: WorkerRegistration, ttlMs: number): Promise<void>;
  deregisterWorker(id: string): Promise<void>;
  workers(): Promise<WorkerInfo[]>;
  putFlow(items: FlowItem[]): Promise<FlowPutResult>;
}

const DEFAULT_MAX_JOBS = 1_000_000;

/** `createMemoryAdapter`'s options: a ConfigError names a bad field and its value. */
export const memoryAdapterOptionsSchema = z
  .object({
    clock: clockSchema.optional(),
    maxJobs: count(1).optional(),
  })
  .strict();
/** 100 years: effectively unbounded, and still exact in epoch-ms doubles. */
const LONG_MS = 100 * 365 * 86_400_000;

/** What the memory adapter can do: everything, exactly, to the millisecond. */
export const memoryCapabilities: Readonly<Capabilities> = fullCapabilities({
  maxBatch: 10_000,
  maxDelayMs: LONG_MS,
  maxLeaseMs: LONG_MS,
  maxWaitMs: 2_147_483_647,
  timeResolutionMs: 1,
});

/** Call every listener. */
function notify(listeners: ReadonlySet<(event: AdapterEvent) => void>, event: AdapterEvent): void {
  for (const listener of listeners) {
    try {
      listener(event);
    } catch {
      // a failing listener must not break the operation that emitted, nor the others
    }
  }
}

/**
 * An in-process adapter: heap-ordered lanes in memory, lazy lease reclaim and at most
 * one timer per lane, driven by an injectable clock. The embedded default and the
 * adapter for unit tests.
 *
 * @example
 * const clock = createManualClock();
 * const adapter = createMemoryAdapter({ clock });
 * const lane = await adapter.lane("emails", { maxStalls: 1, historyLimit: 20 });
 */
export function createMemoryAdapter(input: MemoryAdapterOptions = {}): MemoryAdapter {
  if (typeof input !== "object" || input === null) {
    throw new ConfigError("options", input, "must be an object");
  }
  const options = parseOptions(memoryAdapterOptionsSchema, input, "");
  const clock = options.clock ?? systemClock;
  const maxJobs = options.maxJobs ?? DEFAULT_MAX_JOBS;

  const listeners = new Set<(event: AdapterEvent) => void>();
  /** The listeners that also want lifecycle events (see SubscribeOptions). */
  const lifecycleListeners = new Set<(event: AdapterEvent) => void>();
  const lanes = new Map<string, MemoryLaneImpl>();
  /** Watchers by "<lane>\n<jobId>" (waitFor). */
  const watchers = new Map<string, Set<(event: JobFinishedEvent) => void>>();
  /** The worker registry: entries lapse at their expiresAt unless renewed. */
  const registry = new Map<string, WorkerInfo>();
  const shared: AdapterShared = {
    clock,
    maxJobs,
    maxBatch: memoryCapabilities.maxBatch,
    closed: false,
    handedSinceYield: 0,
    lanes,
    watching: false,
    finished(lane, jobId, state) {
      const set = watchers.get(`${lane}\n${jobId}`);
      if (set === undefined) return;
      const event: JobFinishedEvent = { lane, jobId, state };
      // After the operation is whole, like lifecycle events: a watcher reads it done.
      queueMicrotask(() => {
        for (const listener of [...set]) {
          try {
            listener(event);
          } catch {
            // a failing watcher must not break the others
          }
        }
      });
    },
    emit(event) {
      notify(listeners, event);
    },
    report(type, lane, jobId) {
      if (lifecycleListeners.size === 0) return;
      // Delivered once the operation that made them is whole (a listener that calls back
      // in sees it done), in the order they happened.
      if (pending.length === 0) queueMicrotask(deliver);
      pending.push({ type, lane, jobId });
    },
  };
  let pending: AdapterEvent[] = [];
  const deliver = (): void => {
    const events = pending;
    pending = [];
    for (const event of events) notify(lifecycleListeners, event);
  };
  const checkOpen = (): void => {
    if (shared.closed) throw new ClosedError("memory adapter");
  };

  return {
    name: "memory",
    capabilities: memoryCapabilities,

    async lane(name, laneOptions) {
      checkOpen();
      if (typeof name !== "string" || name.length === 0) {
        throw new ConfigError("name", name, "must be a non-empty string");
      }
      validateLaneStoreOptions(laneOptions);
      let lane = lanes.get(name);
      if (lane === undefined) {
        lane = new MemoryLaneImpl(name, laneOptions, shared);
        lanes.set(name, lane);
      } else {
        lane.configure(laneOptions);
      }
      return lane;
    },

    async subscribe(listener, options) {
      checkOpen();
      // Wrapped so that one function subscribed twice gets two independent subscriptions.
      const wrapped = (event: AdapterEvent): void => listener(event);
      listeners.add(wrapped);
      if (options?.lifecycle !== false) lifecycleListeners.add(wrapped);
      return async () => {
        listeners.delete(wrapped);
        lifecycleListeners.delete(wrapped);
      };
    },

    async watch(jobs, listener) {
      checkOpen();
      if (!Array.isArray(jobs))
        throw new ConfigError("jobs", jobs, "must be an array of { lane, jobId }");
      const keys = jobs.map((j) => `${j.lane}\n${j.jobId}`);
      // Wrapped so that one function watching twice gets two independent watches.
      const wrapped = (event: JobFinishedEvent): void => listener(event);
      for (const key of keys) {
        let set = watchers.get(key);
        if (set === undefined) {
          set = new Set();
          watchers.set(key, set);
        }
        set.add(wrapped);
      }
      shared.watching = watchers.size > 0;
      return async () => {
        for (const key of keys) {
          const set = watchers.get(key);
          if (set === undefined) continue;
          set.delete(wrapped);
          if (set.size === 0) watchers.delete(key);
        }
        shared.watching = watchers.size > 0;
      };
    },

    async putFlow(items) {
      checkOpen();
      return putFlow(lanes, clock.now(), maxJobs, items);
    },

    async registerWorker(worker, ttlMs) {
      checkOpen();
      if (typeof worker?.id !== "string" || worker.id.length === 0) {
        throw new ConfigError("worker.id", worker?.id, "must be a non-empty string");
      }
      if (!(Number.isFinite(ttlMs) && ttlMs > 0)) {
        throw new ConfigError("ttlMs", ttlMs, "must be a positive number of ms");
      }
      const now = clock.now();
      registry.set(worker.id, {
        ...structuredClone(worker),
        lastHeartbeatAt: now,
        expiresAt: now + ttlMs,
      });
    },

    async deregisterWorker(id) {
      checkOpen();
      registry.delete(id);
    },

    async workers() {
      checkOpen();
      const now = clock.now();
      const live: WorkerInfo[] = [];
      for (const [id, w] of registry) {
        if (w.expiresAt <= now) registry.delete(id);
        else live.push(structuredClone(w));
      }
      return live.sort((a, b) => a.startedAt - b.startedAt || (a.id < b.id ? -1 : 1));
    },

    async close() {
      if (shared.closed) return;
      shared.closed = true;
      listeners.clear();
      lifecycleListeners.clear();
      watchers.clear();
      shared.watching = false;
      for (const lane of lanes.values()) lane.shutdown();
    },
  };
}
