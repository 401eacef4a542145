/** Pieces the fault scenarios share: keeping a backlog, the base failures, common figures. */
import { failuresOf } from "../checker.ts";
import { quantile } from "../figures.ts";
import { createHarness, type Finished, type Harness, type HarnessOptions } from "../harness.ts";
import type { Figure } from "../scenario.ts";
import type { JobKind } from "../worker/chaos-task.ts";

/** What the backlog scenarios' setup reads from their parameters. */
export interface BacklogParams {
  backlog: number;
  workers: number;
  concurrency: number;
  jobMs: number;
  leaseMs: number;
}

/**
 * The setup the backlog scenarios share: their lane (1 s long polls, batches of 10,
 * maxStalls 3, the scenario's lease), `backlog` jobs of `jobMs` published, then the
 * workers started.
 */
export async function startBacklog(
  options: Pick<HarnessOptions, "name" | "runDir" | "backend" | "appendfsync">,
  p: BacklogParams,
): Promise<Harness> {
  const h = await createHarness({
    ...options,
    workers: p.workers,
    concurrency: p.concurrency,
    lane: { leaseMs: p.leaseMs, longPollMs: 1_000, batchSize: 10, maxStalls: 3 },
  });
  await topUp(h, p.backlog, p.jobMs);
  await h.pool.start();
  return h;
}

/** Publish enough `ok` jobs of `ms` to bring the pending count back up to `backlog`. */
export async function topUp(h: Harness, backlog: number, ms: number, kind: JobKind = "ok") {
  const missing = backlog - (await h.pending());
  if (missing <= 0) return 0;
  await h.producer.publish(Array.from({ length: missing }, () => ({ kind, ms })));
  return missing;
}

/**
 * Wait until the workers have finished `jobs` more jobs than now. With `keep`, the
 * pending count is topped up to `keep.backlog` while waiting, so the workers never run out
 * of jobs between two faults (a restarted worker takes a while to be ready).
 */
export async function progress(
  h: Harness,
  jobs: number,
  timeoutMs: number,
  keep?: { backlog: number; ms: number },
) {
  const deadline = Date.now() + timeoutMs;
  // Called right after a restart too, while the connection is still coming back: the
  // starting count is read until the server answers (a fast-profile run threw here).
  let start = -1;
  while (start < 0) {
    start = await h.finishedCount().catch(() => -1);
    if (start < 0) {
      if (Date.now() > deadline) throw new Error(`no answer from the backend in ${timeoutMs} ms`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }
  const target = start + jobs;
  for (;;) {
    if (keep) await topUp(h, keep.backlog, keep.ms).catch(() => 0);
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

/**
 * The base failures, plus a drain that did not finish and a worker process that ended
 * without being killed or swallowing a poison pill (a crash the suite did not inject: a
 * bug, and its re-runs would otherwise pass as attributed to a crash).
 */
export function baseFailures(
  h: Harness,
  finished: Finished,
  drained: boolean,
  options: { lossyStore?: boolean } = {},
): string[] {
  const out = failuresOf(finished.result, options);
  if (!drained) out.unshift("the jobs did not all finish before the drain timeout");
  for (const f of h.faults.faults) {
    if (f.kind !== "crash" || f.pids === "all") continue;
    for (const pid of f.pids) {
      if (!finished.facts.pillPids.has(pid)) {
        out.push(
          `worker process ${pid} ended on its own, not by a poison pill (${f.detail ?? "?"})`,
        );
      }
    }
  }
  return out;
}

/** Figures every fault scenario reports. */
export function duplicateFigures(h: Harness, finished: Finished): Figure[] {
  const r = finished.result;
  return [
    {
      name: "stalls observed, not injected (orchestrator or redis-server ≥ lease / 3)",
      value: h.faults.count("stall"),
      unit: "stalls",
    },
    { name: "jobs published (acknowledged)", value: r.acked, unit: "jobs" },
    { name: "handler runs", value: r.runs, unit: "runs" },
    { name: "duplicate runs", value: r.duplicateRuns.length, unit: "runs" },
    {
      name: "runs started after their lease had ended (the job no longer held)",
      value: r.staleStarts,
      unit: "runs",
    },
    { name: "settling calls refused by fencing (stale lock)", value: r.refused, unit: "calls" },
    { name: "of which sent after their lease had ended", value: r.lateRefused, unit: "calls" },
  ];
}

/** How long a killed or crashed worker's slot had no ready worker: death → successor ready. */
export function restartFigures(h: Harness): Figure[] {
  const lives = h.pool.lives;
  const samples: number[] = [];
  for (const life of lives) {
    if (life.diedAt === undefined || life.end === "stopped") continue;
    const next = lives.find((l) => l.slot === life.slot && l.bornAt >= (life.diedAt ?? 0));
    if (next?.readyAt !== undefined) samples.push(next.readyAt - life.diedAt);
  }
  const n = samples.length;
  return [
    {
      name: "worker death → successor ready, p50",
      value: quantile(samples, 0.5),
      unit: "ms",
      samples: n,
    },
    {
      name: "worker death → successor ready, max",
      value: quantile(samples, 1),
      unit: "ms",
      samples: n,
    },
  ];
}
