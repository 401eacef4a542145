import { describe, expect, it } from "vitest";
import type { Lane } from "./selector.ts";
import { createStrictPriority } from "./strict-priority.ts";
import { createTestContext } from "./testing.ts";

// Configuration order differs from priority order on purpose.
const LANES: ReadonlyArray<Lane> = [
  { name: "low", priority: 5 },
  { name: "high", priority: 100 },
  { name: "default", priority: 40 },
];

describe("createStrictPriority", () => {
  it("returns the highest-priority lane that has jobs", async () => {
    const selector = createStrictPriority();
    const context = createTestContext(LANES, {}, { low: 9, high: 1, default: 9 });
    expect((await selector.select(context)).name).toBe("high");
    expect(context.probeCount()).toBe(0);
  });

  it("skips known-empty lanes for free and probes unknown ones in priority order", async () => {
    const selector = createStrictPriority();
    const context = createTestContext(LANES, { default: 0, low: 3 }, { high: 0 });
    const order: string[] = [];
    const probe = context.probe.bind(context);
    const spy = {
      ...context,
      probe: (lane: Lane) => {
        order.push(lane.name);
        return probe(lane);
      },
    };
    expect((await selector.select(spy)).name).toBe("low");
    expect(order).toEqual(["default", "low"]);
  });

  it("does not probe below a lane known to have jobs", async () => {
    const selector = createStrictPriority();
    const context = createTestContext(LANES, { high: 0 }, { default: 2 });
    expect((await selector.select(context)).name).toBe("default");
    expect(Object.fromEntries(context.probes)).toEqual({ high: 1 });
  });

  it("returns the highest-priority lane when all are empty", async () => {
    const selector = createStrictPriority();
    const context = createTestContext(LANES, {}, { low: 0, high: 0, default: 0 });
    expect((await selector.select(context)).name).toBe("high");
    expect(context.probeCount()).toBe(0);
  });
});
