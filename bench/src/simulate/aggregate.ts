import type { LaneResult, RunResult } from "./engine.ts";

/** The mean of each figure over runs of one workload and selector with different seeds. */
export function averageRuns(runs: ReadonlyArray<RunResult>): RunResult {
  const first = runs[0];
  if (first === undefined) throw new Error("averageRuns needs at least one run");
  if (runs.length === 1) return first;
  const mean = (pick: (r: RunResult) => number) =>
    runs.reduce((s, r) => s + pick(r), 0) / runs.length;
  const laneMean = (i: number, pick: (l: LaneResult) => number) => mean((r) => pick(r.lanes[i]!));
  return {
    workload: first.workload,
    selector: first.selector,
    lanes: first.lanes.map((lane, i) => ({
      name: lane.name,
      priority: lane.priority,
      arrived: laneMean(i, (l) => l.arrived),
      served: laneMean(i, (l) => l.served),
      meanWaitMs: laneMean(i, (l) => l.meanWaitMs),
      p50WaitMs: laneMean(i, (l) => l.p50WaitMs),
      p99WaitMs: laneMean(i, (l) => l.p99WaitMs),
      maxServedWaitMs: laneMean(i, (l) => l.maxServedWaitMs),
      maxServedWaitArrivedAtMs: Number.NaN,
      oldestWaitingMs: laneMean(i, (l) => l.oldestWaitingMs),
      longestWaitMs: laneMean(i, (l) => l.longestWaitMs),
      waitingAtEnd: laneMean(i, (l) => l.waitingAtEnd),
      share: laneMean(i, (l) => l.share),
      selections: laneMean(i, (l) => l.selections),
    })),
    served: mean((r) => r.served),
    requests: mean((r) => r.requests),
    receives: mean((r) => r.receives),
    emptyReceives: mean((r) => r.emptyReceives),
    probes: mean((r) => r.probes),
    idlePolls: mean((r) => r.idlePolls),
    requestsPerJob: mean((r) => r.requestsPerJob),
    requestsPerSec: mean((r) => r.requestsPerSec),
    utilisation: mean((r) => r.utilisation),
    selections: mean((r) => r.selections),
  };
}
