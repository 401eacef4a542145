/**
 * What every fault scenario stands on: a backend (a redis-server of our own, behind one
 * fault proxy per worker slot; or fauxqs in this process), forked worker processes writing
 * ledgers, a producer, the fault log, and at the end the drain, the store's final state
 * and the checker. A scenario is its setup, its faults and its figures on top of this.
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import {
  createTasklane,
  type JobState,
  type LaneConfigInput,
  type LaneHandle,
  type RetryOptions,
  type Tasklane,
} from "@tasklane/core";
import { type CheckResult, check, type StoredJob, type StoreState } from "./checker.ts";
import { type FaultProxy, startFaultProxy } from "./fault-proxy.ts";
import { createFaultLog, type FaultLog } from "./faults.ts";
import { readLedgers } from "./ledger.ts";
import { createProducer, type Producer } from "./producer.ts";
import { buildFacts, type LedgerFacts } from "./runs.ts";
import { type ChaosSqs, startChaosSqs } from "./servers/fauxqs-server.ts";
import { waitFor } from "./servers/free-port.ts";
import { type ChaosRedis, startChaosRedis } from "./servers/redis-server.ts";
import { sqsDeadLetters } from "./servers/sqs-dead-letters.ts";
import { startStallMonitor } from "./stall-monitor.ts";
import { type ChaosTask, defineChaosTask } from "./worker/chaos-task.ts";
import { type BackendSpec, createBackendAdapter, type WorkerSpec } from "./worker/worker-spec.ts";
import { createWorkerPool, type StopReport, type WorkerPool } from "./worker-pool.ts";

export const LANE = "chaos";

/** Keep every finished job for the checker (the defaults drop all but the last 1,000). */
const KEEP_ALL = { maxAgeMs: 86_400_000, maxCount: 100_000_000 };

export interface HarnessOptions {
  /** Names the run's directory, key prefix and job ids. */
  name: string;
  runDir: string;
  backend: "redis" | "sqs";
  /** redis-server persistence (see RedisServerOptions). */
  appendfsync?: "always" | "everysec";
  workers: number;
  concurrency: number;
  prefetch?: number;
  lane: Omit<LaneConfigInput, "name" | "retention" | "historyLimit">;
  retry?: RetryOptions;
  mode?: "full" | "summary";
  heapSampleMs?: number;
  /** The Redis adapter's maxBlockMs in the workers. */
  maxBlockMs?: number;
  /** Put a fault proxy between each worker and redis-server. Default true. */
  proxy?: boolean;
  /**
   * "keep-all" (default): every finished job stays, so the checker can read each one's
   * final state. "default": the lane's default retention, as users run it.
   */
  retention?: "keep-all" | "default";
}

export interface Finished {
  result: CheckResult;
  facts: LedgerFacts;
  stop: StopReport;
  store: StoreState;
}

export interface Harness {
  readonly options: HarnessOptions;
  readonly dir: string;
  readonly redis?: ChaosRedis;
  readonly sqs?: ChaosSqs;
  /** One per worker slot (Redis). */
  readonly proxies: FaultProxy[];
  readonly faults: FaultLog;
  readonly pool: WorkerPool;
  readonly producer: Producer;
  readonly task: ChaosTask;
  /** The orchestrator's own client (straight to the server, no proxy). */
  readonly tl: Tasklane;
  readonly lane: LaneHandle;
  readonly leaseMs: number;
  /** Jobs waiting, delayed or active now. */
  pending(): Promise<number>;
  /**
   * Jobs finished so far: acknowledged publishes minus pending jobs (SQS keeps no count of
   * finished messages, so this one formula serves both backends).
   */
  finishedCount(): Promise<number>;
  /** Wait until nothing is pending; false on timeout. */
  drain(timeoutMs: number): Promise<boolean>;
  /**
   * Stop the workers, read the store and the ledgers, and check. Without `readStore` the
   * store is not listed job by job (the depth run's million jobs): only its counts.
   */
  finish(options?: { readStore?: boolean }): Promise<Finished>;
  teardown(): Promise<void>;
}

