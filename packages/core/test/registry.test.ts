import { createMemoryAdapter } from "@tasklane/adapter-memory";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { createTasklane, defineTask } from "../src/index.ts";

describe("a client's lanes() and tasks()", () => {
  const a = defineTask({ name: "a", lane: "low", schema: z.object({}), run: () => {} });
  const b = defineTask({ name: "b", lane: "high", schema: z.object({}), run: () => {} });
  const tl = createTasklane({
    adapter: createMemoryAdapter(),
    lanes: [{ name: "high", priority: 10 }, { name: "low" }],
    tasks: [b, a],
  });

  it("lists every lane's handle in configuration order, the same handles lane(name) gives", () => {
    const lanes = tl.lanes();
    expect(lanes.map((l) => l.name)).toEqual(["high", "low"]);
    expect(lanes.map((l) => l.config.priority)).toEqual([10, 1]);
    expect(lanes[0]).toBe(tl.lane("high"));
    expect(lanes[1]).toBe(tl.lane("low"));
  });

  it("lists every task, as given, in the order given", () => {
    expect(tl.tasks()).toEqual([b, a]);
    expect(tl.tasks()[0]).toBe(b);
  });

  it("hands out copies: changing the arrays changes nothing in the client", () => {
    tl.tasks().pop();
    tl.lanes().pop();
    expect(tl.tasks()).toHaveLength(2);
    expect(tl.lanes()).toHaveLength(2);
  });
});
