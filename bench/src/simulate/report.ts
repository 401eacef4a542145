import type { RunResult } from "./engine.ts";
import type { SimulationOptions, WorkloadSpec } from "./model.ts";

export function formatMs(ms: number): string {
  if (!Number.isFinite(ms)) return "∞";
  if (ms < 1_000) return `${Math.round(ms)}ms`;
  if (ms < 60_000) return `${(ms / 1_000).toFixed(ms < 10_000 ? 2 : 1)}s`;
  return `${(ms / 60_000).toFixed(1)}min`;
}

const pct = (x: number) => `${(x * 100).toFixed(1)}%`;

/** One table per workload: a row per selector and lane, overall figures on the lane rows' right. */
export function formatTable(
  workload: WorkloadSpec,
  results: ReadonlyArray<RunResult>,
  options: SimulationOptions,
  seeds: number,
): string {
  const header = [
    "selector",
    "lane",
    "jobs",
    "mean wait",
    "p99 wait",
    "longest",
    "share",
    "│",
    "req/job",
    "empty recv",
    "probes",
    "req/s",
    "util",
  ];
  const rows: string[][] = [];
  for (const r of results) {
    r.lanes.forEach((lane, i) => {
      const overall =
        i === 0
          ? [
              r.requestsPerJob.toFixed(3),
              String(Math.round(r.emptyReceives)),
              String(Math.round(r.probes)),
              r.requestsPerSec.toFixed(1),
              pct(r.utilisation),
            ]
          : ["", "", "", "", ""];
      rows.push([
        i === 0 ? r.selector : "",
        lane.name,
        String(Math.round(lane.served)),
        formatMs(lane.meanWaitMs),
        formatMs(lane.p99WaitMs),
        formatMs(lane.longestWaitMs) +
          (lane.oldestWaitingMs >= lane.maxServedWaitMs && lane.waitingAtEnd > 0 ? "*" : ""),
        pct(lane.share),
        "│",
        ...overall,
      ]);
    });
  }
  const widths = header.map((h, c) => Math.max(h.length, ...rows.map((row) => row[c]!.length)));
  const left = new Set([0, 1]);
  const line = (cells: string[]) =>
    cells
      .map((cell, c) => (left.has(c) ? cell.padEnd(widths[c]!) : cell.padStart(widths[c]!)))
      .join("  ");
  const rule = widths.map((w) => "─".repeat(w)).join("  ");
  const title =
    `${workload.name}: ${workload.description}\n` +
    `  ${workload.workers} workers × ${workload.concurrency} slots, ${formatMs(options.durationMs)} simulated, ` +
    `backend ${options.backend}, ${options.requestMs} ms per request, hint TTL ${options.hintTtlMs} ms, ` +
    (options.leaveOnShortBatch === false ? "worker stays after a short batch, " : "") +
    (seeds === 1
      ? `seed ${options.seed}`
      : `mean of seeds ${options.seed}..${options.seed + seeds - 1}`);
  const body: string[] = [];
  results.forEach((_, k) => {
    const start = results.slice(0, k).reduce((n, r) => n + r.lanes.length, 0);
    if (k > 0) body.push(rule);
    for (const row of rows.slice(start, start + results[k]!.lanes.length)) body.push(line(row));
  });
  return [title, line(header), rule, ...body].join("\n");
}

/** The goal, checked against the baseline on each workload. */
export interface GoalCheck {
  workload: string;
  selector: string;
  /** Highest-priority lane's p99 wait, as a ratio to the baseline's (≤ 1 passes). */
  highP99Ratio: number;
  /** Lowest-priority lane's longest wait, as a ratio to the baseline's (≤ 0.5 passes). */
  lowLongestRatio: number;
  /** Backend requests per job, as a ratio to the baseline's (< 1 passes). */
  requestsPerJobRatio: number;
  meets: boolean;
}

export function checkGoal(results: ReadonlyArray<RunResult>, baseline: string): GoalCheck[] {
  const checks: GoalCheck[] = [];
  for (const base of results.filter((r) => r.selector === baseline)) {
    const high = indexOfExtreme(base, (a, b) => a > b);
    const low = indexOfExtreme(base, (a, b) => a < b);
    for (const r of results) {
      if (r.workload !== base.workload || r.selector === baseline) continue;
      const highP99Ratio = r.lanes[high]!.p99WaitMs / base.lanes[high]!.p99WaitMs;
      const lowLongestRatio = r.lanes[low]!.longestWaitMs / base.lanes[low]!.longestWaitMs;
      const requestsPerJobRatio = r.requestsPerJob / base.requestsPerJob;
      checks.push({
        workload: r.workload,
        selector: r.selector,
        highP99Ratio,
        lowLongestRatio,
        requestsPerJobRatio,
        meets: highP99Ratio <= 1 && lowLongestRatio <= 0.5 && requestsPerJobRatio < 1,
      });
    }
  }
  return checks;
}

function indexOfExtreme(run: RunResult, better: (a: number, b: number) => boolean): number {
  let best = 0;
  run.lanes.forEach((lane, i) => {
    if (better(lane.priority, run.lanes[best]!.priority)) best = i;
  });
  return best;
}

export function formatGoal(checks: ReadonlyArray<GoalCheck>, baseline: string): string {
  const mark = (ok: boolean) => (ok ? "✓" : "✗");
  const header = ["workload", "selector", "high p99", "low longest", "req/job", "all three"];
  const rows = checks.map((c) => [
    c.workload,
    c.selector,
    `${c.highP99Ratio.toFixed(2)}× ${mark(c.highP99Ratio <= 1)}`,
    `${c.lowLongestRatio.toFixed(2)}× ${mark(c.lowLongestRatio <= 0.5)}`,
    `${c.requestsPerJobRatio.toFixed(3)}× ${mark(c.requestsPerJobRatio < 1)}`,
    c.meets ? "yes" : "no",
  ]);
  const widths = header.map((h, c) => Math.max(h.length, ...rows.map((row) => row[c]!.length)));
  const line = (cells: string[]) =>
    cells
      .map((cell, c) => (c < 2 ? cell.padEnd(widths[c]!) : cell.padStart(widths[c]!)))
      .join("  ");
  return [
    `Goal (issue 5), relative to ${baseline}: high-lane p99 wait ≤ 1×, low-lane longest wait ≤ 0.5×, requests per job < 1×`,
    line(header),
    widths.map((w) => "─".repeat(w)).join("  "),
    ...rows.map(line),
  ].join("\n");
}
