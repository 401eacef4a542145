/**
 * The two profiles. fast: every scenario small enough that the whole run fits in a few
 * minutes on a 2-core machine (it is the last step of `npm test`). full: the sizes
 * (#19.7): tens of thousands of jobs, 50 worker kills, 5 redis-server restarts, 200 drops
 * and 20 blackholes; run by hand. Depth (#19.8) runs only when asked for
 * (`--scenario depth`).
 */
import type { ProfileName, ScenarioContext, ScenarioResult } from "./scenario.ts";
import { runScenario } from "./scenario.ts";
import { type DepthParams, depthScenario } from "./scenarios/depth.ts";
import { type KillParams, killScenario } from "./scenarios/kill.ts";
import { type NetworkParams, networkScenario } from "./scenarios/network.ts";
import { type PillParams, pillScenario, sqsPillScenario } from "./scenarios/pills.ts";
import { createRestartScenario, type RestartParams } from "./scenarios/restart.ts";
import { type RetryParams, retryScenario } from "./scenarios/retry-lateness.ts";
import { type SqsKillParams, sqsKillScenario } from "./scenarios/sqs-kill.ts";

export interface ProfileParams {
  kill: KillParams;
  pills: PillParams;
  network: NetworkParams;
  restart: RestartParams;
  restartEverysec: RestartParams;
  retry: RetryParams;
  sqsKill: SqsKillParams;
  sqsPills: PillParams;
  depth: DepthParams;
}

const LEASE_MS = 2_000;
const DRAIN_MS = 300_000;
const WORKERS = { workers: 3, concurrency: 8 };

export const PROFILES: Record<ProfileName, ProfileParams> = {
  fast: {
    kill: {
      backlog: 20_000,
      ...WORKERS,
      jobMs: 10,
      leaseMs: LEASE_MS,
      kills: 3,
      pauses: 1,
      jobsBetweenFaults: 1_500,
      drainTimeoutMs: DRAIN_MS,
    },
    pills: {
      normal: 2_000,
      pills: 4,
      ...WORKERS,
      jobMs: 10,
      leaseMs: LEASE_MS,
      maxStalls: 3,
      drainTimeoutMs: DRAIN_MS,
    },
    network: {
      backlog: 2_000,
      ...WORKERS,
      jobMs: 10,
      leaseMs: LEASE_MS,
      drops: 10,
      blackholes: 1,
      blackholeMs: LEASE_MS + 1_000,
      jobsBetweenFaults: 300,
      drainTimeoutMs: DRAIN_MS,
    },
    restart: {
      backlog: 2_000,
      ...WORKERS,
      jobMs: 10,
      leaseMs: LEASE_MS,
      restarts: 2,
      downMs: 500,
      jobsBetweenFaults: 1_000,
      drainTimeoutMs: DRAIN_MS,
    },
    restartEverysec: {
      backlog: 2_000,
      ...WORKERS,
      jobMs: 10,
      leaseMs: LEASE_MS,
      restarts: 1,
      downMs: 500,
      jobsBetweenFaults: 1_000,
      drainTimeoutMs: DRAIN_MS,
    },
    retry: {
      jobs: 150,
      group: 5,
      spreadMs: 6_000,
      workers: 2,
      concurrency: 8,
      retryBaseMs: 500,
      longPollMs: 1_000,
      drainTimeoutMs: DRAIN_MS,
    },
    sqsKill: {
      backlog: 1_500,
      ...WORKERS,
      jobMs: 10,
      leaseMs: LEASE_MS,
      kills: 2,
      jobsBetweenFaults: 300,
      drainTimeoutMs: DRAIN_MS,
    },
    sqsPills: {
      normal: 1_000,
      pills: 4,
      ...WORKERS,
      jobMs: 10,
      leaseMs: LEASE_MS,
      maxStalls: 3,
      drainTimeoutMs: DRAIN_MS,
    },
    depth: { jobs: 1_000_000, workers: 2, concurrency: 50, batchSize: 100, publishChunk: 10_000 },
  },
  full: {
    kill: {
      backlog: 20_000,
      ...WORKERS,
      jobMs: 10,
      leaseMs: LEASE_MS,
      kills: 40,
      pauses: 5,
      jobsBetweenFaults: 400,
      drainTimeoutMs: DRAIN_MS,
    },
    pills: {
      normal: 5_000,
      pills: 10,
      ...WORKERS,
      jobMs: 10,
      leaseMs: LEASE_MS,
      maxStalls: 3,
      drainTimeoutMs: DRAIN_MS,
    },
    network: {
      backlog: 3_000,
      ...WORKERS,
      jobMs: 10,
      leaseMs: LEASE_MS,
      drops: 200,
      blackholes: 20,
      blackholeMs: LEASE_MS + 1_000,
      jobsBetweenFaults: 100,
      drainTimeoutMs: DRAIN_MS,
    },
    restart: {
      backlog: 3_000,
      ...WORKERS,
      jobMs: 10,
      leaseMs: LEASE_MS,
      restarts: 5,
      downMs: 1_000,
      jobsBetweenFaults: 1_500,
      drainTimeoutMs: DRAIN_MS,
    },
    restartEverysec: {
      backlog: 3_000,
      ...WORKERS,
      jobMs: 10,
      leaseMs: LEASE_MS,
      restarts: 3,
      downMs: 1_000,
      jobsBetweenFaults: 1_500,
      drainTimeoutMs: DRAIN_MS,
    },
    retry: {
      jobs: 600,
      group: 5,
      spreadMs: 20_000,
      workers: 2,
      concurrency: 8,
      retryBaseMs: 500,
      longPollMs: 1_000,
      drainTimeoutMs: DRAIN_MS,
    },
    sqsKill: {
      backlog: 3_000,
      ...WORKERS,
      jobMs: 10,
      leaseMs: LEASE_MS,
      kills: 10,
      jobsBetweenFaults: 300,
      drainTimeoutMs: DRAIN_MS,
    },
    sqsPills: {
      normal: 5_000,
      pills: 10,
      ...WORKERS,
      jobMs: 10,
      leaseMs: LEASE_MS,
      maxStalls: 3,
      drainTimeoutMs: DRAIN_MS,
    },
    depth: { jobs: 1_000_000, workers: 2, concurrency: 50, batchSize: 100, publishChunk: 10_000 },
  },
};

type Runner = (ctx: ScenarioContext, p: ProfileParams) => Promise<ScenarioResult>;

/** Every scenario by name, in the order a profile runs them. */
export const SCENARIOS: Record<string, Runner> = {
  kill: (ctx, p) => runScenario(killScenario, ctx, p.kill),
  pills: (ctx, p) => runScenario(pillScenario, ctx, p.pills),
  network: (ctx, p) => runScenario(networkScenario, ctx, p.network),
  restart: (ctx, p) => runScenario(createRestartScenario("always"), ctx, p.restart),
  "restart-everysec": (ctx, p) =>
    runScenario(createRestartScenario("everysec"), ctx, p.restartEverysec),
  "retry-lateness": (ctx, p) => runScenario(retryScenario, ctx, p.retry),
  "sqs-kill": (ctx, p) => runScenario(sqsKillScenario, ctx, p.sqsKill),
  "sqs-pills": (ctx, p) => runScenario(sqsPillScenario, ctx, p.sqsPills),
  depth: (ctx, p) => runScenario(depthScenario, ctx, p.depth),
};

/** What a profile runs when no --scenario is given (depth only on request). */
export const DEFAULT_SCENARIOS = Object.keys(SCENARIOS).filter((name) => name !== "depth");