export async function createHarness(options: HarnessOptions): Promise<Harness> {
  const dir = join(options.runDir, options.name);
  mkdirSync(dir, { recursive: true });
  const faults = createFaultLog();
  const laneConfig: LaneConfigInput = {
    ...options.lane,
    name: LANE,
    historyLimit: 200,
    ...(options.retention === "default"
      ? {}
      : { retention: { succeeded: KEEP_ALL, failed: KEEP_ALL, canceled: KEEP_ALL } }),
  };
  const leaseMs = options.lane.leaseMs ?? 60_000;
  const retry = options.retry ?? { maxAttempts: 3, baseMs: 500, jitter: 0 };

  let redis: ChaosRedis | undefined;
  let sqs: ChaosSqs | undefined;
  const proxies: FaultProxy[] = [];
  let parentBackend: BackendSpec;
  let workerBackend: (slot: number) => BackendSpec;
  if (options.backend === "redis") {
    redis = await startChaosRedis(
      options.appendfsync === undefined ? {} : { appendfsync: options.appendfsync },
    );
    const r = redis;
    const proxied = options.proxy !== false;
    for (let i = 0; proxied && i < options.workers; i++) {
      proxies.push(await startFaultProxy({ host: r.host, port: r.port }));
    }
    const prefix = `chaos-${options.name}`;
    parentBackend = { kind: "redis", host: r.host, port: r.port, prefix };
    workerBackend = (slot) => ({
      kind: "redis",
      host: r.host,
      port: proxies[slot]?.port ?? r.port,
      prefix,
      ...(options.maxBlockMs === undefined ? {} : { maxBlockMs: options.maxBlockMs }),
    });
  } else {
    sqs = await startChaosSqs();
    const s = sqs;
    const backend: BackendSpec = {
      kind: "sqs",
      endpoint: s.endpoint,
      region: s.region,
      queuePrefix: `chaos-${options.name}-`,
    };
    parentBackend = backend;
    workerBackend = () => backend;
  }

  const task: ChaosTask = defineChaosTask(LANE, retry);
  const tl = createTasklane({
    adapter: createBackendAdapter(parentBackend),
    lanes: [laneConfig],
    tasks: [task],
  });
  tl.events.on("error", () => {});
  const lane = tl.lane(LANE);
  await waitFor(async () => (await lane.counts()) !== undefined, "the lane to open", 30_000);
  const producer = createProducer({ tl, task, prefix: options.name });

  const spec = (slot: number): WorkerSpec => ({
    slot,
    ledgerDir: dir,
    mode: options.mode ?? "full",
    backend: workerBackend(slot),
    lane: laneConfig,
    retry,
    concurrency: options.concurrency,
    ...(options.prefetch === undefined ? {} : { prefetch: options.prefetch }),
    ...(options.heapSampleMs === undefined ? {} : { heapSampleMs: options.heapSampleMs }),
    lagThresholdMs: 100,
  });
  const pool = createWorkerPool({ size: options.workers, spec, runDir: dir, faults });
  const monitor = startStallMonitor({
    faults,
    thresholdMs: leaseMs / 3,
    ...(redis === undefined ? {} : { redis: redis.admin }),
  });

  const pending = async () => {
    const c = await lane.counts();
    return c.waiting + c.delayed + c.active;
  };

  const storeState = async (): Promise<StoreState> => {
    if (options.backend === "sqs") {
      const counts = await lane.counts();
      if (sqs === undefined) return { kind: "counts", counts };
      const deadLetters = await sqsDeadLetters(sqs, `chaos-${options.name}-`);
      return { kind: "counts", counts, deadLetters };
    }
    const jobs = new Map<string, StoredJob>();
    const states: JobState[] = ["waiting", "delayed", "active", "succeeded", "failed", "canceled"];
    for (const state of states) {
      for await (const info of lane.list({ state, pageSize: 1_000 })) {
        let job = jobs.get(info.id);
        if (job === undefined) {
          job = { states: [], attempt: info.attempt, succeededInHistory: 0 };
          jobs.set(info.id, job);
        }
        job.states.push(state);
        job.succeededInHistory = Math.max(
          job.succeededInHistory,
          info.history.filter((h) => h.event === "succeeded").length,
        );
        if (info.error !== undefined) job.reason = info.error.reason;
      }
    }
    return { kind: "jobs", jobs };
  };

  return {
    options,
    dir,
    ...(redis === undefined ? {} : { redis }),
    ...(sqs === undefined ? {} : { sqs }),
    proxies,
    faults,
    pool,
    producer,
    task,
    tl,
    lane,
    leaseMs,
    pending,
    async finishedCount() {
      return producer.acked.size - (await pending());
    },
    async drain(timeoutMs) {
      try {
        await waitFor(async () => (await pending()) === 0, "every job to finish", timeoutMs, 100);
        return true;
      } catch {
        return false;
      }
    },
    async finish({ readStore = true } = {}) {
      await pool.settled();
      const stop = await pool.stop(5_000);
      monitor.stop();
      const store: StoreState = readStore
        ? await storeState()
        : { kind: "counts", counts: await lane.counts() };
      // Kept beside the ledgers, for reading a failed run afterwards.
      writeFileSync(join(dir, "faults.json"), `${JSON.stringify(faults.faults, null, 1)}\n`);
      const facts = buildFacts(readLedgers(dir), leaseMs);
      const result = check({
        attempted: new Set(producer.attempted.keys()),
        acked: producer.acked,
        facts,
        faults: faults.faults,
        store,
        leaseMs,
      });
      return { result, facts, stop, store };
    },
    async teardown() {
      monitor.stop();
      await pool.stop(0).catch(() => {});
      await tl.close({ graceMs: 0 }).catch(() => {});
      for (const proxy of proxies) await proxy.close();
      await redis?.stop();
      await sqs?.stop();
    },
  };
}
