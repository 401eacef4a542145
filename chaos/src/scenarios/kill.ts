/**
 * kill -9 of worker processes while they run jobs with a deep backlog behind them (Redis).
 * Each killed worker's jobs must run again once their leases end, and nothing may be lost
 * or acked twice. Figure: the time from a kill to the start of the re-run of each job the
 * killed worker held (target p99 ≤ lease + 1 s). A few SIGSTOP pauses longer than the
 * lease make a worker come back to jobs others have taken over: every late ack of its must
 * be refused (fencing).
 */

import { recovery } from "../figures.ts";
import type { Harness } from "../harness.ts";
import type { Scenario } from "../scenario.ts";
import {
  baseFailures,
  duplicateFigures,
  percentileFigures,
  progress,
  restartFigures,
  startBacklog,
} from "./common.ts";

export interface KillParams {
  /** Waiting jobs kept behind the running ones while faults are injected. */
  backlog: number;
  workers: number;
  concurrency: number;
  jobMs: number;
  leaseMs: number;
  kills: number;
  /** SIGSTOP pauses of lease + 1 s. */
  pauses: number;
  /** Jobs finished between two faults. */
  jobsBetweenFaults: number;
  drainTimeoutMs: number;
}

export const killScenario: Scenario<KillParams, Harness> = {
  name: "kill",
  title: "Worker kill -9 and pause behind a backlog (Redis)",
  async setup(ctx, p) {
    return startBacklog({ name: "kill", runDir: ctx.runDir, backend: "redis" }, p);
  },
  async inject(h, p, ctx) {
    const faults = p.kills + p.pauses;
    for (let i = 0; i < faults; i++) {
      await progress(h, p.jobsBetweenFaults, 120_000, { backlog: p.backlog, ms: p.jobMs });
      const slot = i % p.workers;
      if (i < p.kills) {
        const pid = await h.pool.kill(slot);
        ctx.log(`kill: killed worker ${slot} (pid ${pid}), ${i + 1}/${p.kills}`);
        await h.pool.settled();
      } else {
        const pid = await h.pool.pause(slot, p.leaseMs + 1_000);
        ctx.log(`kill: paused worker ${slot} (pid ${pid}) for ${p.leaseMs + 1_000} ms`);
      }
    }
  },
  async check(h, p) {
    const drained = await h.drain(p.drainTimeoutMs);
    const finished = await h.finish();
    const rec = recovery(finished.facts, h.faults.faults, ["kill"]);
    const lease = h.leaseMs;
    return {
      name: "kill",
      title: killScenario.title,
      backend: `redis-server ${h.redis?.version ?? "?"}`,
      params: {
        backlog: p.backlog,
        workers: `${p.workers} × ${p.concurrency}`,
        "job ms": p.jobMs,
        "lease ms": p.leaseMs,
        kills: h.faults.count("kill"),
        pauses: h.faults.count("pause"),
      },
      check: finished.result,
      figures: [
        ...percentileFigures("kill → re-run start", rec.samples, "ms", {
          value: lease + 1_000,
          text: `≤ lease + 1 s = ${lease + 1_000} ms`,
        }),
        { name: "held jobs acked at the kill (not re-run)", value: rec.notRerun, unit: "jobs" },
        ...restartFigures(h),
        ...duplicateFigures(h, finished),
      ],
      notes: [],
      failures: baseFailures(h, finished, drained),
    };
  },
};
