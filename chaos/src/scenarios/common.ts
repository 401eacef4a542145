/** Pieces the fault scenarios share: keeping a backlog, the base failures, common figures. */
import { failuresOf } from "../checker.ts";
import { quantile } from "../figures.ts";
import type { Finished, Harness } from "../harness.ts";
import type { Figure } from "../scenario.ts";
import type { JobKind } from "../worker/chaos-task.ts";

/** Publish enough `ok` jobs of `ms` to bring the pending count back up to `backlog`. */
export async function topUp(h: Harness, backlog: number, ms: number, kind: JobKind = "ok") {
  const missing = backlog - (await h.pending());
  if (missing <= 0) return 0;
  await h.producer.publish(Array.from({ length: missing }, () => ({ kind, ms })));
  return missing;
}

/** Wait until the workers have finished `jobs` more jobs than now (they are running). */
export async function progress(h: Harness, jobs: number, timeoutMs: number) {
  const target = (await h.finishedCount()) + jobs;
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    // While redis-server restarts the count cannot be read: keep polling.
    const done = await h.finishedCount().catch(() => -1);
    if (done >= target) return;
    if (Date.now() > deadline) throw new Error(`no progress: ${jobs} jobs in ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** p50, p99 and max of `samples` as figures, the p99 with an optional target. */
export function percentileFigures(
  name: string,
  samples: number[],
  unit: string,
  target?: { value: number; text: string },
): Figure[] {
  const n = samples.length;
  return [
    { name: `${name}, p50`, value: quantile(samples, 0.5), unit, samples: n },
    {
      name: `${name}, p99`,
      value: quantile(samples, 0.99),
      unit,
      samples: n,
      ...(target ? { target: target.value, targetText: target.text } : {}),
    },
    { name: `${name}, max`, value: quantile(samples, 1), unit, samples: n },
  ];
}

/** The base failures, plus a drain that did not finish. */
export function baseFailures(
  finished: Finished,
  drained: boolean,
  options: { lossyStore?: boolean } = {},
): string[] {
  const out = failuresOf(finished.result, options);
  if (!drained) out.unshift("the jobs did not all finish before the drain timeout");
  return out;
}

/** Figures every fault scenario reports. */
export function duplicateFigures(finished: Finished): Figure[] {
  const r = finished.result;
  return [
    { name: "jobs published (acknowledged)", value: r.acked, unit: "jobs" },
    { name: "handler runs", value: r.runs, unit: "runs" },
    { name: "duplicate runs", value: r.duplicateRuns.length, unit: "runs" },
    { name: "settling calls refused by fencing (stale lock)", value: r.refused, unit: "calls" },
    { name: "of which sent after their lease had ended", value: r.lateRefused, unit: "calls" },
  ];
}
