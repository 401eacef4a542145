import { describe, expect, it } from "vitest";
import { ConfigError } from "../errors.ts";
import { createSelector } from "./create-selector.ts";
import { drawByTickets, highestPriority } from "./draw.ts";
import { createHintedStride } from "./hinted-stride.ts";
import { createLottery } from "./lottery.ts";
import { createReducedLottery } from "./reduced-lottery.ts";
import { createTrickleStride } from "./trickle-stride.ts";

const a = { name: "a", priority: 1 };
const b = { name: "b", priority: 3 };

describe("drawByTickets", () => {
  it("gives each lane the draws of its tickets, a draw on a boundary to the next lane", () => {
    // a holds [0, 1), b holds [1, 4) of 4 tickets
    expect(drawByTickets([a, b], () => 0).name).toBe("a");
    expect(drawByTickets([a, b], () => 0.2499).name).toBe("a");
    expect(drawByTickets([a, b], () => 0.25).name).toBe("b");
    expect(drawByTickets([a, b], () => 0.999_999).name).toBe("b");
  });
});

describe("highestPriority", () => {
  it("takes the lane with the most tickets, the first configured on a tie", () => {
    expect(highestPriority([a, b]).name).toBe("b");
    const x = { name: "x", priority: 5 };
    const y = { name: "y", priority: 5 };
    expect(highestPriority([x, y]).name).toBe("x");
    expect(highestPriority([a, x, y]).name).toBe("x");
  });
});

describe("a selector's options", () => {
  const field = (make: () => unknown) => {
    try {
      make();
    } catch (error) {
      expect(error).toBeInstanceOf(ConfigError);
      return (error as ConfigError).field;
    }
    throw new Error("expected a ConfigError");
  };

  it("are named without a prefix in their errors", () => {
    expect(field(() => createLottery({ random: 1 as never }))).toBe("random");
    expect(field(() => createReducedLottery({ random: 1 as never }))).toBe("random");
    expect(field(() => createHintedStride({ agingMs: -1 }))).toBe("agingMs");
    expect(field(() => createTrickleStride({ trickleMs: 0 }))).toBe("trickleMs");
    expect(field(() => createSelector("lottery", { random: 1 as never }))).toBe("random");
  });
});
