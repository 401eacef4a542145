import { createManualClock, createMemoryAdapter } from "@tasklane/adapter-memory";
import { afterEach, describe, expect, it } from "vitest";
import { z } from "zod";
import type { Capabilities, LaneStore } from "../src/adapter-kit.ts";
import {
  type Adapter,
  createTasklane,
  defineTask,
  type Tasklane,
  UnsupportedError,
} from "../src/index.ts";

const open: Tasklane[] = [];
afterEach(async () => {
  await Promise.all(open.splice(0).map((tl) => tl.close({ graceMs: 0 })));
});

const task = defineTask({
  name: "t",
  lane: "work",
  schema: z.object({ n: z.number() }),
  run: () => {},
});

/** A client on the memory adapter (manual clock), or on `adapter`. */
function client(adapter: Adapter = createMemoryAdapter({ clock: createManualClock() })) {
  const tl = createTasklane({
    adapter,
    clock: createManualClock(),
    lanes: [{ name: "work", leaseMs: 10_000 }],
    tasks: [task],
    namespace: "ns",
  });
  open.push(tl);
  return tl;
}

/** The memory adapter with some capabilities declared false, or some methods taken off. */
function without(
  caps: Partial<Capabilities>,
  methods: Array<keyof LaneStore> = [],
): { adapter: Adapter; name: string } {
  const memory = createMemoryAdapter();
  const adapter: Adapter = {
    name: "partial",
    capabilities: { ...memory.capabilities, ...caps },
    close: () => memory.close(),
    lane: async (name, options) => {
      const lane = await memory.lane(name, options);
      return new Proxy(lane, {
        get(target, prop, receiver) {
          if (methods.includes(prop as keyof LaneStore)) return undefined;
          const value = Reflect.get(target, prop, receiver);
          return typeof value === "function" ? value.bind(target) : value;
        },
      });
    },
  };
  return { adapter, name: "partial" };
}

describe("a lane's management view", () => {
  it("reaches every operation of the adapter's lane, under the namespaced name", async () => {
    const tl = client();
    const lane = tl.lane("work");
    expect(lane.name).toBe("work");
    expect(lane.config.leaseMs).toBe(10_000);
    const a = await tl.publish(task, { n: 1 });
    const b = await tl.publish(task, { n: 2 }, { delayMs: 60_000 });
    expect(await lane.counts()).toMatchObject({ waiting: 1, delayed: 1 });
    expect(await lane.probe()).toBe(1);
    const info = await lane.get(a.id);
    expect([info?.lane, info?.state, JSON.parse(info?.payload ?? "null")]).toEqual([
      "ns_work",
      "waiting",
      { n: 1 },
    ]);
    const listed: string[] = [];
    for await (const job of lane.list({ state: "delayed" })) listed.push(job.id);
    expect(listed).toEqual([b.id]);
    await lane.pause();
    expect(await lane.isPaused()).toBe(true);
    expect(await lane.probe()).toBe(0);
    await lane.resume();
    expect(await lane.isPaused()).toBe(false);
    expect(await lane.cancel([b.id, "nope"])).toEqual(["canceled", "not_found"]);
    expect(await lane.retryFailed()).toBe(0);
    expect(await lane.delete([b.id])).toBe(1);
    expect(await lane.get(b.id)).toBeUndefined();
  });

  it("reads today's stats (the client clock's UTC day) unless given a day", async () => {
    const clock = createManualClock(Date.UTC(2026, 4, 17, 23, 0));
    const adapter = createMemoryAdapter({ clock });
    const tl = createTasklane({
      adapter,
      clock,
      lanes: [{ name: "work" }],
      tasks: [task],
    });
    open.push(tl);
    await tl.publish(task, { n: 1 });
    const store = await adapter.lane("work", { maxStalls: 3, historyLimit: 20 });
    const { jobs } = await store.reserve({ limit: 1, leaseMs: 1_000, waitMs: 0 });
    expect(jobs).toHaveLength(1);
    const today = await tl.lane("work").stats();
    expect([today?.day, today?.wait.count]).toEqual(["2026-05-17", 1]);
    expect(await tl.lane("work").stats("2026-05-16")).toBeUndefined();
  });

  it.each([
    ["get", { get: false }, (tl: Tasklane) => tl.lane("work").get("x")],
    [
      "list",
      { list: false },
      async (tl: Tasklane) => {
        for await (const _ of tl.lane("work").list({ state: "waiting" })) break;
      },
    ],
    ["cancel", { cancel: false }, (tl: Tasklane) => tl.lane("work").cancel(["x"])],
    ["retryFailed", { retryFailed: false }, (tl: Tasklane) => tl.lane("work").retryFailed()],
    ["delete", { delete: false }, (tl: Tasklane) => tl.lane("work").delete(["x"])],
    ["pause", { pause: false }, (tl: Tasklane) => tl.lane("work").pause()],
    ["resume", { pause: false }, (tl: Tasklane) => tl.lane("work").resume()],
    ["isPaused", { pause: false }, (tl: Tasklane) => tl.lane("work").isPaused()],
    ["stats", { stats: false }, (tl: Tasklane) => tl.lane("work").stats()],
  ] as const)(
    "%s without its capability throws UnsupportedError naming adapter and operation",
    async (op, caps, call) => {
      const { adapter } = without(caps);
      const tl = client(adapter);
      let error: unknown;
      try {
        await (call as (tl: Tasklane) => Promise<unknown>)(tl);
      } catch (e) {
        error = e;
      }
      expect(error).toBeInstanceOf(UnsupportedError);
      expect(error).toMatchObject({ code: "UNSUPPORTED" });
      expect((error as Error).message).toContain("partial");
      expect((error as Error).message).toContain(op);
    },
  );

  it("throws UnsupportedError for a declared capability whose method the lane lacks", async () => {
    const { adapter } = without({}, ["get", "cancel"]);
    const tl = client(adapter);
    await expect(tl.lane("work").get("x")).rejects.toBeInstanceOf(UnsupportedError);
    await expect(tl.lane("work").cancel(["x"])).rejects.toBeInstanceOf(UnsupportedError);
    // The others still work.
    expect(await tl.lane("work").counts()).toMatchObject({ waiting: 0 });
  });
});
