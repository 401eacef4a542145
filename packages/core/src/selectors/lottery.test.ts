import { describe, expect, it } from "vitest";
import { createLottery } from "./lottery.ts";
import { createSeededRandom } from "./selector.ts";
import { createTestContext, KALE_LANES } from "./testing.ts";

describe("createLottery", () => {
  it("draws lanes in proportion to their tickets whatever is known, never probing", async () => {
    const selector = createLottery({ random: createSeededRandom(7) });
    const context = createTestContext(KALE_LANES, {}, { high: 0 });
    const counts = new Map<string, number>();
    const draws = 40_000;
    for (let i = 0; i < draws; i++) {
      const lane = await selector.select(context);
      counts.set(lane.name, (counts.get(lane.name) ?? 0) + 1);
    }
    expect(Math.abs((counts.get("high") ?? 0) / draws - 100 / 145)).toBeLessThan(0.01);
    expect(Math.abs((counts.get("default") ?? 0) / draws - 40 / 145)).toBeLessThan(0.01);
    expect(Math.abs((counts.get("low") ?? 0) / draws - 5 / 145)).toBeLessThan(0.01);
    expect(context.probeCount()).toBe(0);
  });
});
