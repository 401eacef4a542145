/**
 * The worker loop.
 *
 *   select a lane ──► reserve ≤ min(free slots, batchSize) ──► run each job (runners)
 *        ▲               │ up to numIterations batches,            │
 *        │               │ leaving early on an empty one           ▼
 *        └───────────────┘                        settle once: ack | nack(retry/dead) | release
 *
 * Every reserved job is *held* (its lease is ours) from reserve until its ack, nack or
 * release has been answered, or until we learn the lease is gone. A held job settles
 * exactly once; whichever comes first wins: the handler's result, its time limit, a lost
 * lease (heartbeat or ack said "lost"), a cancel (event or status "canceled"), or the
 * end of the shutdown grace period. Later outcomes are ignored, and the adapter's fencing
 * refuses a late ack, so a job never completes twice.
 *
 * Heartbeats: one timer per worker. Each tick extends, per lane, every lease of a running
 * job in one batched `extend`, well before expiry (every leaseMs / 3).
 *
 * A stay on a lane ends early when a batch comes back empty or short (the lane is then
 * known empty): staying would only cost another, empty, reserve.
 *
 * Idle: when every lane is known empty, the worker long-polls the selected lane for its
 * longPollMs, never spinning. A publish from this process ends that wait at once.
 *
 * Running: a reserved job waits in `waiting` (highest lane priority first, FIFO within a
 * priority) for one of at most `concurrency` runners, each a p-queue task that runs jobs
 * one after another. A runner that finds none parks until the next job is dispatched,
 * and the runners end when the worker stops. p-queue's cost per task (its events, an
 * async resource, promises) is then paid once per runner, not per job: with one task per
 * job it was over a quarter of the worker's CPU for a no-op job.
 */
import { EventEmitter } from "eventemitter3";
import PQueue from "p-queue";
import {
  type AdapterEvent,
  isLifecycleEvent,
  type JobError,
  type LaneStore,
  type Lock,
  type LockStatus,
  type NackItem,
  type ReservedJob,
  type ReserveResult,
} from "./adapter.ts";
import type { ClientInternals } from "./client.ts";
import { sleep } from "./clock.ts";
import { decodeJson } from "./codec.ts";
import {
  CanceledError,
  ClosedError,
  ConfigError,
  LockLostError,
  ShutdownError,
  TimeoutError,
  UnrecoverableError,
  ValidationError,
} from "./errors.ts";
import { Fifo } from "./fifo.ts";
import type { LaneConfig } from "./lane-config.ts";
import { backoffMs } from "./retry.ts";
import type { Lane, SelectionContext } from "./selectors/selector.ts";
import { type AnyTask, type JobContext, validatePayload } from "./task.ts";

export interface WorkerOptions {
  /** Jobs running at once in this worker. Default 10. */
  concurrency?: number;
  /**
   * Jobs the worker may reserve beyond `concurrency`, so the next batch is at hand when
   * slots free up and the backend round trip overlaps with running jobs. Prefetched jobs
   * keep their leases by heartbeat, start in lane-priority order, are handed back
   * unstarted at shutdown, and still obey Kale's time budget when they start. 0 turns
   * prefetching off. Default: room for one batch in flight while another waits to run,
   * `max(B, 2 × B − concurrency)` with B the largest `batchSize` among the served lanes
   * (so just B when batches are no larger than `concurrency`).
   */
  prefetch?: number;
  /** Serve only these lanes (config names). Default: all. */
  lanes?: string[];
  /** How long a ready count learned from a reserve or probe is trusted, ms. Default 1_000. */
  hintTtlMs?: number;
  /** Heartbeat period, ms. Default a third of the shortest lease among served lanes. */
  heartbeatMs?: number;
  /** First back-off after an infrastructure error, ms (doubles to 30 s). Default 250. */
  errorBackoffMs?: number;
}

export interface StopOptions {
  /** How long running jobs may finish before they are aborted and handed back, ms. Default 30_000. */
  graceMs?: number;
}

