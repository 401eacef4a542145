/**
 * Wait-time and run-time statistics, per lane and UTC day: count, mean and variance
 * (Welford's online algorithm) and a histogram. Core owns the math; adapters store the
 * numbers (the Redis adapter mirrors `bucketIndex` and `addSample` in Lua, with the same
 * bounds table, so every backend's histograms line up).
 *
 * Buckets follow qless (seconds up to a minute, minutes up to an hour, hours up to a
 * day, then days), with sub-second buckets in front, because most jobs of an async
 * Node worker finish in milliseconds and a 0–1 s bucket would hide all of them.
 */

/** Upper bounds (exclusive) of each histogram bucket, in ms. The last bucket is open. */
export const HISTOGRAM_BOUNDS_MS: ReadonlyArray<number> = buildBounds();

function buildBounds(): number[] {
  const bounds = [1, 2, 5, 10, 20, 50, 100, 200, 500];
  for (let s = 1; s <= 60; s++) bounds.push(s * 1000); // 1 s … 60 s
  for (let m = 2; m <= 60; m++) bounds.push(m * 60_000); // 2 min … 60 min
  for (let h = 2; h <= 24; h++) bounds.push(h * 3_600_000); // 2 h … 24 h
  for (let d = 2; d <= 7; d++) bounds.push(d * 86_400_000); // 2 d … 7 d
  bounds.push(Number.POSITIVE_INFINITY);
  return bounds;
}

/** Number of histogram buckets. */
export const HISTOGRAM_SIZE = HISTOGRAM_BOUNDS_MS.length;

/** Index of the bucket holding `ms` (binary search over the bounds). */
export function bucketIndex(ms: number): number {
  const v = Math.max(0, ms);
  let lo = 0;
  let hi = HISTOGRAM_BOUNDS_MS.length - 1;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (v < (HISTOGRAM_BOUNDS_MS[mid] as number)) hi = mid;
    else lo = mid + 1;
  }
  return lo;
}

/** Online summary of a series of durations. */
export interface Summary {
  count: number;
  /** Mean, ms. */
  mean: number;
  /** Sum of squared differences from the mean (Welford's M2), ms². */
  m2: number;
  /** Counts per bucket of HISTOGRAM_BOUNDS_MS; sparse: missing index = 0. */
  histogram: Record<number, number>;
}

/** Stats of one lane for one UTC day. */
export interface DayStats {
  /** "YYYY-MM-DD", UTC. */
  day: string;
  /** Due → reserved. */
  wait: Summary;
  /** Reserved → finished (acked or failed). */
  run: Summary;
  /** Jobs that went dead. */
  failures: number;
  /** Failed attempts that were scheduled for another try. */
  retries: number;
}

export function emptySummary(): Summary {
  return { count: 0, mean: 0, m2: 0, histogram: {} };
}

export function emptyDayStats(day: string): DayStats {
  return { day, wait: emptySummary(), run: emptySummary(), failures: 0, retries: 0 };
}

/** Add one sample (ms) to a summary, in place. */
export function addSample(summary: Summary, ms: number): void {
  summary.count += 1;
  const delta = ms - summary.mean;
  summary.mean += delta / summary.count;
  summary.m2 += delta * (ms - summary.mean);
  const b = bucketIndex(ms);
  summary.histogram[b] = (summary.histogram[b] ?? 0) + 1;
}

/** Combine two summaries (Chan et al.'s parallel variance), returning a new one. */
export function mergeSummaries(a: Summary, b: Summary): Summary {
  const count = a.count + b.count;
  if (count === 0) return emptySummary();
  const delta = b.mean - a.mean;
  const mean = a.mean + (delta * b.count) / count;
  const m2 = a.m2 + b.m2 + (delta * delta * a.count * b.count) / count;
  const histogram: Record<number, number> = { ...a.histogram };
  for (const [k, v] of Object.entries(b.histogram)) {
    const i = Number(k);
    histogram[i] = (histogram[i] ?? 0) + v;
  }
  return { count, mean, m2, histogram };
}

/** Sample variance, ms² (0 with fewer than two samples). */
export function variance(summary: Summary): number {
  return summary.count < 2 ? 0 : summary.m2 / (summary.count - 1);
}

/** Standard deviation, ms. */
export function stddev(summary: Summary): number {
  return Math.sqrt(variance(summary));
}

/**
 * Percentile (0 < p <= 1) estimated from the histogram: the bucket holding the p-th
 * sample, linearly interpolated inside it. Exact to the bucket; NaN when empty.
 */
export function percentile(summary: Summary, p: number): number {
  if (summary.count === 0) return Number.NaN;
  const rank = Math.max(1, Math.ceil(p * summary.count));
  let seen = 0;
  for (let i = 0; i < HISTOGRAM_SIZE; i++) {
    const n = summary.histogram[i] ?? 0;
    if (n === 0) continue;
    if (seen + n >= rank) {
      const lower = i === 0 ? 0 : (HISTOGRAM_BOUNDS_MS[i - 1] as number);
      const upperRaw = HISTOGRAM_BOUNDS_MS[i] as number;
      // The open last bucket has no upper bound: report its lower bound.
      if (!Number.isFinite(upperRaw)) return lower;
      return lower + ((rank - seen) / n) * (upperRaw - lower);
    }
    seen += n;
  }
  return Number.NaN;
}

/** UTC day ("YYYY-MM-DD") of an epoch-ms time. */
export function dayOf(atMs: number): string {
  return new Date(atMs).toISOString().slice(0, 10);
}
