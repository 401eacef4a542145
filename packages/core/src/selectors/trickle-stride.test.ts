import { describe, expect, it } from "vitest";
import { ConfigError } from "../errors.ts";
import { createSeededRandom } from "./selector.ts";
import { createTestContext, KALE_LANES, type TestSelectionContext } from "./testing.ts";
import { createTrickleStride } from "./trickle-stride.ts";

/** A test context that records the turn caps the selector asks for. */
function withLimit(context: TestSelectionContext) {
  const caps: Array<number | undefined> = [];
  let cap: number | undefined;
  const ctx: TestSelectionContext = {
    ...context,
    limitTurn: (maxJobs: number) => {
      cap = maxJobs;
    },
  };
  const select = async (selector: ReturnType<typeof createTrickleStride>) => {
    cap = undefined;
    const lane = await selector.select(ctx);
    caps.push(cap);
    return { lane: lane.name, cap };
  };
  return { ctx, caps, select };
}

describe("createTrickleStride", () => {
  it("gives an overdue low lane a one-job trickle even while it is known empty", async () => {
    let now = 0;
    const selector = createTrickleStride({
      random: createSeededRandom(1),
      clock: { now: () => now },
    });
    const context = createTestContext(KALE_LANES, {}, { high: 5, default: 5, low: 0 });
    const { select } = withLimit(context);
    // First sight starts the clock; until 200 ms pass, plain stride (low known empty: never).
    for (let i = 0; i < 20; i++) expect((await select(selector)).lane).not.toBe("low");
    now = 250;
    expect(await select(selector)).toEqual({ lane: "low", cap: 1 });
    // Its clock restarts at the trickle.
    expect((await select(selector)).lane).not.toBe("low");
  });

  it("never trickles the top lane or a middle lane", async () => {
    let now = 0;
    const selector = createTrickleStride({
      random: createSeededRandom(2),
      clock: { now: () => now },
    });
    const context = createTestContext(KALE_LANES, {}, { high: 0, default: 0, low: 0 });
    const { select, caps } = withLimit(context);
    for (let i = 0; i < 50; i++) {
      now += 100;
      const { lane, cap } = await select(selector);
      if (cap !== undefined) expect(lane).toBe("low");
    }
    expect(caps.filter((c) => c !== undefined).length).toBeGreaterThan(0);
  });

  it("backs off after empty trickles and comes back after a productive one", async () => {
    let now = 0;
    const selector = createTrickleStride({
      random: createSeededRandom(3),
      clock: { now: () => now },
    });
    const context = createTestContext(KALE_LANES, {}, { high: 5, default: 5, low: 0 });
    const { select } = withLimit(context);
    await select(selector);
    const trickleTimes: number[] = [];
    for (let t = 10; t <= 4_000; t += 10) {
      now = t;
      // low stays empty: each trickle leaves its hint at 0.
      if ((await select(selector)).cap !== undefined) trickleTimes.push(t);
    }
    const gaps = trickleTimes.slice(1).map((t, i) => t - trickleTimes[i]!);
    // 400, 800, then capped at 1000 ms (+10: the first 10 ms step strictly past it).
    expect(gaps.slice(0, 3)).toEqual([410, 810, 1_010]);
    expect(gaps.at(-1)).toBe(1_010);
    // A trickle that finds a job (the hint is no longer 0) halves the interval.
    context.hints.delete("low");
    now += 1_000;
    await select(selector); // the trickle whose outcome is read next time
    const before = now;
    now += 10;
    await select(selector); // reads "not empty": 1000 → 500 ms
    context.hints.set("low", 0);
    let next = 0;
    for (let t = before + 20; t <= before + 2_000; t += 10) {
      now = t;
      if ((await select(selector)).cap !== undefined) {
        next = t;
        break;
      }
    }
    // Half the 1000 ms cap, give or take the 10 ms steps of this test.
    expect(next - before).toBeGreaterThan(500);
    expect(next - before).toBeLessThanOrEqual(530);
  });

  it("is plain hinted-stride when the worker cannot cap a turn", async () => {
    let now = 0;
    const selector = createTrickleStride({
      random: createSeededRandom(4),
      clock: { now: () => now },
    });
    const context = createTestContext(KALE_LANES, {}, { high: 5, default: 5, low: 0 });
    for (let i = 0; i < 100; i++) {
      now += 100;
      expect((await selector.select(context)).name).not.toBe("low");
    }
    expect(context.probeCount()).toBe(0);
  });

  it("rejects bad options", () => {
    expect(() => createTrickleStride({ trickleMs: 0 })).toThrow(ConfigError);
    expect(() => createTrickleStride({ trickleJobs: 1.5 })).toThrow(ConfigError);
    expect(() => createTrickleStride({ trickleMs: 500, maxTrickleMs: 100 })).toThrow(ConfigError);
    expect(() => createTrickleStride({ trickleShare: Number.NaN })).toThrow(ConfigError);
    expect(() => createTrickleStride({ trickleMs: 500, maxTrickleMs: 499 })).toThrow(
      expect.objectContaining({ field: "maxTrickleMs", value: 499 }),
    );
    expect(() => createTrickleStride({ trickleMs: 500, maxTrickleMs: 500 })).not.toThrow();
  });

  it("trickles a lane whose priority is exactly trickleShare of the top one", async () => {
    let now = 0;
    // Kale's lanes are 100/40/5: with a share of 0.05, low (5) is at the bound.
    const selector = createTrickleStride({
      random: createSeededRandom(3),
      clock: { now: () => now },
      trickleShare: 0.05,
    });
    const context = createTestContext(KALE_LANES, {}, { high: 5, default: 5, low: 0 });
    const { select } = withLimit(context);
    await select(selector);
    now = 250;
    expect(await select(selector)).toEqual({ lane: "low", cap: 1 });
  });
});