export interface Worker {
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

export interface WorkerMetrics {
  /** Times the selector picked each lane. */
  selected: Record<string, number>;
  /** Reserve calls per lane, and how many of them came back empty. */
  reserves: Record<string, number>;
  emptyReserves: Record<string, number>;
  /** Jobs reserved per lane. */
  jobs: Record<string, number>;
}

interface LaneState {
  lane: Lane;
  config: LaneConfig;
  store: LaneStore;
  hint: number | undefined;
  hintAt: number;
  /** This lane's held jobs by id (for events that name a job). */
  held: Map<string, HeldJob>;
  /** Where this lane's dispatched jobs wait for a runner: its priority's FIFO. */
  waiting: Fifo<HeldJob>;
}

type Ending =
  | { kind: "success" }
  | { kind: "failure"; error: unknown; reason?: JobError["reason"] }
  | { kind: "dead"; error: JobError }
  | { kind: "release" };

/** One reserved job while this worker holds its lease. */
interface HeldJob {
  lane: LaneState;
  job: ReservedJob;
  task: AnyTask | undefined;
  startedAt: number;
  running: boolean;
  /** Set once the job's outcome is decided; later outcomes are ignored. */
  settled: boolean;
  /** Set while its ack/nack/release is in flight (no heartbeats then). */
  finishing: boolean;
  abortReason: Error | undefined;
  controller: AbortController | undefined;
  /** Ends the handler race early (time limit, lease lost, cancel, shutdown). */
  interrupt: (() => void) | undefined;
  timer: unknown;
}

const MAX_STACK = 8_192;

export function toJobError(error: unknown, reason: JobError["reason"]): JobError {
  if (error instanceof Error) {
    const out: JobError = { name: error.name, message: error.message, reason };
    if (error.stack) out.stack = error.stack.slice(0, MAX_STACK);
    return out;
  }
  return { name: "Error", message: typeof error === "string" ? error : safeString(error), reason };
}

function safeString(v: unknown): string {
  try {
    return JSON.stringify(v) ?? String(v);
  } catch {
    return String(v);
  }
}

export function createWorker(client: ClientInternals, options: WorkerOptions): Worker {
  const concurrency = options.concurrency ?? 10;
  if (!(Number.isInteger(concurrency) && concurrency >= 1)) {
    throw new ConfigError("worker.concurrency", concurrency, "must be an integer >= 1");
  }
  const names = options.lanes ?? [...client.configs.keys()];
  if (!Array.isArray(names) || names.length === 0)
    throw new ConfigError("worker.lanes", names, "must be a non-empty array");
  for (const [i, n] of names.entries()) {
    if (!client.configs.has(n)) throw new ConfigError(`worker.lanes[${i}]`, n, "no such lane");
  }
  const hintTtlMs = options.hintTtlMs ?? 1_000;
  const errorBackoffMs = options.errorBackoffMs ?? 250;
  const configs = names.map((n) => client.configs.get(n) as LaneConfig);
  const heartbeatMs =
    options.heartbeatMs ?? Math.max(50, Math.floor(Math.min(...configs.map((c) => c.leaseMs)) / 3));
  const { adapter, clock, events } = client;
  const caps = adapter.capabilities;

  const selector = client.makeSelector();
  // Double buffering by default: while one batch waits in the buffer (or runs), the next
  // can be in flight. With batches larger than concurrency, one batch of prefetch would
  // leave no room for a reserve ahead, and a worker whose jobs finish quickly would idle
  // for a round trip per batch (measured on Redis, c=10 and batches of 100: +25% jobs/s).
  const largestBatch = Math.max(...configs.map((c) => c.batchSize));
  const prefetch = options.prefetch ?? Math.max(largestBatch, 2 * largestBatch - concurrency);
  if (!(Number.isInteger(prefetch) && prefetch >= 0)) {
    throw new ConfigError("worker.prefetch", prefetch, "must be an integer >= 0");
  }
  /** Jobs this worker may hold at once: running plus prefetched. */
  const capacity = concurrency + prefetch;
  const pool = new PQueue({ concurrency });
  /** Jobs waiting for a runner, one FIFO per lane priority, highest priority first. */
  const waiting = new Map(
    [...new Set(configs.map((c) => c.priority))]
      .sort((a, b) => b - a)
      .map((priority) => [priority, new Fifo<HeldJob>()]),
  );
  /** Runners in the pool (at most `concurrency`). */
  let runners = 0;
  /** Set at the end of stop: runners that find no job end instead of parking. */
  let stopRunners = false;
  /** Runners waiting for a job: resolve with true to run, false to end. */
  const parked: Array<(run: boolean) => void> = [];
  /** Jobs dispatched whose run has not ended, waiting or running (counted here, not by
   * p-queue, so the loop learns of a free slot without an event per job). */
  let active = 0;
  let onSlotFree: (() => void) | undefined;
  const slotFree = () => {
    const wake = onSlotFree;
    onSlotFree = undefined;
    wake?.();
  };
  const held = new Set<HeldJob>();
  const heldDrained = new EventEmitter<{ empty: () => void }>();
  let lanes: LaneState[] = [];
  const laneByFullName = new Map<string, LaneState>();
  let running = false;
  let stopping = false;
  let loopDone: Promise<void> = Promise.resolve();
  let stopPromise: Promise<void> | undefined;
  let heartbeatTimer: unknown;
  let unsubscribe: (() => Promise<void>) | undefined;
  /** Aborts the current long poll (shutdown, or a local publish to another lane). */
  let pollController: AbortController | undefined;
  /** The lane of the current reserve call. */
  let pollLane: LaneState | undefined;
  let drainedEmitted = false;
  const metrics: WorkerMetrics = { selected: {}, reserves: {}, emptyReserves: {}, jobs: {} };
  const bump = (m: Record<string, number>, k: string, n = 1) => {
    m[k] = (m[k] ?? 0) + n;
  };

  // ── hints ─────────────────────────────────────────────────────────────────────────
  const hintOf = (ls: LaneState): number | undefined =>
    ls.hint !== undefined && clock.now() - ls.hintAt <= hintTtlMs ? ls.hint : undefined;
  const setHint = (ls: LaneState, n: number | undefined) => {
    ls.hint = n;
    ls.hintAt = clock.now();
  };
  const selection: SelectionContext = {
    get lanes() {
      return lanes.map((l) => l.lane);
    },
    readyHint: (lane) => {
      const ls = lanes.find((l) => l.lane === lane);
      return ls ? hintOf(ls) : undefined;
    },
    probe: async (lane) => {
      const ls = lanes.find((l) => l.lane === lane);
      if (!ls) return 0;
      const n = await ls.store.probe();
      setHint(ls, n);
      return n;
    },
    limitTurn: (maxJobs) => {
      turnCap = Math.max(1, Math.floor(maxJobs) || 1);
    },
  };
  /** The cap a selector put on the turn it is choosing (`limitTurn`), if any. */
  let turnCap: number | undefined;

  const onLocalPublish = (laneName: string) => {
    const ls = lanes.find((l) => l.config.name === laneName);
    if (!ls) return;
    setHint(ls, undefined);
    // End a long poll on another lane so the new job starts now, not after longPollMs. A
    // poll on this very lane is woken by the backend itself (the contract requires it):
    // aborting it would only cost a round trip.
    if (pollLane !== ls && pollController && !pollController.signal.aborted) pollController.abort();
  };

  // ── settling ──────────────────────────────────────────────────────────────────────
  type NackEntry = { h: HeldJob; item: NackItem };
  type Pending = { acks: HeldJob[]; nacks: NackEntry[]; releases: HeldJob[] };
  const pendingByLane = new Map<LaneState, Pending>();
  let flushScheduled = false;

  /** The lease is no longer ours: stop tracking the job. */
  const forget = (h: HeldJob) => {
    if (!held.delete(h)) return;
    h.lane.held.delete(h.job.id);
    if (held.size === 0) heldDrained.emit("empty");
  };

  const hold = (h: HeldJob) => {
    held.add(h);
    h.lane.held.set(h.job.id, h);
  };

  const abortJob = (h: HeldJob, reason: Error) => {
    h.abortReason = reason;
    if (h.timer !== undefined) clock.clearTimeout(h.timer as never);
    h.controller?.abort(reason);
    h.interrupt?.();
  };

  /**
   * The lease is gone (lost, canceled, moved). From a heartbeat or an adapter event the
   * handler may still run: abort it. From an ack/nack answer (`answered`) it has ended.
   */
  const loseJob = (h: HeldJob, status: "lost" | "canceled" | "put", answered = false) => {
    if (h.settled && !answered) return; // its ack/nack is in flight: that answer decides
    h.settled = true;
    const ref = { lane: h.lane.config.name, jobId: h.job.id, task: h.job.task };
    const reason =
      status === "canceled" ? new CanceledError(h.job.id) : new LockLostError(h.job.id);
    if (!answered) abortJob(h, reason);
    if (status === "canceled") events.emit("canceled", ref);
    else {
      if (status === "lost" && clock.now() > h.job.lock.expiresAt) events.emit("stalled", ref);
      events.emit(status === "put" ? "put" : "lock_lost", ref);
    }
    forget(h);
  };

  const scheduleFlush = () => {
    if (flushScheduled) return;
    flushScheduled = true;
    // setImmediate gathers every job that finished in this turn into one adapter call.
    setImmediate(() => {
      flushScheduled = false;
      void flushAll();
    });
  };

  const pendingFor = (ls: LaneState): Pending => {
    let p = pendingByLane.get(ls);
    if (!p) {
      p = { acks: [], nacks: [], releases: [] };
      pendingByLane.set(ls, p);
    }
    return p;
  };

  const flushAll = async (): Promise<void> => {
    const work: Promise<void>[] = [];
    for (const [ls, p] of pendingByLane) {
      if (p.acks.length + p.nacks.length + p.releases.length === 0) continue;
      pendingByLane.set(ls, { acks: [], nacks: [], releases: [] });
      work.push(flushLane(ls, p));
    }
    await Promise.all(work);
  };

  const chunks = <T>(items: T[]): T[][] => {
    if (items.length <= caps.maxBatch) return items.length === 0 ? [] : [items];
    const out: T[][] = [];
    for (let i = 0; i < items.length; i += caps.maxBatch)
      out.push(items.slice(i, i + caps.maxBatch));
    return out;
  };

  /** Send one kind of settling call in batches; "ok" runs `onOk`, anything else loses the job. */
  const sendBatched = async <T>(
    ls: LaneState,
    items: T[],
    holder: (item: T) => HeldJob,
    call: (batch: T[]) => Promise<LockStatus[]>,
    onOk: (item: T) => void,
    during: string,
  ): Promise<void> => {
    for (const batch of chunks(items)) {
      let statuses: LockStatus[];
      try {
        statuses = await call(batch);
      } catch (error) {
        // Infrastructure failure: the outcome is unknown. The lease will expire and the
        // job will be delivered again (at least once), so stop tracking it here.
        events.emit("error", { error, during, lane: ls.config.name });
        for (const item of batch) forget(holder(item));
        continue;
      }
      batch.forEach((item, i) => {
        const s = statuses[i] ?? "lost";
        if (s === "ok") {
          onOk(item);
          forget(holder(item));
        } else loseJob(holder(item), s, true);
      });
    }
  };

  const flushLane = async (ls: LaneState, p: Pending): Promise<void> => {
    const lane = ls.config.name;
    const self = (h: HeldJob) => h;
    await Promise.all([
      sendBatched(
        ls,
        p.acks,
        self,
        (b) => ls.store.ack(b.map((h) => h.job.lock)),
        (h) =>
          events.emit("succeeded", {
            lane,
            jobId: h.job.id,
            task: h.job.task,
            attempt: h.job.attempt,
            runMs: clock.now() - h.startedAt,
          }),
        "ack",
      ),
      sendBatched(
        ls,
        p.nacks,
        (n) => n.h,
        (b) => ls.store.nack(b.map((n) => n.item)),
        ({ h, item }) => {
          const ref = {
            lane,
            jobId: h.job.id,
            task: h.job.task,
            attempt: h.job.attempt,
            error: item.error,
          };
          if ("dead" in item) events.emit("failed", ref);
          else events.emit("retrying", { ...ref, runAt: item.runAt });
        },
        "nack",
      ),
      sendBatched(
        ls,
        p.releases,
        self,
        (b) => ls.store.release(b.map((h) => ({ lock: h.job.lock, uncounted: true as const }))),
        () => {},
        "release",
      ),
    ]);
  };

  /** Decide a held job's outcome (once) and queue the matching adapter call. */
  const settle = (h: HeldJob, ending: Ending) => {
    if (h.settled) return;
    h.settled = true;
    h.finishing = true;
    if (h.timer !== undefined) clock.clearTimeout(h.timer as never);
    const p = pendingFor(h.lane);
    if (ending.kind === "success") p.acks.push(h);
    else if (ending.kind === "release") p.releases.push(h);
    else if (ending.kind === "dead")
      p.nacks.push({ h, item: { lock: h.job.lock, dead: true, error: ending.error } });
    else {
      const task = h.task;
      const unrecoverable = ending.error instanceof UnrecoverableError;
      const error = toJobError(
        ending.error,
        ending.reason ?? (unrecoverable ? "unrecoverable" : "error"),
      );
      if (!task || unrecoverable || h.job.attempt >= task.retry.maxAttempts) {
        p.nacks.push({ h, item: { lock: h.job.lock, dead: true, error } });
      } else {
        const runAt = clock.now() + backoffMs(task.retry, h.job.attempt, client.random);
        p.nacks.push({ h, item: { lock: h.job.lock, runAt, error } });
      }
    }
    scheduleFlush();
  };

  // ── running one job ───────────────────────────────────────────────────────────────
  /** A handler's context. A class, so a job costs one small object rather than closures. */
  class Context implements JobContext {
    readonly #h: HeldJob;
    readonly appData: unknown;
    constructor(h: HeldJob, appData: unknown) {
      this.#h = h;
      this.appData = appData;
    }
    get jobId() {
      return this.#h.job.id;
    }
    get attempt() {
      return this.#h.job.attempt;
    }
    get maxAttempts() {
      return this.#h.task?.retry.maxAttempts ?? 1;
    }
    get lane() {
      return this.#h.lane.config.name;
    }
    get task() {
      return this.#h.job.task;
    }
    // Created on first use: an AbortController per job costs more than many handlers do.
    get signal(): AbortSignal {
      const h = this.#h;
      if (!h.controller) {
        h.controller = new AbortController();
        if (h.abortReason) h.controller.abort(h.abortReason);
      }
      return h.controller.signal;
    }
    async heartbeat(): Promise<boolean> {
      const h = this.#h;
      if (h.settled) return false;
      const now = clock.now();
      const [s] = await h.lane.store.extend([h.job.lock], h.lane.config.leaseMs);
      if (s === "ok") {
        h.job.lock.expiresAt = now + h.lane.config.leaseMs;
        return true;
      }
      loseJob(h, s ?? "lost");
      return false;
    }
    progress(value: unknown): void {
      const h = this.#h;
      events.emit("progress", {
        lane: h.lane.config.name,
        jobId: h.job.id,
        task: h.job.task,
        value,
      });
    }
    log(message: string): void {
      this.progress({ log: message });
    }
  }

  const execute = async (h: HeldJob): Promise<void> => {
    if (h.settled) return;
    if (stopping) {
      // A prefetched job that had not started when the worker began to stop: hand it
      // back at once, unstarted and uncounted, for another worker.
      settle(h, { kind: "release" });
      return;
    }
    const job = h.job;
    if (job.malformed !== undefined) {
      settle(h, {
        kind: "dead",
        error: { name: "MalformedJobError", message: job.malformed, reason: "malformed" },
      });
      return;
    }
    const task = h.task;
    if (!task) {
      settle(h, {
        kind: "dead",
        error: {
          name: "UnknownTaskError",
          message: `No worker task named "${job.task}"`,
          reason: "unknown_task",
        },
      });
      return;
    }
    // Kale's time budget: never start what cannot finish inside the lease we hold.
    if (task.timeLimitMs !== undefined && clock.now() + task.timeLimitMs > job.lock.expiresAt) {
      settle(h, { kind: "release" });
      return;
    }
    let payload: unknown;
    let appData: unknown;
    try {
      const raw = decodeJson(job.payload);
      appData = job.appData === undefined ? undefined : decodeJson(job.appData);
      const v = validatePayload(task, raw);
      payload = v instanceof Promise ? await v : v;
    } catch (error) {
      const reason = error instanceof ValidationError ? "invalid_payload" : "malformed";
      settle(h, { kind: "dead", error: toJobError(error, reason) });
      return;
    }
    if (h.settled) return;
    h.running = true;
    h.startedAt = clock.now();
    // Most services do not listen to `started`; skip building its payload then.
    if (events.listenerCount("started") > 0) {
      events.emit("started", {
        lane: h.lane.config.name,
        jobId: job.id,
        task: job.task,
        attempt: job.attempt,
      });
    }
    const ctx = new Context(h, appData);
    if (task.timeLimitMs !== undefined) {
      const limit = task.timeLimitMs;
      h.timer = clock.setTimeout(() => {
        if (h.settled) return;
        const err = new TimeoutError(task.name, limit);
        abortJob(h, err);
        settle(h, { kind: "failure", error: err, reason: "timeout" });
      }, limit);
    }
    try {
      const result = task.run(payload, ctx);
      if (result instanceof Promise) {
        // Race the handler against an interrupt, so a handler that ignores its signal
        // does not keep a slot (or the shutdown) waiting forever.
        await new Promise<void>((resolve, reject) => {
          h.interrupt = resolve;
          result.then(() => resolve(), reject);
        });
      }
      if (!h.settled) settle(h, { kind: "success" });
    } catch (error) {
      if (!h.settled) settle(h, { kind: "failure", error });
    } finally {
      h.running = false;
      h.interrupt = undefined;
    }
  };

  /** Start holding a reserved job (its lease is ours until it settles). */
  const holdJob = (ls: LaneState, job: ReservedJob, task: AnyTask | undefined): HeldJob => {
    const h: HeldJob = {
      lane: ls,
      job,
      task,
      startedAt: clock.now(),
      running: false,
      settled: false,
      finishing: false,
      abortReason: undefined,
      controller: undefined,
      interrupt: undefined,
      timer: undefined,
    };
    hold(h);
    return h;
  };

  const dispatch = (ls: LaneState, job: ReservedJob) => {
    const h = holdJob(ls, job, client.tasks.get(job.task));
    drainedEmitted = false;
    active++;
    ls.waiting.push(h);
    const wake = parked.pop();
    if (wake !== undefined) wake(true);
    else if (runners < concurrency) {
      runners++;
      void pool.add(runner);
    }
  };

  /** The next job to start: the highest lane priority first, FIFO within one. */
  const nextWaiting = (): HeldJob | undefined => {
    for (const jobs of waiting.values()) {
      const h = jobs.shift();
      if (h !== undefined) return h;
    }
    return undefined;
  };

  /**
   * One pool task: runs waiting jobs one after another; with none waiting it parks until
   * dispatch wakes it (or the worker stops). Every job dispatched either wakes a parked
   * runner or, below `concurrency`, starts one, so no job waits while a runner is free.
   * A woken runner may find the job taken by a busier one: it parks again.
   */
  const runner = async (): Promise<void> => {
    for (;;) {
      const h = nextWaiting();
      if (h !== undefined) {
        await runJob(h);
        continue;
      }
      if (stopRunners) break;
      const run = await new Promise<boolean>((resolve) => parked.push(resolve));
      if (!run) break;
    }
    runners--;
  };

  /** End the parked runners (at the end of stop). */
  const endRunners = () => {
    stopRunners = true;
    for (const wake of parked.splice(0)) wake(false);
  };

  /** Run one job: never rejects, and frees its slot when the job's run ends. */
  const runJob = async (h: HeldJob): Promise<void> => {
    try {
      await execute(h);
    } catch (error) {
      events.emit("error", { error, during: "execute", lane: h.lane.config.name });
    } finally {
      active--;
      slotFree();
    }
  };

  // ── heartbeats ────────────────────────────────────────────────────────────────────
  const heartbeat = async () => {
    const byLane = new Map<LaneState, HeldJob[]>();
    for (const h of held.values()) {
      if (h.settled || h.finishing) continue;
      const list = byLane.get(h.lane);
      if (list) list.push(h);
      else byLane.set(h.lane, [h]);
    }
    await Promise.all(
      [...byLane].map(async ([ls, hs]) => {
        for (const batch of chunks(hs)) {
          const now = clock.now();
          try {
            const statuses = await ls.store.extend(
              batch.map((h) => h.job.lock),
              ls.config.leaseMs,
            );
            batch.forEach((h, i) => {
              const s = statuses[i] ?? "lost";
              if (s === "ok") h.job.lock.expiresAt = now + ls.config.leaseMs;
              else loseJob(h, s);
            });
          } catch (error) {
            events.emit("error", { error, during: "heartbeat", lane: ls.config.name });
          }
        }
      }),
    );
  };

  const scheduleHeartbeat = () => {
    heartbeatTimer = clock.setTimeout(() => {
      void heartbeat().finally(() => {
        if (running) scheduleHeartbeat();
      });
    }, heartbeatMs);
  };

  const onAdapterEvent = (event: AdapterEvent) => {
    // Only these two stop a handler; lifecycle events (another worker's "started", ...)
    // only report.
    if (isLifecycleEvent(event)) return;
    const ls = laneByFullName.get(event.lane);
    if (!ls) return;
    const h = ls.held.get(event.jobId);
    if (h) loseJob(h, event.type);
  };

  // ── the loop ──────────────────────────────────────────────────────────────────────
  /**
   * Whether a reserve is worth making while `holding` jobs are held and unfinished: a
   * slot is idle, or (with prefetch) the buffer of unstarted jobs has room for a whole
   * refill. Refilling only when the buffer has drained keeps batches full instead of
   * reserving one job per freed slot.
   */
  const hasRoom = (ls: LaneState, holding: number) => {
    const room = capacity - holding;
    return room >= 1 && (holding < concurrency || room >= Math.min(ls.config.batchSize, prefetch));
  };

  const waitForRoom = async (ls: LaneState) => {
    while (!stopping && !hasRoom(ls, active)) {
      await new Promise<void>((resolve) => {
        onSlotFree = resolve;
      });
    }
  };

  const countReserve = (ls: LaneState, got: number) => {
    bump(metrics.reserves, ls.config.name);
    if (got === 0) bump(metrics.emptyReserves, ls.config.name);
    else bump(metrics.jobs, ls.config.name, got);
  };

  /** Reserve on `ls` with room for `heldNow` jobs already held. */
  const reserveFrom = (
    ls: LaneState,
    waitMs: number,
    heldNow: number,
    cap = Number.POSITIVE_INFINITY,
  ): Promise<ReserveResult> & { limit: number } => {
    const limit = Math.min(capacity - heldNow, ls.config.batchSize, caps.maxBatch, cap);
    const promise = ls.store.reserve({
      limit,
      leaseMs: ls.config.leaseMs,
      waitMs,
      ...(pollController ? { signal: pollController.signal } : {}),
    });
    return Object.assign(promise, { limit });
  };

  /**
   * A stay on one lane: up to numIterations reserves. While the lane has work, the next
   * reserve is sent *before* the jobs just received are dispatched (when the capacity
   * rule above allows it counting them), so the backend round trip overlaps with running
   * them. Without this, jobs that finish quickly leave the worker idle for one round trip
   * per batch: with no-op jobs on Redis, half of the wall time.
   *
   * A turn the selector capped (`limitTurn`) is one reserve of at most `cap` jobs that
   * never long-polls: a quick look at a lane, not a stay.
   */
  const serveLane = async (ls: LaneState, cap?: number): Promise<number> => {
    const iterations = cap === undefined ? ls.config.numIterations : 1;
    let ahead: (Promise<ReserveResult> & { limit: number }) | undefined;
    let taken = 0;
    try {
      for (let i = 0; i < iterations && !stopping; i++) {
        let pending = ahead;
        ahead = undefined;
        if (pending === undefined) {
          await waitForRoom(ls);
          if (stopping) return taken;
          const allEmpty = lanes.every((l) => hintOf(l) === 0);
          let waitMs = 0;
          if (i === 0 && allEmpty && cap === undefined) {
            waitMs = Math.min(ls.config.longPollMs, caps.maxWaitMs);
            if (!drainedEmitted && held.size === 0) {
              drainedEmitted = true;
              events.emit("drained", { lanes: lanes.map((l) => l.config.name) });
            }
          }
          pollController = new AbortController();
          pollLane = ls;
          try {
            pending = reserveFrom(ls, waitMs, active, cap);
            await pending;
          } finally {
            pollController = undefined;
            pollLane = undefined;
          }
        }
        const { limit } = pending;
        const result = await pending;
        const got = result.jobs.length;
        taken += got;
        countReserve(ls, got);
        setHint(ls, result.ready ?? (got < limit ? 0 : undefined));
        if (stopping) {
          // Reserved while shutting down: hand them back at once, unstarted and uncounted.
          for (const job of result.jobs) dispatchRelease(ls, job);
          return taken;
        }
        // Leave the lane when it is known empty: an empty batch, or a short one (the
        // backend had no more). Staying would cost one more, empty, reserve per visit.
        const leave = got === 0 || ls.hint === 0;
        if (!leave && i + 1 < iterations && hasRoom(ls, active + got)) {
          // The jobs just received count as held: they are dispatched right below.
          ahead = reserveFrom(ls, 0, active + got);
          // Never an unhandled rejection: the next iteration (or the finally) awaits it.
          ahead.catch(() => {});
        }
        for (const job of result.jobs) dispatch(ls, job);
        if (leave) return taken;
      }
      return taken;
    } finally {
      if (ahead !== undefined) {
        // The stay ended (stop, an error, or the last iteration raced the reserve) with a
        // reserve still in flight: its jobs are held, so hand them back or run them.
        const late = await ahead.catch(() => undefined);
        if (late !== undefined) countReserve(ls, late.jobs.length);
        for (const job of late?.jobs ?? []) {
          if (stopping) dispatchRelease(ls, job);
          else dispatch(ls, job);
        }
      }
    }
  };

  const dispatchRelease = (ls: LaneState, job: ReservedJob) => {
    const h = holdJob(ls, job, undefined);
    settle(h, { kind: "release" });
  };

  const loop = async () => {
    let backoff = errorBackoffMs;
    let lastCappedEmpty = false;
    while (!stopping) {
      try {
        turnCap = undefined;
        const lane = await selector.select(selection);
        let cap = turnCap;
        // A capped turn never long-polls; two in a row that find every lane empty would
        // spin. The second one is served as a normal turn instead, which waits.
        if (cap !== undefined && lastCappedEmpty && lanes.every((l) => hintOf(l) === 0)) {
          cap = undefined;
        }
        const ls = lanes.find((l) => l.lane === lane) ?? lanes[0];
        if (!ls) return;
        bump(metrics.selected, ls.config.name);
        const got = await serveLane(ls, cap);
        lastCappedEmpty = cap !== undefined && got === 0;
        backoff = errorBackoffMs;
      } catch (error) {
        if (stopping) break;
        if (error instanceof ClosedError) {
          events.emit("error", { error, during: "reserve" });
          break;
        }
        events.emit("error", { error, during: "loop" });
        try {
          await sleep(clock, backoff, stopSignal.signal);
        } catch {
          break;
        }
        backoff = Math.min(backoff * 2, 30_000);
      }
    }
  };

  const stopSignal = new AbortController();

  return {
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
      const stores = await Promise.all(configs.map((c) => client.openLane(c.name)));
      lanes = configs.map((config, i) => ({
        lane: { name: config.name, priority: config.priority },
        config,
        store: stores[i] as LaneStore,
        hint: undefined,
        hintAt: 0,
        held: new Map(),
        waiting: waiting.get(config.priority) as Fifo<HeldJob>,
      }));
      for (const ls of lanes) laneByFullName.set(ls.store.name, ls);
      if (adapter.subscribe && caps.subscribe)
        unsubscribe = await adapter.subscribe(onAdapterEvent, { lifecycle: false });
      client.onLocalPublish.add(onLocalPublish);
      running = true;
      scheduleHeartbeat();
      loopDone = loop();
    },
    stop({ graceMs = 30_000 }: StopOptions = {}) {
      if (stopPromise) return stopPromise;
      stopPromise = (async () => {
        stopping = true;
        stopSignal.abort();
        pollController?.abort();
        slotFree();
        client.onLocalPublish.delete(onLocalPublish);
        await loopDone;
        // Wait for running handlers up to graceMs, then abort and hand back the rest.
        // Prefetched jobs that have not started go back now, not after the running ones.
        for (const h of held) {
          if (!h.running && !h.settled) settle(h, { kind: "release" });
        }
        // Runners now end once nothing waits, so the pool goes idle when the last
        // running handler ends (the released jobs are skipped as settled).
        endRunners();
        if (active > 0 && graceMs > 0) {
          const graceTimer = new AbortController();
          await Promise.race([
            pool.onIdle(),
            sleep(clock, graceMs, graceTimer.signal).catch(() => {}),
          ]);
          graceTimer.abort();
        }
        for (const h of held) {
          if (!h.settled) {
            abortJob(h, new ShutdownError());
            settle(h, { kind: "release" });
          }
        }
        await flushAll();
        while (held.size > 0) {
          await new Promise<void>((resolve) => {
            heldDrained.once("empty", resolve);
            scheduleFlush();
          });
        }
        running = false;
        if (heartbeatTimer !== undefined) clock.clearTimeout(heartbeatTimer as never);
        await unsubscribe?.();
      })();
      return stopPromise;
    },
  };
}

export type { Lock };
