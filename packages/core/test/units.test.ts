import { describe, expect, it } from "vitest";
import {
  addSample,
  backoffMs,
  bucketIndex,
  byteLength,
  decodeJson,
  emptySummary,
  HISTOGRAM_BOUNDS_MS,
  mergeSummaries,
  percentile,
  resolveRetry,
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
});
