import type { ArrivalSpec, DurationSpec, LaneSpec, WorkloadSpec } from "./model.ts";

/**
 * Kale's example queue config (its README): priority, batch size, long poll and
 * iterations per selection. Job durations are ours: short high-priority jobs, longer
 * low-priority ones, log-normal with a heavy-ish tail.
 */
function kaleLanes(arrivals: {
  high: ArrivalSpec;
  default: ArrivalSpec;
  low: ArrivalSpec;
}): LaneSpec[] {
  const duration = (meanMs: number): DurationSpec => ({ kind: "lognormal", meanMs, cv: 1.5 });
  return [
    {
      name: "high",
      priority: 100,
      batchSize: 10,
      longPollMs: 1_000,
      numIterations: 10,
      arrivals: arrivals.high,
      duration: duration(100),
    },
    {
      name: "default",
      priority: 40,
      batchSize: 10,
      longPollMs: 1_000,
      numIterations: 5,
      arrivals: arrivals.default,
      duration: duration(200),
    },
    {
      name: "low",
      priority: 5,
      batchSize: 10,
      longPollMs: 5_000,
      numIterations: 5,
      arrivals: arrivals.low,
      duration: duration(500),
    },
  ];
}

const poisson = (ratePerSec: number): ArrivalSpec => ({ kind: "poisson", ratePerSec });

/** 4 workers × 10 slots = 40 slots. */
const FLEET = { workers: 4, concurrency: 10 };

/**
 * The shipped workloads. Durations scale with the run (`durationMs`) where a phase must
 * fit in it (the starvation window, the compressed day).
 */
export function workloads(durationMs: number): WorkloadSpec[] {
  return [
    {
      name: "kale-steady",
      description:
        "Kale's lanes under steady Poisson load at about 75% of capacity (high 120/s × 100 ms, default 50/s × 200 ms, low 16/s × 500 ms)",
      lanes: kaleLanes({ high: poisson(120), default: poisson(50), low: poisson(16) }),
      ...FLEET,
    },
    {
      name: "kale-bursty",
      description:
        "Kale's lanes with bursts: high 40/s with bursts of 300/s (mean 5 s, every ~30 s), default steady 50/s, low 8/s with bursts of 40/s (mean 5 s, every ~60 s); a high burst alone is just over capacity",
      lanes: kaleLanes({
        high: {
          kind: "bursty",
          baseRatePerSec: 40,
          burstRatePerSec: 300,
          burstMs: 5_000,
          gapMs: 30_000,
        },
        default: poisson(50),
        low: {
          kind: "bursty",
          baseRatePerSec: 8,
          burstRatePerSec: 40,
          burstMs: 5_000,
          gapMs: 60_000,
        },
      }),
      ...FLEET,
    },
    {
      name: "starvation",
      description:
        "The high lane saturated (450/s × 100 ms, over capacity) for the first 60% of the run, then 60/s; default 20/s, low 4/s",
      lanes: kaleLanes({
        high: {
          kind: "piecewise",
          segments: [
            { untilMs: durationMs * 0.6, ratePerSec: 450 },
            { untilMs: Number.POSITIVE_INFINITY, ratePerSec: 60 },
          ],
        },
        default: poisson(20),
        low: poisson(4),
      }),
      ...FLEET,
    },
    {
      name: "all-idle",
      description: "Almost nothing to do: high 0.2/s, default 0.1/s, low 0.05/s",
      lanes: kaleLanes({ high: poisson(0.2), default: poisson(0.1), low: poisson(0.05) }),
      ...FLEET,
    },
    {
      name: "kale-diurnal",
      description:
        "Kale's lanes with a day compressed into half the run: rates swing ±80% around high 100/s, default 40/s, low 12/s",
      lanes: kaleLanes({
        high: { kind: "diurnal", meanRatePerSec: 100, amplitude: 0.8, periodMs: durationMs / 2 },
        default: { kind: "diurnal", meanRatePerSec: 40, amplitude: 0.8, periodMs: durationMs / 2 },
        low: { kind: "diurnal", meanRatePerSec: 12, amplitude: 0.8, periodMs: durationMs / 2 },
      }),
      ...FLEET,
    },
  ];
}
