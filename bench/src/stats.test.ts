import { describe, expect, it } from "vitest";
import { median, percentile, seededRandom } from "./stats.ts";

describe("percentile (nearest rank)", () => {
  const sorted = Array.from({ length: 100 }, (_, n) => n + 1);
  it("picks the value at the rank", () => {
    expect(percentile(sorted, 50)).toBe(50);
    expect(percentile(sorted, 99)).toBe(99);
    expect(percentile(sorted, 100)).toBe(100);
    expect(percentile(sorted, 0)).toBe(1);
  });
  it("is NaN when empty", () => {
    expect(percentile([], 50)).toBeNaN();
  });
});

describe("median", () => {
  it("takes the middle, or the mean of the two middles", () => {
    expect(median([3, 1, 2])).toBe(2);
    expect(median([4, 1, 3, 2])).toBe(2.5);
  });
  it("ignores non-finite values (failed runs)", () => {
    expect(median([Number.NaN, 5, 7])).toBe(6);
    expect(median([Number.NaN])).toBeNaN();
  });
});

describe("seededRandom", () => {
  it("repeats its sequence for a seed, in [0, 1)", () => {
    const a = seededRandom(7);
    const b = seededRandom(7);
    const first = Array.from({ length: 5 }, a);
    expect(Array.from({ length: 5 }, b)).toEqual(first);
    for (const value of first) expect(value >= 0 && value < 1).toBe(true);
    expect(Array.from({ length: 5 }, seededRandom(8))).not.toEqual(first);
  });
});
