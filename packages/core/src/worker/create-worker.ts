/**
 * A worker: the loop that selects lanes and reserves jobs (lane-loop.ts), the runners
 * that run them (runner-pool.ts, run-job.ts), the settling of their outcomes
 * (settler.ts) and the heartbeats that keep their leases (heartbeat.ts). This file wires
 * them together and owns the worker's life: start, and a stop that hands back or
 * finishes every job it holds.
 */
import { type AdapterEvent, isLifecycleEvent, type LaneStore } from "../adapter.ts";
import { sleep } from "../clock.ts";
import { ClosedError, ShutdownError } from "../errors.ts";
import { createHeartbeat } from "./heartbeat.ts";
import { abortHeld, type HeldJob } from "./held-job.ts";
import { HeldJobs } from "./held-jobs.ts";
import { createLaneLoop, type LaneLoop } from "./lane-loop.ts";
import type { LaneState } from "./lane-state.ts";
import { createReporter, type Reporter } from "./reporter.ts";
import { createJobRunner } from "./run-job.ts";
import { createRunnerPool } from "./runner-pool.ts";
import { createScheduleTicker, type ScheduleTicker } from "./schedule-ticker.ts";
import { createSettler } from "./settler.ts";
import type { WorkerHost } from "./worker-host.ts";
import { emptyWorkerMetrics, type WorkerMetrics } from "./worker-metrics.ts";
import {
  resolveStopOptions,
  resolveWorkerOptions,
  type StopOptions,
  type WorkerOptions,
} from "./worker-options.ts";
import { createWorkerId, createWorkerRegistry } from "./worker-registry.ts";

export interface Worker {
  /** This worker's id in the worker registry (`tl.workers()`): host, pid and a random part. */
  readonly id: string;
  /** Start the loop. Resolves once the lanes are open and the loop runs. */
  start(): Promise<void>;
  /**
   * Stop fetching, hand back jobs that did not start, wait for running ones up to
   * `graceMs`, then abort them and hand them back. Resolves when no lease is held.
   */
  stop(options?: StopOptions): Promise<void>;
  /** True between start() and the end of stop(). */
  readonly running: boolean;
  /** Number of jobs whose lease this worker holds. */
  readonly held: number;
  /** Counters since start, per lane (config name). */
  metrics(): WorkerMetrics;
}

