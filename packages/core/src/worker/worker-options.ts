import { ConfigError } from "../errors.ts";
import type { QueueConfig } from "../queue-config.ts";

export interface WorkerOptions {
  /** Jobs running at once in this worker. Default 10. */
  concurrency?: number;
  /**
   * Jobs the worker may reserve beyond `concurrency`, so the next batch is at hand when
   * slots free up and the backend round trip overlaps with running jobs. Prefetched jobs
   * keep their leases by heartbeat, start in lane-priority order, are handed back
   * unstarted at shutdown, and still obey Kale's time budget when they start. 0 turns
   * prefetching off. Default: room for one batch in flight while another waits to run,
   * `max(B, 2 × B − concurrency)` with B the largest `batchSize` among the served queues
   * (so just B when batches are no larger than `concurrency`).
   */
  prefetch?: number;
  /** Serve only these queues (config names). Default: all. */
  queues?: string[];
  /** How long a ready count learned from a reserve or probe is trusted, ms. Default 1_000. */
  hintTtlMs?: number;
  /** Heartbeat period, ms. Default a third of the shortest lease among served queues. */
  heartbeatMs?: number;
  /** First back-off after an infrastructure error, ms (doubles to 30 s). Default 250. */
  errorBackoffMs?: number;
}

export interface StopOptions {
  /** How long running jobs may finish before they are aborted and handed back, ms. Default 30_000. */
  graceMs?: number;
}

/** Worker options with every default filled in. */
export interface ResolvedWorkerOptions {
  concurrency: number;
  prefetch: number;
  /** The served lanes' configs, in the order given. */
  configs: QueueConfig[];
  hintTtlMs: number;
  heartbeatMs: number;
  errorBackoffMs: number;
}

/** Check the options and fill the defaults; throws ConfigError naming the field. */
export function resolveWorkerOptions(
  options: WorkerOptions,
  lanes: ReadonlyMap<string, QueueConfig>,
): ResolvedWorkerOptions {
  const concurrency = options.concurrency ?? 10;
  if (!(Number.isInteger(concurrency) && concurrency >= 1)) {
    throw new ConfigError("worker.concurrency", concurrency, "must be an integer >= 1");
  }
  const names = options.queues ?? [...lanes.keys()];
  if (!Array.isArray(names) || names.length === 0)
    throw new ConfigError("worker.queues", names, "must be a non-empty array");
  for (const [i, n] of names.entries()) {
    if (!lanes.has(n)) throw new ConfigError(`worker.queues[${i}]`, n, "no such queue");
  }
  const configs = names.map((n) => lanes.get(n) as QueueConfig);
  const heartbeatMs =
    options.heartbeatMs ?? Math.max(50, Math.floor(Math.min(...configs.map((c) => c.leaseMs)) / 3));
  // Double buffering by default: while one batch waits in the buffer (or runs), the next
  // can be in flight. With batches larger than concurrency, one batch of prefetch would
  // leave no room for a reserve ahead, and a worker whose jobs finish quickly would idle
  // for a round trip per batch.
  const largestBatch = Math.max(...configs.map((c) => c.batchSize));
  const prefetch = options.prefetch ?? Math.max(largestBatch, 2 * largestBatch - concurrency);
  if (!(Number.isInteger(prefetch) && prefetch >= 0)) {
    throw new ConfigError("worker.prefetch", prefetch, "must be an integer >= 0");
  }
  return {
    concurrency,
    prefetch,
    configs,
    hintTtlMs: options.hintTtlMs ?? 1_000,
    heartbeatMs,
    errorBackoffMs: options.errorBackoffMs ?? 250,
  };
}
