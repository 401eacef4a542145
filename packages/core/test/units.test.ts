import { describe, expect, it } from "vitest";
import {
  addSample,
  backoffMs,
  bucketIndex,
  byteLength,
  dayOf,
  decodeJson,
  emptyDayStats,
  emptySummary,
  encodeJson,
  HISTOGRAM_BOUNDS_MS,
  HISTOGRAM_SIZE,
  mergeSummaries,
  percentile,
  resolveRetry,
  stddev,
  variance,
} from "../src/adapter-kit.ts";
import { createSeededRandom } from "../src/index.ts";

describe("retry schedule", () => {
  it("follows QuantumLeap's c·2ⁿ with base 20 s and no jitter", () => {
    const policy = resolveRetry({ baseMs: 20_000, jitter: 0, maxAttempts: 6 }, "retry");
    expect([1, 2, 3, 4].map((n) => backoffMs(policy, n, Math.random))).toEqual([
      20_000, 40_000, 80_000, 160_000,
    ]);
  });

  it("caps at maxMs and takes jitter off the delay", () => {
    const policy = resolveRetry({ baseMs: 1_000, maxMs: 10_000, jitter: 0.5 }, "retry");
    expect(backoffMs(policy, 20, () => 0)).toBe(10_000);
    expect(backoffMs(policy, 20, () => 0.999_999)).toBe(5_000);
    const random = createSeededRandom(7);
    for (let i = 0; i < 100; i++) {
      const d = backoffMs(policy, 3, random);
      expect(d).toBeGreaterThan(2_000);
      expect(d).toBeLessThanOrEqual(4_000);
    }
  });
});

describe("payload codec", () => {
  it("never revives a prototype", () => {
    const value = decodeJson(
      '{"a":1,"__proto__":{"polluted":true},"constructor":{"prototype":{"bad":1},"ok":2}}',
    ) as Record<string, unknown>;
    expect(Object.getPrototypeOf(value)).toBe(Object.prototype);
    expect(Object.hasOwn(value, "__proto__")).toBe(false);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    expect(value.constructor).toEqual({ ok: 2 });
    const merged = Object.assign({}, value);
    expect((merged as Record<string, unknown>).polluted).toBeUndefined();
  });

  it("keeps constructor keys that cannot reach a prototype", () => {
    expect(decodeJson('{"constructor":"Ship","x":{"constructor":null}}')).toEqual({
      constructor: "Ship",
      x: { constructor: null },
    });
    expect(decodeJson('{"constructor":{"name":"c","size":2}}')).toEqual({
      constructor: { name: "c", size: 2 },
    });
    expect(decodeJson('{"constructor":[1,2]}')).toEqual({ constructor: [1, 2] });
    expect(decodeJson('{"other":{"prototype":1}}')).toEqual({ other: { prototype: 1 } });
  });

  it("encodes undefined as null, so a job always has a payload", () => {
    expect(encodeJson(undefined)).toBe("null");
    expect(encodeJson({ a: undefined })).toBe("{}");
  });

  it("measures UTF-8 bytes", () => {
    expect(byteLength("abc")).toBe(3);
    expect(byteLength("ü€😀")).toBe(2 + 3 + 4);
  });
});