export function createWorker(host: WorkerHost, options: WorkerOptions): Worker {
  const resolved = resolveWorkerOptions(options, host.configs);
  const { concurrency, prefetch, configs, hintTtlMs, heartbeatMs, errorBackoffMs, reportMs } =
    resolved;
  const { adapter, clock, events } = host;
  const caps = adapter.capabilities;

  const selector = host.makeSelector();
  const metrics = emptyWorkerMetrics();
  const held = new HeldJobs();
  const stopSignal = new AbortController();
  const stopping = stopSignal.signal;
  let loop: LaneLoop | undefined;
  const settler = createSettler({
    clock,
    random: host.random,
    events,
    held,
    maxBatch: caps.maxBatch,
    onRetryScheduled: (ls, runAt) => loop?.retryScheduled(ls, runAt),
  });
  const reporter: Reporter | undefined = caps.reports
    ? createReporter({
        clock,
        events,
        lose: settler.lose,
        maxBatch: caps.maxBatch,
        periodMs: reportMs,
      })
    : undefined;
  const runJob = createJobRunner({
    clock,
    events,
    settler,
    stopping,
    maxPayloadBytes: host.maxPayloadBytes,
    instrumentation: host.instrumentation,
    maxResultBytes: host.maxResultBytes,
    storeResults: caps.results === true,
    reporter,
    adapterName: adapter.name,
    retryAfterMaxMs: caps.retryAfter ? caps.maxDelayMs : undefined,
    flows: caps.flows === true && caps.get,
    configName: host.configName,
  });
  const pool = createRunnerPool<HeldJob>({
    concurrency,
    priorities: configs.map((c) => c.priority),
    run: runJob,
    onError: (h, error) =>
      events.emit("error", { error, during: "execute", lane: h.lane.config.name }),
  });
  const id = createWorkerId();
  let registry: ReturnType<typeof createWorkerRegistry>;
  const heartbeat = createHeartbeat({
    clock,
    events,
    held,
    lose: settler.lose,
    maxBatch: caps.maxBatch,
    periodMs: heartbeatMs,
    onTick: () => registry?.register() ?? Promise.resolve(),
  });

  let running = false;
  let loopDone: Promise<void> = Promise.resolve();
  let stopPromise: Promise<void> | undefined;
  let unsubscribe: (() => Promise<void>) | undefined;
  let stopLocalPublish: (() => void) | undefined;
  let ticker: ScheduleTicker | undefined;
  let stopLocalSchedule: (() => void) | undefined;
  const laneByFullName = new Map<string, LaneState>();

  host.instrumentation?.worker?.({
    concurrency,
    get started() {
      return running;
    },
    get held() {
      return held.size;
    },
    get running() {
      let n = 0;
      for (const h of held) if (h.running) n++;
      return n;
    },
    metrics: () => structuredClone(metrics),
  });

  const onAdapterEvent = (event: AdapterEvent) => {
    // Only these two stop a handler; lifecycle events (another worker's "started", ...)
    // only report.
    if (isLifecycleEvent(event)) return;
    const ls = laneByFullName.get(event.lane);
    if (!ls) return;
    const h = ls.held.get(event.jobId);
    if (h) settler.lose(h, event.type);
  };

  const stop = async (graceMs: number) => {
    const graceEndsAt = clock.now() + graceMs;
    stopSignal.abort();
    loop?.abortPoll();
    pool.wakeSlotWaiter();
    stopLocalPublish?.();
    stopLocalSchedule?.();
    const tickerDone = ticker?.stop();
    await loopDone;
    await tickerDone;
    // Prefetched jobs that have not started go back now, not after the running ones.
    for (const h of held) {
      if (!h.running && !h.settled) settler.settle(h, { kind: "release" });
    }
    // Runners now end once nothing waits, so the pool goes idle when the last running
    // handler ends (the released jobs are skipped as settled).
    pool.end();
    if (pool.active > 0 && graceMs > 0) {
      const graceTimer = new AbortController();
      await Promise.race([pool.onIdle(), sleep(clock, graceMs, graceTimer.signal).catch(() => {})]);
      graceTimer.abort();
    }
    // Past the grace period: abort what still runs and hand it back.
    for (const h of held) {
      if (!h.settled) {
        abortHeld(h, new ShutdownError(), clock);
        settler.settle(h, { kind: "release" });
      }
    }
    await settler.flushAll();
    // Settling calls that failed are retried while their leases last, but not past the
    // grace period: then they are given up (reported `unconfirmed`), and a job whose call
    // had not landed is delivered again when its lease ends.
    while (held.size > 0) {
      const empty = held.nextEmpty();
      settler.scheduleFlush();
      const leftMs = graceEndsAt - clock.now();
      if (leftMs <= 0) {
        settler.stopRetrying();
        await empty;
        continue;
      }
      const graceTimer = new AbortController();
      await Promise.race([empty, sleep(clock, leftMs, graceTimer.signal).catch(() => {})]);
      graceTimer.abort();
    }
    running = false;
    heartbeat.stop();
    reporter?.stop();
    await Promise.all([unsubscribe?.(), registry?.deregister()]);
  };

  return {
    id,
    get running() {
      return running;
    },
    get held() {
      return held.size;
    },
    metrics: () => structuredClone(metrics),
    async start() {
      if (running) return;
      if (stopPromise) throw new ClosedError("worker");
      const stores = await Promise.all(configs.map((c) => host.openLane(c.name)));
      const lanes: LaneState[] = configs.map((config, i) => ({
        lane: { name: config.name, priority: config.priority },
        config,
        store: stores[i] as LaneStore,
        hint: undefined,
        hintAt: 0,
        nextDueAt: undefined,
        localPublishes: 0,
        held: new Map(),
        waiting: pool.line(config.priority),
      }));
      for (const ls of lanes) laneByFullName.set(ls.store.name, ls);
      if (adapter.subscribe && caps.subscribe)
        unsubscribe = await adapter.subscribe(onAdapterEvent, { lifecycle: false });
      const laneLoop = createLaneLoop({
        clock,
        events,
        capabilities: caps,
        tasks: host.tasks,
        lanes,
        selector,
        pool,
        held,
        settler,
        metrics,
        concurrency,
        prefetch,
        hintTtlMs,
        errorBackoffMs,
        stopping,
      });
      loop = laneLoop;
      stopLocalPublish = host.onLocalPublish(laneLoop.onLocalPublish);
      registry = createWorkerRegistry(id, {
        adapter,
        events,
        held,
        lanes: lanes.map((ls) => ls.store.name),
        concurrency,
        startedAt: clock.now(),
        // Three heartbeat periods: one late tick does not drop a live worker.
        ttlMs: 3 * heartbeatMs,
        running: () => {
          let n = 0;
          for (const h of held) if (h.running) n++;
          return n;
        },
      });
      await registry?.register();
      running = true;
      heartbeat.start();
      loopDone = laneLoop.run();
      if (caps.schedules && resolved.schedulePollMs > 0) {
        ticker = createScheduleTicker({
          clock,
          events,
          lanes: lanes
            .filter((ls) => typeof ls.store.nextScheduleAt === "function")
            .map((ls) => ({ name: ls.config.name, store: ls.store })),
          fire: host.fireDueSchedules,
          pollMs: resolved.schedulePollMs,
        });
        ticker.start();
        const t = ticker;
        stopLocalSchedule = host.onLocalSchedule((lane) => t.poke(lane));
      }
    },
    stop(options?: StopOptions) {
      let graceMs: number;
      try {
        graceMs = resolveStopOptions(options).graceMs;
      } catch (error) {
        return Promise.reject(error);
      }
      stopPromise ??= stop(graceMs);
      return stopPromise;
    },
  };
}
