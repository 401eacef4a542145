import type { Profile, ScenarioName } from "./types.ts";

export const SCENARIOS: ScenarioName[] = [
  "publish-single",
  "publish-bulk",
  "process-c1",
  "process-c10",
  "process-c100",
  "latency",
  "latency-priority",
  "idle",
];

/** About 15 minutes on 2 cores with every system. */
export const FULL: Profile = {
  name: "full",
  jobs: 20_000,
  sqsJobs: 5_000,
  publishInFlight: 100,
  bulkChunk: 1_000,
  latencyRatePerSec: 500,
  latencySeconds: 4,
  latencyWarmupSeconds: 0.5,
  latencyConcurrency: 10,
  idleSeconds: 2,
  repeats: 3,
  caseTimeoutMs: 180_000,
};

/** About 2 minutes: one run of each case, smaller sizes. */
export const QUICK: Profile = {
  name: "quick",
  jobs: 5_000,
  sqsJobs: 1_000,
  publishInFlight: 100,
  bulkChunk: 1_000,
  latencyRatePerSec: 500,
  latencySeconds: 1,
  latencyWarmupSeconds: 0.5,
  latencyConcurrency: 10,
  idleSeconds: 1,
  repeats: 1,
  caseTimeoutMs: 60_000,
};
