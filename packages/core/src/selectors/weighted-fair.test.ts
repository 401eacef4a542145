import { describe, expect, it } from "vitest";
import type { Selector } from "./selector.ts";
import { createTestContext, KALE_LANES, type TestSelectionContext } from "./testing.ts";
import { createWeightedFair } from "./weighted-fair.ts";

async function run(selector: Selector, context: TestSelectionContext, count: number) {
  const names: string[] = [];
  for (let i = 0; i < count; i++) names.push((await selector.select(context)).name);
  return names;
}

const tally = (names: string[], name: string) => names.filter((n) => n === name).length;

function gaps(names: string[], name: string): number[] {
  const at = names.flatMap((n, i) => (n === name ? [i] : []));
  return at.slice(1).map((i, k) => i - at[k]!);
}

describe("createWeightedFair", () => {
  it("is deterministic", async () => {
    const busy = { high: 5, default: 5, low: 5 };
    const a = await run(createWeightedFair(), createTestContext(KALE_LANES, {}, busy), 300);
    const b = await run(createWeightedFair(), createTestContext(KALE_LANES, {}, busy), 300);
    expect(a).toEqual(b);
  });

  it("gives busy lanes exact shares by priority with evenly spaced turns", async () => {
    const context = createTestContext(KALE_LANES, {}, { high: 5, default: 5, low: 5 });
    const names = await run(createWeightedFair(), context, 145 * 20);
    expect(tally(names, "high")).toBeGreaterThanOrEqual(1999);
    expect(tally(names, "high")).toBeLessThanOrEqual(2001);
    expect(tally(names, "default")).toBeGreaterThanOrEqual(799);
    expect(tally(names, "default")).toBeLessThanOrEqual(801);
    expect(tally(names, "low")).toBeGreaterThanOrEqual(99);
    expect(tally(names, "low")).toBeLessThanOrEqual(101);
    // 145 / 5 = 29 selections apart, give or take one for ties.
    for (const gap of gaps(names, "low")) expect(gap).toBeLessThanOrEqual(30);
    expect(context.probeCount()).toBe(0);
  });

  it("banks no credit for a lane while it is empty", async () => {
    const selector = createWeightedFair();
    const context = createTestContext(KALE_LANES, {}, { high: 5, default: 5, low: 0 });
    const before = await run(selector, context, 2_000);
    expect(tally(before, "low")).toBe(0);
    context.hints.set("low", 5);
    const after = await run(selector, context, 145);
    // Back at its fair share at once: no burst to make up for the idle time...
    expect(tally(after, "low")).toBeLessThanOrEqual(6);
    // ...and no wait for a stale pass either.
    expect(after.indexOf("low")).toBeLessThan(30);
  });

  it("probes only lanes it knows nothing about, never a known-empty one", async () => {
    const selector = createWeightedFair();
    const context = createTestContext(KALE_LANES, { default: 5, low: 0 }, { high: 0 });
    expect((await selector.select(context)).name).toBe("default");
    expect(context.probes.get("high")).toBeUndefined();
    expect(context.probes.get("default")).toBe(1);
  });

  it("shares long polls by priority when every lane is empty, probing nothing", async () => {
    const context = createTestContext(KALE_LANES, {}, { high: 0, default: 0, low: 0 });
    const names = await run(createWeightedFair(), context, 145);
    expect(tally(names, "high")).toBe(100);
    expect(tally(names, "default")).toBe(40);
    expect(tally(names, "low")).toBe(5);
    expect(context.probeCount()).toBe(0);
  });
});
