/** Counters since a worker started, per lane (config name). */
export interface WorkerMetrics {
  /** Times the selector picked each lane. */
  selected: Record<string, number>;
  /** Reserve calls per lane, and how many of them came back empty. */
  reserves: Record<string, number>;
  emptyReserves: Record<string, number>;
  /** Jobs reserved per lane. */
  jobs: Record<string, number>;
}

export function emptyWorkerMetrics(): WorkerMetrics {
  return { selected: {}, reserves: {}, emptyReserves: {}, jobs: {} };
}

export function bump(counters: Record<string, number>, key: string, n = 1): void {
  counters[key] = (counters[key] ?? 0) + n;
}
