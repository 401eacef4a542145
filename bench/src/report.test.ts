import { describe, expect, it } from "vitest";
import { applies, partialRun, select } from "./orchestrator.ts";
import { FULL, QUICK } from "./profiles.ts";
import { renderTables, renderTargets, summarise } from "./report.ts";
import { findSystem } from "./systems/index.ts";
import type { CaseResult, Metrics, ScenarioName } from "./types.ts";

function result(
  system: string,
  scenario: ScenarioName,
  metrics: Metrics,
  ok = true,
  profile: CaseResult["profile"] = "full",
): CaseResult {
  return {
    runId: "r",
    at: "2026-01-01T00:00:00.000Z",
    system,
    backend: findSystem(system).backend,
    scenario,
    repeat: 0,
    profile,
    ok,
    ...(ok ? {} : { error: "boom\nstack" }),
    metrics,
    wallMs: 1,
  };
}

describe("summarise", () => {
  it("takes the median of each metric over the successful runs", () => {
    const [summary] = summarise([
      result("bullmq", "process-c10", { jobsPerSec: 100 }),
      result("bullmq", "process-c10", { jobsPerSec: 300 }),
      result("bullmq", "process-c10", { jobsPerSec: 200 }),
      result("bullmq", "process-c10", {}, false),
    ]);
    expect(summary?.medians.jobsPerSec).toBe(200);
    expect(summary?.runs).toBe(3);
    expect(summary?.failed).toBe(1);
    expect(summary?.error).toBe("boom");
  });
});

describe("renderTables", () => {
  it("shows the ratio to the backend's baseline", () => {
    const text = renderTables(
      summarise([
        result("bullmq", "process-c100", { jobsPerSec: 10_000, requestsPerJob: 32 }),
        result("raw-ioredis", "process-c100", { jobsPerSec: 50_000, requestsPerJob: 1 }),
      ]),
      FULL,
    );
    expect(text).toContain("| bullmq (baseline) |");
    expect(text).toContain("50,000 (5.0×)");
    expect(text).toContain("1.00 (0.03×)");
  });
  it("leaves a system out of the tables it ran no case of", () => {
    const text = renderTables(
      summarise([
        result("bullmq", "publish-bulk", { jobsPerSec: 30_000 }),
        result("bullmq", "latency", { p50Ms: 0.3, p90Ms: 0.5, p99Ms: 1 }),
        result("redis-put-floor", "publish-bulk", { jobsPerSec: 300_000 }),
      ]),
      FULL,
    );
    const [throughput, latency] = text.split("Latency publish");
    expect(throughput).toContain("| redis-put-floor   |");
    expect(latency).toContain("| bullmq (baseline) |");
    expect(latency).not.toContain("redis-put-floor");
  });
  it("lists cases whose runs disagree", () => {
    const text = renderTables(
      summarise([
        result("bullmq", "process-c10", { jobsPerSec: 100 }),
        result("bullmq", "process-c10", { jobsPerSec: 300 }),
        result("bullmq", "process-c10", { jobsPerSec: 200 }),
      ]),
      FULL,
    );
    expect(text).toContain("Noisy cases");
    expect(text).toContain("bullmq process-c10 jobsPerSec ±50%");
  });
  it("marks failed cases", () => {
    const text = renderTables(summarise([result("bullmq", "latency", {}, false)]), FULL);
    expect(text).toContain("failed");
    expect(text).toContain("bullmq / latency: 1 failed: boom");
  });
});

/** The cells of the Targets row whose target text contains `what`, or undefined without one. */
function targetRow(text: string, what: string): string[] | undefined {
  const line = text.split("\n").find((row) => row.startsWith("|") && row.includes(what));
  return line
    ?.split("|")
    .slice(1, -1)
    .map((cell) => cell.trim());
}

/** The verdict: the row's last cell. */
const verdictOf = (text: string, what: string) => targetRow(text, what)?.at(-1);

const C100 = "redis: processing c=100 vs BullMQ";

