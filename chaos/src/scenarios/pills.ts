/**
 * Poison pills (Redis): a few jobs whose handler ends its own worker process
 * (process.exit(1), or SIGKILL to itself) among many normal jobs. A pill must go dead
 * ("stalled") after at most maxStalls + 1 runs; the normal jobs its crashes interrupt
 * must not (target: 0 normal jobs dead); every normal job succeeds exactly once or its
 * re-run is attributed to a crash.
 */

import { runsOf } from "../figures.ts";
import { createHarness, type Harness } from "../harness.ts";
import type { ProducerItem } from "../producer.ts";
import type { Scenario } from "../scenario.ts";
import { baseFailures, duplicateFigures, restartFigures } from "./common.ts";

export interface PillParams {
  normal: number;
  pills: number;
  workers: number;
  concurrency: number;
  jobMs: number;
  leaseMs: number;
  maxStalls: number;
  drainTimeoutMs: number;
}

export const pillScenario: Scenario<PillParams, Harness> = {
  name: "pills",
  title: "Poison pills that end their worker process (Redis)",
  async setup(ctx, p) {
    const h = await createHarness({
      name: "pills",
      runDir: ctx.runDir,
      backend: "redis",
      workers: p.workers,
      concurrency: p.concurrency,
      lane: { leaseMs: p.leaseMs, longPollMs: 1_000, batchSize: 10, maxStalls: p.maxStalls },
    });
    // Pills evenly spread through the lane, half exiting, half killing themselves.
    const items: ProducerItem[] = [];
    const every = Math.floor(p.normal / p.pills);
    for (let i = 0; i < p.normal; i++) {
      items.push({ kind: "ok", ms: p.jobMs });
      const pill = Math.floor(i / every);
      if (i % every === every - 1 && pill < p.pills) {
        items.push({ kind: pill % 2 === 0 ? "exit" : "kill", ms: 0 });
      }
    }
    await h.producer.publish(items);
    await h.pool.start();
    return h;
  },
  async inject() {
    // The pills are the faults: they end their workers as they are run.
  },
  async check(h, p) {
    const drained = await h.drain(p.drainTimeoutMs);
    const finished = await h.finish();
    const pills = [...h.producer.idsOf("exit"), ...h.producer.idsOf("kill")];
    const pillRuns = pills.map((id) => runsOf(finished.facts, id));
    const jobs = finished.store.kind === "jobs" ? finished.store.jobs : new Map();
    const pillsDead = pills.filter((id) => jobs.get(id)?.states[0] === "failed").length;
    const normal = h.producer.idsOf("ok");
    const normalDead = normal.filter((id) => jobs.get(id)?.states[0] === "failed").length;
    const normalDuplicates = finished.result.duplicateRuns.filter(
      (d) => h.producer.attempted.get(d.id) === "ok",
    ).length;
    const failures = baseFailures(h, finished, drained);
    if (pillsDead !== pills.length) failures.push(`${pills.length - pillsDead} pills not dead`);
    return {
      name: "pills",
      title: pillScenario.title,
      backend: `redis-server ${h.redis?.version ?? "?"}`,
      params: {
        "normal jobs": p.normal,
        pills: `${p.pills} (half exit(1), half SIGKILL)`,
        workers: `${p.workers} × ${p.concurrency}`,
        "job ms": p.jobMs,
        "lease ms": p.leaseMs,
        maxStalls: p.maxStalls,
      },
      check: finished.result,
      figures: [
        { name: "worker crashes", value: h.faults.count("crash"), unit: "crashes" },
        {
          name: "most runs of one pill",
          value: Math.max(0, ...pillRuns),
          unit: "runs",
          target: p.maxStalls + 1,
          targetText: `≤ maxStalls + 1 = ${p.maxStalls + 1}`,
        },
        { name: "pills dead", value: pillsDead, unit: `of ${pills.length}` },
        {
          name: "normal jobs dead",
          value: normalDead,
          unit: "jobs",
          target: 0,
          targetText: "0",
        },
        {
          name: "normal jobs' duplicate runs (all attributed)",
          value: normalDuplicates,
          unit: "runs",
        },
        ...restartFigures(h),
        ...duplicateFigures(h, finished),
      ],
      notes: [],
      failures,
    };
  },
};