describe("stats math", () => {
  it("puts durations into qless-style buckets with sub-second ones in front", () => {
    expect(bucketIndex(0)).toBe(0);
    expect(bucketIndex(0.5)).toBe(0);
    expect(bucketIndex(1)).toBe(1);
    expect(HISTOGRAM_BOUNDS_MS[bucketIndex(1_500)]).toBe(2_000);
    expect(HISTOGRAM_BOUNDS_MS[bucketIndex(90_000)]).toBe(120_000);
    expect(HISTOGRAM_BOUNDS_MS[bucketIndex(3 * 3_600_000)]).toBe(4 * 3_600_000);
    expect(HISTOGRAM_BOUNDS_MS[bucketIndex(30 * 86_400_000)]).toBe(Number.POSITIVE_INFINITY);
  });

  it("computes mean and variance online, and merges summaries exactly", () => {
    const random = createSeededRandom(1);
    const xs = Array.from({ length: 1_000 }, () => random() * 5_000);
    const a = emptySummary();
    const b = emptySummary();
    const all = emptySummary();
    xs.forEach((x, i) => {
      addSample(i % 3 === 0 ? a : b, x);
      addSample(all, x);
    });
    const mean = xs.reduce((s, x) => s + x, 0) / xs.length;
    const v = xs.reduce((s, x) => s + (x - mean) ** 2, 0) / (xs.length - 1);
    expect(all.mean).toBeCloseTo(mean, 6);
    expect(variance(all)).toBeCloseTo(v, 3);
    const merged = mergeSummaries(a, b);
    expect(merged.count).toBe(1_000);
    expect(merged.mean).toBeCloseTo(mean, 6);
    expect(variance(merged)).toBeCloseTo(v, 3);
    expect(merged.histogram).toEqual(all.histogram);
  });

  it("derives percentiles from the histogram, exact to the bucket", () => {
    const s = emptySummary();
    for (let i = 0; i < 90; i++) addSample(s, 3);
    for (let i = 0; i < 10; i++) addSample(s, 7_500);
    const p50 = percentile(s, 0.5);
    expect(p50).toBeGreaterThanOrEqual(2);
    expect(p50).toBeLessThanOrEqual(5);
    const p99 = percentile(s, 0.99);
    expect(p99).toBeGreaterThanOrEqual(7_000);
    expect(p99).toBeLessThanOrEqual(8_000);
    expect(percentile(emptySummary(), 0.5)).toBeNaN();
  });

  it("interpolates percentiles linearly inside the bucket, to exact values", () => {
    const s = emptySummary();
    for (let i = 0; i < 90; i++) addSample(s, 3); // bucket [2, 5)
    for (let i = 0; i < 10; i++) addSample(s, 7_500); // bucket [7000, 8000)
    expect(percentile(s, 0.5)).toBeCloseTo(2 + (50 / 90) * 3, 9);
    expect(percentile(s, 0.9)).toBe(5);
    expect(percentile(s, 0.99)).toBe(7_900);
    expect(percentile(s, 1)).toBe(8_000);
    // A tiny p still names the first sample's bucket (rank 1).
    expect(percentile(s, 0.0001)).toBeCloseTo(2 + (1 / 90) * 3, 9);
    const first = emptySummary();
    addSample(first, 0.5);
    expect(percentile(first, 1)).toBe(1);
    // The open last bucket reports its lower bound.
    const open = emptySummary();
    addSample(open, 30 * 86_400_000);
    expect(percentile(open, 0.5)).toBe(7 * 86_400_000);
  });

  it("has a bucket boundary at every bound, and none below zero", () => {
    expect(HISTOGRAM_SIZE).toBe(9 + 60 + 59 + 23 + 6 + 1);
    expect(HISTOGRAM_BOUNDS_MS.slice(0, 10)).toEqual([1, 2, 5, 10, 20, 50, 100, 200, 500, 1_000]);
    HISTOGRAM_BOUNDS_MS.forEach((bound, i) => {
      if (!Number.isFinite(bound)) return;
      expect(bucketIndex(bound - 0.001)).toBe(i);
      expect(bucketIndex(bound)).toBe(i + 1);
    });
    expect(bucketIndex(-5)).toBe(0);
    expect(bucketIndex(Number.POSITIVE_INFINITY)).toBe(HISTOGRAM_SIZE - 1);
  });

  it("keeps exact small-sample statistics", () => {
    const s = emptySummary();
    expect([variance(s), stddev(s)]).toEqual([0, 0]);
    addSample(s, 4);
    expect([s.count, s.mean, s.m2, variance(s)]).toEqual([1, 4, 0, 0]);
    addSample(s, 8);
    expect([s.count, s.mean, s.m2, variance(s), stddev(s)]).toEqual([2, 6, 8, 8, Math.sqrt(8)]);
    expect(s.histogram).toEqual({ [bucketIndex(4)]: 1, [bucketIndex(8)]: 1 });
    expect(mergeSummaries(emptySummary(), emptySummary())).toEqual(emptySummary());
    expect(mergeSummaries(s, emptySummary())).toEqual(s);
    expect(mergeSummaries(emptySummary(), s)).toEqual(s);
    const t = emptySummary();
    addSample(t, 12);
    expect(mergeSummaries(s, t)).toEqual({
      count: 3,
      mean: 8,
      m2: 32,
      histogram: { [bucketIndex(4)]: 1, [bucketIndex(8)]: 1, [bucketIndex(12)]: 1 },
    });
  });

  it("names UTC days and starts a day's stats empty", () => {
    expect(dayOf(Date.UTC(2026, 0, 31, 23, 59, 59, 999))).toBe("2026-01-31");
    expect(dayOf(Date.UTC(2026, 1, 1))).toBe("2026-02-01");
    expect(emptyDayStats("2026-02-01")).toEqual({
      day: "2026-02-01",
      wait: emptySummary(),
      run: emptySummary(),
      failures: 0,
      retries: 0,
    });
  });
});
