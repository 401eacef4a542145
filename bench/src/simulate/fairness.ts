/**
 * The fairness workload (`npm run simulate -- --fairness`): one lane, a big tenant's
 * backlog and a small tenant's trickle, run by tasklane's own worker on the memory adapter
 * in virtual time (a manual clock), once without fair groups and once with. What it shows
 * is the small tenant's wait: behind the whole backlog without groups, one turn with them.
 *
 * Not a model like engine.ts: the real worker loop, the real adapter, the real round-robin
 * (packages/adapter-memory/src/grouped-ready.ts); only time is simulated.
 */
import { createManualClock, createMemoryAdapter } from "@tasklane/adapter-memory";
import { createTasklane, defineTask } from "@tasklane/core";
import { sleep } from "@tasklane/core/adapter";
import { z } from "zod";

export interface FairnessSpec {
  /** The big tenant's jobs, all published at once at the start. */
  bigJobs: number;
  /** The small tenant's jobs, one every `smallEveryMs` from `smallEveryMs` on. */
  smallJobs: number;
  smallEveryMs: number;
  /** Every job runs this long (virtual ms). */
  jobMs: number;
  /** The worker's concurrency (one worker). */
  concurrency: number;
}

export const FAIRNESS: FairnessSpec = {
  bigJobs: 5_000,
  smallJobs: 20,
  smallEveryMs: 250,
  jobMs: 20,
  concurrency: 10,
};

export interface FairnessResult {
  groups: boolean;
  /** The small tenant's waits (publish to start), ms: p50, p99, max. */
  smallWaitMs: { p50: number; p99: number; max: number };
  /** When the last big job finished, ms from the start. */
  bigDoneMs: number;
}

const quantile = (sorted: number[], q: number) =>
  sorted[Math.min(sorted.length - 1, Math.ceil(q * sorted.length) - 1)] ?? 0;

export async function runFairness(spec: FairnessSpec, groups: boolean): Promise<FairnessResult> {
  const clock = createManualClock(0);
  const start = clock.now();
  const smallWaits: number[] = [];
  let bigDone = 0;
  let bigDoneAt = 0;
  const work = defineTask({
    name: "work",
    lane: "tenants",
    schema: z.object({ tenant: z.string(), at: z.number() }),
    run: async ({ tenant, at }) => {
      if (tenant === "small") smallWaits.push(clock.now() - at);
      await sleep(clock, spec.jobMs);
      if (tenant === "big" && ++bigDone === spec.bigJobs) bigDoneAt = clock.now() - start;
    },
  });
  const tl = createTasklane({
    adapter: createMemoryAdapter({ clock }),
    clock,
    lanes: [{ name: "tenants", batchSize: 10, ...(groups ? { groups: {} } : {}) }],
    tasks: [work],
  });
  const group = (tenant: string) => (groups ? { group: tenant } : {});
  await tl.publishMany(
    work,
    Array.from({ length: spec.bigJobs }, () => ({
      payload: { tenant: "big", at: clock.now() },
      ...group("big"),
    })),
  );
  const worker = tl.worker({ concurrency: spec.concurrency });
  // started while the clock moves: its start waits on timers of the manual clock too
  const started = worker.start();
  let published = 0;
  let nextSmallAt = start + spec.smallEveryMs;
  while (bigDone < spec.bigJobs || smallWaits.length < spec.smallJobs) {
    if (published < spec.smallJobs && clock.now() >= nextSmallAt) {
      await tl.publish(work, { tenant: "small", at: clock.now() }, group("small"));
      published++;
      nextSmallAt += spec.smallEveryMs;
    }
    await clock.advance(1);
  }
  await started;
  const stopped = worker.stop({ graceMs: 1_000 });
  let done = false;
  stopped.then(() => {
    done = true;
  });
  while (!done) await clock.advance(100);
  await tl.close();
  const sorted = [...smallWaits].sort((a, b) => a - b);
  return {
    groups,
    smallWaitMs: {
      p50: quantile(sorted, 0.5),
      p99: quantile(sorted, 0.99),
      max: sorted.at(-1) ?? 0,
    },
    bigDoneMs: bigDoneAt,
  };
}

export function formatFairness(spec: FairnessSpec, results: FairnessResult[]): string {
  const rows = results.map(
    (r) =>
      `| ${r.groups ? "fair groups" : "no groups"} | ${r.smallWaitMs.p50} | ${r.smallWaitMs.p99} | ${r.smallWaitMs.max} | ${r.bigDoneMs} |`,
  );
  return [
    `fairness: one lane, ${spec.bigJobs} jobs of tenant "big" at once, ${spec.smallJobs} of tenant "small" one every ${spec.smallEveryMs} ms; jobs of ${spec.jobMs} ms; one worker of concurrency ${spec.concurrency} (virtual time)`,
    "",
    "| lane | small's wait p50 (ms) | p99 | max | big's backlog done at (ms) |",
    "| --- | --- | --- | --- | --- |",
    ...rows,
  ].join("\n");
}
