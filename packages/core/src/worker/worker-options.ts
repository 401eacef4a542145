import { z } from "zod";
import { ConfigError } from "../errors.ts";
import type { LaneConfig } from "../lane-config.ts";
import { count, MAX_TIMER_MS, parseOptions, timerMs } from "../options.ts";

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
  /**
   * Most often running jobs' progress and log lines are sent to the backend, ms (one
   * call per lane per period, adapters with capability `reports`); what a job reports
   * last always rides on its ack or nack. Default 1_000.
   */
  reportMs?: number;
  /**
   * Fire the due runs of recurring schedules stored in the served lanes: at the earliest
   * next slot, and at least this often (another process may add an earlier one). 0: this
   * worker fires none. Default 1,000 ms.
   */
  schedulePollMs?: number;
}

export interface StopOptions {
  /**
   * How long running jobs may finish before they are aborted and handed back, and how
   * long settling calls that failed are retried, ms. 0 to MAX_TIMER_MS. Default 30_000.
   */
  graceMs?: number;
}

export const stopOptionsSchema = z.object({ graceMs: timerMs(0).optional() }).strict();

/** Check `stop()`'s options and fill the default; throws ConfigError naming the field. */
export function resolveStopOptions(input: StopOptions | undefined): Required<StopOptions> {
  const options = parseOptions(stopOptionsSchema, input ?? {}, "stop");
  return { graceMs: options.graceMs ?? 30_000 };
}

/** Below this a heartbeat timer is a storm of backend calls, not a safety margin. */
const MIN_HEARTBEAT_MS = 10;
/** Below this, reports would cost a call per lane nearly as often as the handlers log. */
const MIN_REPORT_MS = 10;
const MIN_SCHEDULE_POLL_MS = 10;
/** The error back-off doubles up to 30 s; a first back-off above that would be capped anyway. */
export const MAX_ERROR_BACKOFF_MS = 30_000;

/** Worker options with every default filled in. */
export interface ResolvedWorkerOptions {
  concurrency: number;
  prefetch: number;
  /** The served lanes' configs, in the order given. */
  configs: LaneConfig[];
  hintTtlMs: number;
  heartbeatMs: number;
  errorBackoffMs: number;
  reportMs: number;
  schedulePollMs: number;
}

export const workerOptionsSchema = z
  .object({
    concurrency: count(1).optional(),
    prefetch: count(0).optional(),
    lanes: z
      .array(z.string(), "must be an array of lane names")
      .min(1, "must name at least one lane")
      .optional(),
    hintTtlMs: z.number().min(0, "must be >= 0 ms").optional(),
    heartbeatMs: timerMs(MIN_HEARTBEAT_MS).optional(),
    errorBackoffMs: z
      .number()
      .min(1, "must be >= 1 ms")
      .max(MAX_ERROR_BACKOFF_MS, `must be <= ${MAX_ERROR_BACKOFF_MS} ms (the back-off's cap)`)
      .optional(),
    reportMs: timerMs(MIN_REPORT_MS).optional(),
    schedulePollMs: z
      .union([z.literal(0), timerMs(MIN_SCHEDULE_POLL_MS)], {
        error: `must be 0 (off) or from ${MIN_SCHEDULE_POLL_MS} to ${MAX_TIMER_MS} ms`,
      })
      .optional(),
  })
  .strict();

/**
 * Check the options and fill the defaults; throws ConfigError naming the field. A
 * heartbeat must come well inside the shortest served lease (at most half of it), or a
 * healthy job loses its lease between two heartbeats.
 */
export function resolveWorkerOptions(
  input: WorkerOptions,
  lanes: ReadonlyMap<string, LaneConfig>,
): ResolvedWorkerOptions {
  const options = parseOptions(workerOptionsSchema, input ?? {}, "worker");
  const concurrency = options.concurrency ?? 10;
  const names = options.lanes ?? [...lanes.keys()];
  for (const [i, n] of names.entries()) {
    if (!lanes.has(n)) throw new ConfigError(`worker.lanes[${i}]`, n, "no such lane");
  }
  const configs = names.map((n) => lanes.get(n) as LaneConfig);
  const shortestLeaseMs = Math.min(...configs.map((c) => c.leaseMs));
  // Capped at the longest timer: a lease of months would otherwise overflow the timer,
  // which then fires every millisecond.
  const heartbeatMs =
    options.heartbeatMs ?? Math.min(MAX_TIMER_MS, Math.max(50, Math.floor(shortestLeaseMs / 3)));
  if (heartbeatMs > shortestLeaseMs / 2) {
    throw new ConfigError(
      "worker.heartbeatMs",
      heartbeatMs,
      `must be at most half the shortest served lease (${shortestLeaseMs} ms)`,
    );
  }
  // Double buffering by default: while one batch waits in the buffer (or runs), the next
  // can be in flight. With batches larger than concurrency, one batch of prefetch would
  // leave no room for a reserve ahead, and a worker whose jobs finish quickly would idle
  // for a round trip per batch.
  const largestBatch = Math.max(...configs.map((c) => c.batchSize));
  const prefetch = options.prefetch ?? Math.max(largestBatch, 2 * largestBatch - concurrency);
  return {
    concurrency,
    prefetch,
    configs,
    hintTtlMs: options.hintTtlMs ?? 1_000,
    heartbeatMs,
    errorBackoffMs: options.errorBackoffMs ?? 250,
    reportMs: options.reportMs ?? 1_000,
    schedulePollMs: options.schedulePollMs ?? 1_000,
  };
}
