import { describe, expect, it } from "vitest";
import { createRoundRobin } from "./round-robin.ts";
import { createTestContext, KALE_LANES } from "./testing.ts";

describe("createRoundRobin", () => {
  it("cycles through the lanes in configuration order", async () => {
    const selector = createRoundRobin();
    const context = createTestContext(KALE_LANES, {}, { high: 1, default: 1, low: 1 });
    const names: string[] = [];
    for (let i = 0; i < 7; i++) names.push((await selector.select(context)).name);
    expect(names).toEqual(["high", "default", "low", "high", "default", "low", "high"]);
  });

  it("skips known-empty lanes and returns unknown ones without probing", async () => {
    const selector = createRoundRobin();
    const context = createTestContext(KALE_LANES, {}, { default: 0 });
    const names: string[] = [];
    for (let i = 0; i < 4; i++) names.push((await selector.select(context)).name);
    expect(names).toEqual(["high", "low", "high", "low"]);
    expect(context.probeCount()).toBe(0);
  });

  it("keeps cycling for the long poll when every lane is empty", async () => {
    const selector = createRoundRobin();
    const context = createTestContext(KALE_LANES, {}, { high: 0, default: 0, low: 0 });
    const names: string[] = [];
    for (let i = 0; i < 4; i++) names.push((await selector.select(context)).name);
    expect(names).toEqual(["high", "default", "low", "high"]);
  });
});
