import { describe, expect, it } from "vitest";
import { createReducedLottery } from "./reduced-lottery.ts";
import { createSeededRandom, type Selector } from "./selector.ts";
import { createTestContext, KALE_LANES, type TestSelectionContext } from "./testing.ts";

async function shares(selector: Selector, context: TestSelectionContext, draws: number) {
  const counts = new Map<string, number>();
  for (let i = 0; i < draws; i++) {
    const lane = await selector.select(context);
    counts.set(lane.name, (counts.get(lane.name) ?? 0) + 1);
  }
  return (name: string) => (counts.get(name) ?? 0) / draws;
}

describe("createReducedLottery", () => {
  it("draws busy lanes in proportion to their tickets, without a request", async () => {
    const selector = createReducedLottery({ random: createSeededRandom(1) });
    const context = createTestContext(KALE_LANES, {}, { high: 7, default: 3, low: 1 });
    const share = await shares(selector, context, 40_000);
    expect(share("high")).toBeCloseTo(100 / 145, 2);
    expect(share("default")).toBeCloseTo(40 / 145, 2);
    expect(share("low")).toBeCloseTo(5 / 145, 2);
    expect(context.probeCount()).toBe(0);
  });

  it("drops a known-empty lane without probing it", async () => {
    const selector = createReducedLottery({ random: createSeededRandom(2) });
    const context = createTestContext(KALE_LANES, { default: 4, low: 4 }, { high: 0 });
    const share = await shares(selector, context, 5_000);
    expect(share("high")).toBe(0);
    expect(share("default")).toBeCloseTo(40 / 45, 1);
    expect(context.probes.get("high")).toBeUndefined();
  });

  it("probes only the lanes it knows nothing about", async () => {
    const selector = createReducedLottery({ random: createSeededRandom(3) });
    const context = createTestContext(KALE_LANES, { low: 2 }, { high: 0, default: 0 });
    expect((await selector.select(context)).name).toBe("low");
    expect(Object.fromEntries(context.probes)).toEqual({ low: 1 });
    // The probe became a hint: the next selection needs no request.
    expect((await selector.select(context)).name).toBe("low");
    expect(context.probeCount()).toBe(1);
  });

  it("probes an unknown empty lane once per selection, then skips it", async () => {
    const selector = createReducedLottery({ random: createSeededRandom(4) });
    const context = createTestContext(KALE_LANES, { low: 1 });
    expect((await selector.select(context)).name).toBe("low");
    expect(context.probeCount()).toBeLessThanOrEqual(3);
    for (const count of context.probes.values()) expect(count).toBe(1);
  });

  it("when every lane is empty returns a lottery winner over all lanes, probing nothing", async () => {
    const selector = createReducedLottery({ random: createSeededRandom(5) });
    const context = createTestContext(KALE_LANES, {}, { high: 0, default: 0, low: 0 });
    const share = await shares(selector, context, 20_000);
    expect(share("high")).toBeCloseTo(100 / 145, 1);
    expect(share("low")).toBeGreaterThan(0);
    expect(context.probeCount()).toBe(0);
  });

  it("with nothing known and nothing ready, probes each lane once and still returns one", async () => {
    const selector = createReducedLottery({ random: createSeededRandom(6) });
    const context = createTestContext(KALE_LANES);
    const lane = await selector.select(context);
    expect(KALE_LANES).toContain(lane);
    expect(Object.fromEntries(context.probes)).toEqual({ high: 1, default: 1, low: 1 });
  });

  it("replays the same choices from the same seed", async () => {
    const run = async () => {
      const selector = createReducedLottery({ random: createSeededRandom(42) });
      const context = createTestContext(KALE_LANES, {}, { high: 1, default: 1, low: 1 });
      const names: string[] = [];
      for (let i = 0; i < 50; i++) names.push((await selector.select(context)).name);
      return names;
    };
    expect(await run()).toEqual(await run());
  });
});
