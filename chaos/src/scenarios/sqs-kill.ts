/**
 * kill -9 of worker processes on SQS (fauxqs, one server in the orchestrating process,
 * the workers reaching it over HTTP). The lease is the visibility timeout; a killed
 * worker's messages come back when it ends. Nothing may be lost or acked twice; the time
 * from a kill to each held job's re-run is reported (no target: SQS decides when a
 * message is visible again, in whole seconds).
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
import type { KillParams } from "./kill.ts";

export type SqsKillParams = Omit<KillParams, "pauses">;

export const sqsKillScenario: Scenario<SqsKillParams, Harness> = {
  name: "sqs-kill",
  title: "Worker kill -9 on SQS (fauxqs)",
  async setup(ctx, p) {
    return startBacklog({ name: "sqs-kill", runDir: ctx.runDir, backend: "sqs" }, p);
  },
  async inject(h, p, ctx) {
    for (let i = 0; i < p.kills; i++) {
      await progress(h, p.jobsBetweenFaults, 120_000, { backlog: p.backlog, ms: p.jobMs });
      const slot = i % p.workers;
      const pid = await h.pool.kill(slot);
      ctx.log(`sqs-kill: killed worker ${slot} (pid ${pid}), ${i + 1}/${p.kills}`);
      await h.pool.settled();
    }
  },
  async check(h, p) {
    const drained = await h.drain(p.drainTimeoutMs);
    const finished = await h.finish();
    const rec = recovery(finished.facts, h.faults.faults, ["kill"]);
    return {
      name: "sqs-kill",
      title: sqsKillScenario.title,
      backend: "fauxqs (SQS standard queue)",
      params: {
        backlog: p.backlog,
        workers: `${p.workers} × ${p.concurrency}`,
        "job ms": p.jobMs,
        "lease ms": p.leaseMs,
        kills: h.faults.count("kill"),
      },
      check: finished.result,
      figures: [
        ...percentileFigures("kill → re-run start", rec.samples, "ms"),
        { name: "held jobs acked at the kill (not re-run)", value: rec.notRerun, unit: "jobs" },
        {
          name: "acks presumed applied (answer lost, queue empty)",
          value: finished.result.presumedDone,
          unit: "jobs",
        },
        ...restartFigures(h),
        ...duplicateFigures(h, finished),
      ],
      notes: [],
      failures: baseFailures(h, finished, drained),
    };
  },
};
