import { createManualClock, createMemoryAdapter } from "@tasklane/adapter-memory";
import { afterEach, describe, expect, it } from "vitest";
import { z } from "zod";
import {
  type Adapter,
  ConfigError,
  createTasklane,
  defineTask,
  type Tasklane,
  UnsupportedError,
} from "../src/index.ts";
import { bend } from "./bent-adapter.ts";

const task = defineTask({ name: "t", lane: "a", schema: z.object({}), run: () => {} });
const open: Tasklane[] = [];
afterEach(async () => {
  await Promise.all(open.splice(0).map((tl) => tl.close()));
});

/** A client on `adapter` whose every put is recorded. */
function client(adapter: Adapter, puts: unknown[] = []) {
  const recording: Adapter = {
    name: adapter.name,
    capabilities: adapter.capabilities,
    close: () => adapter.close(),
    lane: async (name, options) => {
      const lane = await adapter.lane(name, options);
      return Object.assign(Object.create(lane), {
        put: (jobs: unknown[]) => {
          puts.push(...jobs);
          return lane.put(jobs as never);
        },
      });
    },
  };
  const clock = createManualClock(1_000_000);
  const tl = createTasklane({ adapter: recording, clock, lanes: [{ name: "a" }], tasks: [task] });
  open.push(tl);
  return { tl, clock };
}

describe("publish option debounce", () => {
  it('hands the adapter the window\'s end, and for keep "last" runAt = that end', async () => {
    const puts: Array<Record<string, unknown>> = [];
    const { tl } = client(createMemoryAdapter(), puts);
    await tl.publish(task, {}, { debounce: { key: "k", ms: 500 } });
    await tl.publish(task, {}, { debounce: { key: "f", ms: 500, keep: "first" } });
    await tl.publish(task, {}, { debounce: { key: "d", ms: 500 }, delayMs: 2_000 });
    expect(puts.map((j) => [j.debounce, j.runAt])).toEqual([
      [{ key: "k", until: 1_000_500, keep: "last" }, 1_000_500],
      [{ key: "f", until: 1_000_500, keep: "first" }, undefined],
      // a later runAt stays
      [{ key: "d", until: 1_000_500, keep: "last" }, 1_002_000],
    ]);
  });

  it("refuses bad values with a ConfigError naming the field", async () => {
    const { tl } = client(createMemoryAdapter());
    const cases: Array<[unknown, string]> = [
      ["k", "debounce"],
      [{ key: "", ms: 1 }, "debounce.key"],
      [{ key: "x".repeat(129), ms: 1 }, "debounce.key"],
      [{ key: "k", ms: 0 }, "debounce.ms"],
      [{ key: "k", ms: 1.5 }, "debounce.ms"],
      [{ key: "k", ms: 1, keep: "middle" }, "debounce.keep"],
      [{ key: "k", ms: 1, window: 5 }, "debounce.window"],
    ];
    for (const [value, field] of cases) {
      const error = await tl.publish(task, {}, { debounce: value as never }).catch((e) => e);
      expect(error, JSON.stringify(value)).toBeInstanceOf(ConfigError);
      expect((error as ConfigError).field).toBe(`options.${field}`);
    }
  });

  it("is refused with UnsupportedError on an adapter without capability debounce", async () => {
    const inner = createMemoryAdapter();
    const { tl } = client(bend(inner, { name: "no-debounce", caps: { debounce: false } }));
    await expect(tl.publish(task, {}, { debounce: { key: "k", ms: 10 } })).rejects.toBeInstanceOf(
      UnsupportedError,
    );
  });
});
