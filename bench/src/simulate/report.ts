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
              String(r.emptyReceives),
              String(r.probes),
              r.requestsPerSec.toFixed(1),
              pct(r.utilisation),
            ]
          : ["", "", "", "", ""];
      rows.push([
        i === 0 ? r.selector : "",
        lane.name,
        String(lane.served),
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
    `backend ${options.backend}, ${options.requestMs} ms per request, hint TTL ${options.hintTtlMs} ms, seed ${options.seed}`;
  const body: string[] = [];
  results.forEach((_, k) => {
    const start = results.slice(0, k).reduce((n, r) => n + r.lanes.length, 0);
    if (k > 0) body.push(rule);
    for (const row of rows.slice(start, start + results[k]!.lanes.length)) body.push(line(row));
  });
  return [title, line(header), rule, ...body].join("\n");
}
