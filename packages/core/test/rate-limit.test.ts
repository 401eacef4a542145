import { createMemoryAdapter } from "@tasklane/adapter-memory";
import { describe, expect, it } from "vitest";
import { type Adapter, createTasklane, UnsupportedError } from "../src/index.ts";
import { bend } from "./bent-adapter.ts";

/** The memory adapter as one without capability `rateLimit` looks. */
function withoutRateLimit(inner: Adapter): Adapter {
  return bend(inner, { name: "no-rate", caps: { rateLimit: false } });
}

describe("lane option rateLimit", () => {
  it("is refused with UnsupportedError naming the lane's field on an adapter without it", () => {
    const make = () =>
      createTasklane({
        adapter: withoutRateLimit(createMemoryAdapter()),
        lanes: [{ name: "a" }, { name: "b", rateLimit: { max: 5, durationMs: 1_000 } }],
        tasks: [],
      });
    expect(make).toThrow(UnsupportedError);
    expect(make).toThrow(/no-rate adapter does not support rateLimit: lanes\[1\]\.rateLimit/);
  });

  it("is passed to the adapter's lane", async () => {
    const inner = createMemoryAdapter();
    const seen: unknown[] = [];
    const adapter: Adapter = {
      name: "memory",
      capabilities: inner.capabilities,
      close: () => inner.close(),
      lane: (name, options) => {
        seen.push(options.rateLimit);
        return inner.lane(name, options);
      },
    };
    const tl = createTasklane({
      adapter,
      lanes: [{ name: "a", rateLimit: { max: 5, durationMs: 1_000 } }, { name: "b" }],
      tasks: [],
    });
    await tl.lane("a").counts();
    await tl.lane("b").counts();
    expect(seen).toEqual([{ max: 5, durationMs: 1_000 }, undefined]);
    await tl.close();
  });
});
