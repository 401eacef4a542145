import { describe, expect, it } from "vitest";
import { ConfigError } from "../errors.ts";
import { createHintedStride } from "./hinted-stride.ts";
import { createSeededRandom, type Selector } from "./selector.ts";
import { createTestContext, KALE_LANES, type TestSelectionContext } from "./testing.ts";

async function run(selector: Selector, context: TestSelectionContext, count: number) {
  const names: string[] = [];
  for (let i = 0; i < count; i++) names.push((await selector.select(context)).name);
  return names;
}

const tally = (names: string[], name: string) => names.filter((n) => n === name).length;

describe("createHintedStride", () => {
  it("never probes: an unknown lane is chosen as if it had jobs", async () => {
    const selector = createHintedStride({ random: createSeededRandom(1) });
    const context = createTestContext(KALE_LANES, { high: 0, default: 0, low: 0 });
    const names = await run(selector, context, 500);
    expect(context.probeCount()).toBe(0);
    expect(tally(names, "high")).toBeGreaterThan(tally(names, "low"));
  });

  it("draws the lane to long-poll by tickets when every lane is known empty", async () => {
    const selector = createHintedStride({ random: createSeededRandom(5) });
    const context = createTestContext(KALE_LANES, {}, { high: 0, default: 0, low: 0 });
    const draws = 20_000;
    const names = await run(selector, context, draws);
    expect(Math.abs(tally(names, "high") / draws - 100 / 145)).toBeLessThan(0.015);
    expect(Math.abs(tally(names, "low") / draws - 5 / 145)).toBeLessThan(0.01);
    expect(context.probeCount()).toBe(0);
  });

  it("gives busy lanes their shares by priority, evenly spaced", async () => {
    const selector = createHintedStride({ random: createSeededRandom(2) });
    const context = createTestContext(KALE_LANES, {}, { high: 5, default: 5, low: 5 });
    const names = await run(selector, context, 145 * 20);
    expect(Math.abs(tally(names, "high") - 2000)).toBeLessThanOrEqual(2);
    expect(Math.abs(tally(names, "default") - 800)).toBeLessThanOrEqual(2);
    expect(Math.abs(tally(names, "low") - 100)).toBeLessThanOrEqual(2);
    const lows = names.flatMap((n, i) => (n === "low" ? [i] : []));
    for (let k = 1; k < lows.length; k++) expect(lows[k]! - lows[k - 1]!).toBeLessThanOrEqual(30);
  });

  it("skips known-empty lanes for free", async () => {
    const selector = createHintedStride({ random: createSeededRandom(3) });
    const context = createTestContext(KALE_LANES, {}, { high: 0, default: 0 });
    // low is unknown: chosen without a probe.
    expect((await selector.select(context)).name).toBe("low");
    // The worker's reserve found it empty: now every lane is known empty.
    context.hints.set("low", 0);
    context.hints.set("default", 4);
    expect((await selector.select(context)).name).toBe("default");
    expect(context.probeCount()).toBe(0);
  });

  it("re-checks a lane that stays empty at its share of turns, and serves it at once when busy", async () => {
    const selector = createHintedStride({ random: createSeededRandom(4) });
    const context = createTestContext(KALE_LANES, {}, { high: 5, default: 5 });
    // low unknown and, every time it is tried, empty.
    let lowTurns = 0;
    for (let i = 0; i < 1_000; i++) {
      const lane = await selector.select(context);
      if (lane.name === "low") {
        lowTurns++;
        context.hints.set("low", 0);
      } else context.hints.delete("low");
    }
    // Tried about as often as its share says (it is unknown, not known empty)...
    expect(lowTurns).toBeGreaterThan(20);
    expect(lowTurns).toBeLessThan(60);
    // ...and when it has jobs it is served at its share at once.
    context.hints.set("low", 5);
    const after = await run(selector, context, 145);
    expect(tally(after, "low")).toBeGreaterThanOrEqual(4);
    expect(tally(after, "low")).toBeLessThanOrEqual(6);
  });

  it("replays the same choices from the same seed, and workers with other seeds differ", async () => {
    const busy = { high: 5, default: 5, low: 5 };
    const seq = (seed: number) =>
      run(
        createHintedStride({ random: createSeededRandom(seed) }),
        createTestContext(KALE_LANES, {}, busy),
        60,
      );
    expect(await seq(9)).toEqual(await seq(9));
    expect(await seq(9)).not.toEqual(await seq(10));
  });

  describe("agingMs", () => {
    it("gives a lane overdue by agingMs × (top priority / its priority) the next turn", async () => {
      // A high turn keeps the worker 50 ms, any other 1 ms.
      const lowGaps = async (agingMs: number | undefined) => {
        let now = 0;
        const selector = createHintedStride({
          random: createSeededRandom(6),
          ...(agingMs === undefined ? {} : { agingMs }),
          clock: { now: () => now },
        });
        const context = createTestContext(KALE_LANES, {}, { high: 5, default: 5, low: 5 });
        const lowTurns: number[] = [];
        for (let i = 0; i < 2_000; i++) {
          const lane = await selector.select(context);
          if (lane.name === "low") lowTurns.push(now);
          now += lane.name === "high" ? 50 : 1;
        }
        return lowTurns.slice(1).map((at, k) => at - lowTurns[k]!);
      };
      // Stride alone: low's turn every 29 turns, 20 of them high ones: about a second.
      expect(Math.max(...(await lowGaps(undefined)))).toBeGreaterThan(900);
      // agingMs 10: low's limit is 10 × 100 / 5 = 200 ms; the high lane, overdue too after
      // each 50 ms turn, may go first by earliest deadline, so allow two high turns more.
      expect(Math.max(...(await lowGaps(10)))).toBeLessThanOrEqual(300);
    });

    it("does not force a turn on a lane known to be empty", async () => {
      let now = 0;
      const selector = createHintedStride({
        random: createSeededRandom(7),
        agingMs: 1,
        clock: { now: () => now },
      });
      const context = createTestContext(KALE_LANES, {}, { high: 5, default: 5, low: 0 });
      for (let i = 0; i < 500; i++) {
        now += 50;
        expect((await selector.select(context)).name).not.toBe("low");
      }
    });

    it("is off by default, and refuses a value that is not a positive number", () => {
      expect(() => createHintedStride({ agingMs: 0 })).toThrow(ConfigError);
      expect(() => createHintedStride({ agingMs: Number.NaN })).toThrow(ConfigError);
      expect(createHintedStride().name).toBe("hinted-stride");
    });
  });
});
