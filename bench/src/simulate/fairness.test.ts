import { describe, expect, it } from "vitest";
import { runFairness } from "./fairness.ts";

describe("the fairness workload", () => {
  const spec = { bigJobs: 600, smallJobs: 5, smallEveryMs: 100, jobMs: 20, concurrency: 10 };

  it("without groups the small tenant waits behind the backlog; with them, about one turn", async () => {
    const plain = await runFairness(spec, false);
    const fair = await runFairness(spec, true);
    // 600 jobs of 20 ms on 10 slots: 1,200 ms of backlog; a small job published at
    // 100..500 ms waits for the rest of it
    expect(plain.smallWaitMs.p50).toBeGreaterThan(500);
    expect(plain.bigDoneMs).toBe(1_200);
    // with groups it starts as soon as a slot frees: within one job's run (a batch of 10
    // prefetched big jobs may be ahead of it: two runs at most)
    expect(fair.smallWaitMs.max).toBeLessThanOrEqual(2 * spec.jobMs);
    // and the backlog finishes at most the small tenant's jobs later
    expect(fair.bigDoneMs).toBeLessThanOrEqual(plain.bigDoneMs + spec.smallJobs * spec.jobMs);
  });
});
