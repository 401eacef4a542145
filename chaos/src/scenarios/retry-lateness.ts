/**
 * Retry lateness (Redis): jobs that fail their first attempt are retried at `runAt`; with
 * the lane otherwise idle, the workers sit in long polls of 1 s. Figure: how late the
 * retry starts, start − runAt (target p99 ≤ 50 ms).
 */

import { retryLateness } from "../figures.ts";
import { createHarness, type Harness } from "../harness.ts";
import type { Scenario } from "../scenario.ts";
import { baseFailures, duplicateFigures, percentileFigures } from "./common.ts";

export interface RetryParams {
  jobs: number;
  /** Jobs are published in groups of this many, spread over `spreadMs`. */
  group: number;
  spreadMs: number;
  workers: number;
  concurrency: number;
  retryBaseMs: number;
  longPollMs: number;
  drainTimeoutMs: number;
}

export const retryScenario: Scenario<RetryParams, Harness> = {
  name: "retry-lateness",
  title: "Retry start lateness at 1 s long polls (Redis)",
  async setup(ctx, p) {
    const h = await createHarness({
      name: "retry-lateness",
      runDir: ctx.runDir,
      backend: "redis",
      workers: p.workers,
      concurrency: p.concurrency,
      lane: { leaseMs: 5_000, longPollMs: p.longPollMs, batchSize: 10, maxStalls: 3 },
      retry: { maxAttempts: 3, baseMs: p.retryBaseMs, jitter: 0 },
    });
    await h.pool.start();
    return h;
  },
  async inject(h, p) {
    // Groups at irregular moments, so retries fall due at every phase of a long poll.
    const groups = Math.ceil(p.jobs / p.group);
    const gapMs = p.spreadMs / groups;
    let seed = 1;
    const random = () => {
      seed = (seed * 48_271) % 2_147_483_647;
      return seed / 2_147_483_647;
    };
    for (let i = 0; i < groups; i++) {
      const n = Math.min(p.group, p.jobs - i * p.group);
      await h.producer.publish(
        Array.from({ length: n }, () => ({ kind: "fail1" as const, ms: 2 })),
      );
      await new Promise((resolve) => setTimeout(resolve, gapMs * 2 * random())); // workload shape
    }
  },
  async check(h, p) {
    const drained = await h.drain(p.drainTimeoutMs);
    const finished = await h.finish();
    const samples = retryLateness(finished.facts);
    return {
      name: "retry-lateness",
      title: retryScenario.title,
      backend: `redis-server ${h.redis?.version ?? "?"}`,
      params: {
        jobs: p.jobs,
        workers: `${p.workers} × ${p.concurrency}`,
        "retry after ms": p.retryBaseMs,
        "long poll ms": p.longPollMs,
      },
      check: finished.result,
      figures: [
        ...percentileFigures("retry start − runAt", samples, "ms", { value: 50, text: "≤ 50 ms" }),
        ...duplicateFigures(h, finished),
      ],
      notes: [],
      failures: baseFailures(h, finished, drained),
    };
  },
};
