/**
 * Network faults between the workers and redis-server (Redis), through a TCP proxy per
 * worker: drops (every connection of one worker reset) and blackholes (one worker's
 * traffic held for longer than the lease, then let through). Figure: duplicate runs per
 * drop (target ≤ 1). A blackhole outlasts the lease, so the held worker's acks arrive
 * late: every one must be refused.
 */
import type { Harness } from "../harness.ts";
import type { Scenario } from "../scenario.ts";
import { baseFailures, duplicateFigures, progress, startBacklog } from "./common.ts";

export interface NetworkParams {
  backlog: number;
  workers: number;
  concurrency: number;
  jobMs: number;
  leaseMs: number;
  drops: number;
  blackholes: number;
  blackholeMs: number;
  jobsBetweenFaults: number;
  drainTimeoutMs: number;
}

export const networkScenario: Scenario<NetworkParams, Harness> = {
  name: "network",
  title: "Dropped and blackholed connections to Redis (TCP proxy)",
  async setup(ctx, p) {
    return startBacklog({ name: "network", runDir: ctx.runDir, backend: "redis" }, p);
  },
  async inject(h, p, ctx) {
    const total = p.drops + p.blackholes;
    // Blackholes spread evenly among the drops.
    const blackholeEvery = p.blackholes === 0 ? Infinity : Math.floor(total / p.blackholes);
    let blackholes = 0;
    for (let i = 0; i < total; i++) {
      await progress(h, p.jobsBetweenFaults, 120_000, { backlog: p.backlog, ms: p.jobMs });
      const slot = i % p.workers;
      const proxy = h.proxies[slot];
      const pid = h.pool.pid(slot);
      if (proxy === undefined || pid === undefined) continue;
      if (blackholes < p.blackholes && i % blackholeEvery === blackholeEvery - 1) {
        blackholes++;
        const at = Date.now();
        proxy.blackholeStart();
        await new Promise((resolve) => setTimeout(resolve, p.blackholeMs)); // the fault's length
        proxy.blackholeEnd();
        h.faults.add({ kind: "blackhole", at, until: Date.now(), pids: [pid] });
        ctx.log(`network: blackholed worker ${slot} for ${p.blackholeMs} ms`);
      } else {
        const at = Date.now();
        proxy.drop();
        h.faults.add({ kind: "drop", at, pids: [pid] });
      }
    }
  },
  async check(h, p) {
    const drained = await h.drain(p.drainTimeoutMs);
    const finished = await h.finish();
    const by = finished.result.byAttribution;
    const drops = h.faults.count("drop");
    const blackholes = h.faults.count("blackhole");
    return {
      name: "network",
      title: networkScenario.title,
      backend: `redis-server ${h.redis?.version ?? "?"}`,
      params: {
        backlog: p.backlog,
        workers: `${p.workers} × ${p.concurrency}`,
        "job ms": p.jobMs,
        "lease ms": p.leaseMs,
        drops,
        blackholes: `${blackholes} × ${p.blackholeMs} ms`,
      },
      check: finished.result,
      figures: [
        {
          name: "duplicate runs per drop",
          value: drops === 0 ? undefined : (by.drop ?? 0) / drops,
          unit: "runs",
          target: 1,
          targetText: "≤ 1",
        },
        {
          name: "duplicate runs per blackhole",
          value: blackholes === 0 ? undefined : (by.blackhole ?? 0) / blackholes,
          unit: "runs",
        },
        ...duplicateFigures(h, finished),
      ],
      notes: [],
      failures: baseFailures(h, finished, drained),
    };
  },
};
