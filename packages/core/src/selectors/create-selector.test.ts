import { describe, expect, it } from "vitest";
import { ConfigError } from "../errors.ts";
import { createSelector, isSelectorName, SELECTOR_NAMES } from "./create-selector.ts";
import { createSeededRandom, type Lane } from "./selector.ts";
import { createTestContext, KALE_LANES } from "./testing.ts";

describe("createSelector", () => {
  it("resolves every built-in name to a selector of that name", () => {
    for (const name of SELECTOR_NAMES) {
      expect(createSelector(name, { random: createSeededRandom(1) }).name).toBe(name);
      expect(isSelectorName(name)).toBe(true);
    }
  });

  it("refuses an unknown name with a ConfigError naming the field", () => {
    const attempt = () => createSelector("highest-priority-first");
    expect(attempt).toThrow(ConfigError);
    try {
      attempt();
    } catch (error) {
      expect(error).toMatchObject({ code: "CONFIG", field: "selector" });
      expect((error as Error).message).toContain(`expected one of ${SELECTOR_NAMES.join(", ")}`);
    }
    expect(isSelectorName("nope")).toBe(false);
  });

  it("hands its random source to the selectors that draw", async () => {
    const lanes: Lane[] = [
      { name: "a", priority: 1 },
      { name: "b", priority: 1 },
    ];
    for (const name of ["lottery", "reduced-lottery"] as const) {
      for (const [random, expected] of [
        [() => 0, "a"],
        [() => 0.999_999, "b"],
      ] as const) {
        const selector = createSelector(name, { random });
        const picks = new Set<string>();
        for (let i = 0; i < 30; i++) {
          picks.add((await selector.select(createTestContext(lanes, {}, { a: 5, b: 5 }))).name);
        }
        expect([name, [...picks]]).toEqual([name, [expected]]);
      }
    }
  });

  it("hands its clock to trickle-stride, whose trickles follow it", async () => {
    let now = 0;
    const selector = createSelector("trickle-stride", {
      random: createSeededRandom(1),
      clock: { now: () => now },
    });
    const context = {
      ...createTestContext(KALE_LANES, {}, { high: 5, default: 5, low: 0 }),
      limitTurn: () => {},
    };
    for (let i = 0; i < 20; i++) expect((await selector.select(context)).name).not.toBe("low");
    now = 250;
    expect((await selector.select(context)).name).toBe("low");
  });

  it("checks its options", () => {
    expect(() => createSelector("lottery", { random: 0.5 as never })).toThrow(ConfigError);
    expect(() => createSelector("lottery", { clock: {} as never })).toThrow(ConfigError);
  });
});