describe("renderTargets", () => {
  const bullmq = [1, 2, 3].map(() => result("bullmq", "process-c100", { jobsPerSec: 10_000 }));

  it("counts the runs of each case behind a target and judges a complete full run", () => {
    const text = renderTargets(
      summarise([
        ...bullmq,
        ...[1, 2, 3].map(() => result("tasklane-redis", "process-c100", { jobsPerSec: 31_000 })),
      ]),
      FULL,
    );
    const row = targetRow(text, C100);
    expect(row).toContain("tasklane-redis: 3 runs; bullmq: 3 runs");
    expect(row).toContain("3.10×");
    expect(verdictOf(text, C100)).toBe("met");
  });

  it("never calls a target met when a repeat of its case failed", () => {
    // Two of three repeats failed: the median of the one that ran would be 3.10×, "met".
    const text = renderTargets(
      summarise([
        ...bullmq,
        result("tasklane-redis", "process-c100", {}, false),
        result("tasklane-redis", "process-c100", {}, false),
        result("tasklane-redis", "process-c100", { jobsPerSec: 31_000 }),
      ]),
      FULL,
    );
    expect(verdictOf(text, C100)).toBe("**not measured**");
    expect(targetRow(text, C100)).toContain("tasklane-redis: 3 runs, 2 failed; bullmq: 3 runs");
  });

  it("keeps a target whose runs all failed in the table, as not measured", () => {
    const what = "redis: latency p50 at 500 jobs/s";
    const text = renderTargets(
      summarise([1, 2, 3].map(() => result("tasklane-redis", "latency", {}, false))),
      FULL,
    );
    expect(verdictOf(text, what)).toBe("**not measured**");
    expect(targetRow(text, what)).toContain("tasklane-redis: 3 runs, 3 failed");
  });

  it("says which case of a ratio did not run, and does not judge it", () => {
    const text = renderTargets(
      summarise([result("tasklane-redis", "process-c100", { jobsPerSec: 31_000 })]),
      FULL,
    );
    expect(verdictOf(text, C100)).toBe("**not measured**");
    expect(targetRow(text, C100)).toContain("tasklane-redis: 1 run; bullmq: not run");
  });

  it("counts a run that did not report the target's metric as not measured", () => {
    const what = "redis: round trips per job, c=100";
    const text = renderTargets(
      summarise([
        result("tasklane-redis", "process-c100", { roundTripsPerJob: 0.02 }),
        result("tasklane-redis", "process-c100", { roundTripsPerJob: 0.02 }),
        result("tasklane-redis", "process-c100", { roundTripsPerJob: Number.NaN }),
      ]),
      FULL,
    );
    expect(verdictOf(text, what)).toBe("**not measured**");
    expect(targetRow(text, what)).toContain("tasklane-redis: 3 runs, 1 without roundTripsPerJob");
  });

  it("shows a quick run's figures but judges no full-run target on them", () => {
    // 2.50× would be "not met" against the full run's ≥ 3×; a quick run's sizes differ.
    const text = renderTargets(
      summarise([
        result("bullmq", "process-c100", { jobsPerSec: 10_000 }, true, "quick"),
        result("tasklane-redis", "process-c100", { jobsPerSec: 25_000 }, true, "quick"),
        result("tasklane-redis", "process-c10", { jobsPerSec: 25_000 }, true, "quick"),
      ]),
      { ...QUICK },
    );
    expect(targetRow(text, C100)).toContain("2.50×");
    expect(verdictOf(text, C100)).toBe("not judged (quick run)");
    expect(text).not.toMatch(/\bmet\b/);
  });

  it("judges no target on a partial run", () => {
    const text = renderTargets(
      summarise([
        ...bullmq,
        ...[1, 2, 3].map(() => result("tasklane-redis", "process-c100", { jobsPerSec: 31_000 })),
      ]),
      FULL,
      "partial run: --only process-c100",
    );
    expect(verdictOf(text, C100)).toBe("not judged (partial run: --only process-c100)");
  });
});

describe("partialRun", () => {
  const full = {
    quick: false,
    only: [],
    repeats: undefined,
    jobs: undefined,
    sqsJobs: undefined,
    cpuProfDir: undefined,
  };
  it("calls only a full run of every case complete (the one --save accepts)", () => {
    expect(partialRun(full)).toBeUndefined();
    expect(partialRun({ ...full, quick: true })).toBe("quick run");
    expect(partialRun({ ...full, only: ["redis", "latency"] })).toBe(
      "partial run: --only redis,latency",
    );
    expect(partialRun({ ...full, repeats: 5, jobs: 100 })).toBe(
      "sizes overridden: --repeats, --jobs",
    );
    expect(partialRun({ ...full, cpuProfDir: "/tmp/prof" })).toBe("CPU-profiled run");
  });
});

describe("select", () => {
  it("combines systems, backends and scenario prefixes", () => {
    const { systems, scenarios } = select(["redis", "latency"]);
    expect(systems.every((system) => system.backend === "redis")).toBe(true);
    expect(scenarios).toEqual(["latency", "latency-priority"]);
  });
  it("selects everything without filters", () => {
    expect(select([]).scenarios).toContain("process-c100");
  });
  it("refuses an unknown token, naming it", () => {
    expect(() => select(["nope"])).toThrow(/"nope"/);
  });
  it("runs the priority scenario only for systems with priorities", () => {
    expect(applies(findSystem("bee-queue"), "latency-priority")).toBe(false);
    expect(applies(findSystem("bullmq"), "latency-priority")).toBe(true);
    expect(applies(findSystem("p-queue"), "idle")).toBe(false);
  });
  it("runs a system only in the scenarios it lists", () => {
    const floor = findSystem("redis-put-floor");
    expect(applies(floor, "publish-bulk")).toBe(true);
    expect(applies(floor, "process-c100")).toBe(false);
    expect(applies(floor, "idle")).toBe(false);
  });
});
