import { readFileSync } from "node:fs";
import { createManualClock, createMemoryAdapter } from "@tasklane/adapter-memory";
import { afterEach, describe, expect, it } from "vitest";
import { z } from "zod";
import { NO_OPERATOR_CAPABILITIES } from "../src/adapter-kit.ts";
import {
  type Adapter,
  ConfigError,
  createTasklane,
  defineTask,
  type Tasklane,
  UnsupportedError,
  VERSION,
} from "../src/index.ts";

const open: Tasklane[] = [];
afterEach(async () => {
  await Promise.all(open.splice(0).map((tl) => tl.close({ graceMs: 0 })));
});

/**
 * The memory adapter as an adapter without the operator features looks (Redis today):
 * the same calls, the operator capabilities false, and every lane call recorded.
 */
function withoutOperatorFeatures(
  inner: Adapter,
  calls: Array<{ method: string; args: unknown[] }>,
) {
  const adapter: Adapter = {
    name: "no-ops",
    capabilities: Object.freeze({ ...inner.capabilities, ...NO_OPERATOR_CAPABILITIES }),
    close: () => inner.close(),
    ...(inner.subscribe ? { subscribe: inner.subscribe.bind(inner) } : {}),
    registerWorker: async (...args) => {
      calls.push({ method: "registerWorker", args });
    },
    lane: async (name, options) => {
      const lane = await inner.lane(name, options);
      return new Proxy(lane, {
        get(target, prop, receiver) {
          const value = Reflect.get(target, prop, receiver);
          if (typeof value !== "function") return value;
          return (...args: unknown[]) => {
            calls.push({ method: String(prop), args });
            return value.apply(target, args);
          };
        },
      });
    },
  };
  return adapter;
}

describe("operator features on an adapter that lacks them", () => {
  it("the worker sends plain locks, no report and no registration; results are still checked", async () => {
    const clock = createManualClock();
    const calls: Array<{ method: string; args: unknown[] }> = [];
    const task = defineTask({
      name: "chatty",
      lane: "default",
      schema: z.object({ n: z.number() }),
      result: z.number(),
      run: ({ n }, ctx) => {
        ctx.progress({ n });
        ctx.log(`n is ${n}`);
        return n;
      },
    });
    const bad = defineTask({
      name: "bad",
      lane: "default",
      schema: z.object({}),
      result: z.number(),
      // @ts-expect-error: not a number
      run: () => "not a number",
    });
    const tl = createTasklane({
      adapter: withoutOperatorFeatures(createMemoryAdapter({ clock }), calls),
      clock,
      lanes: [{ name: "default" }],
      tasks: [task, bad],
    });
    open.push(tl);
    const progress: unknown[] = [];
    tl.events.on("progress", (e) => progress.push(e.value));
    let done = 0;
    tl.events.on("succeeded", () => done++);
    const failed: string[] = [];
    tl.events.on("failed", (e) => failed.push(e.error.reason));
    await tl.publishMany(task, [{ payload: { n: 1 } }, { payload: { n: 2 } }]);
    await tl.publish(bad, {});
    const worker = tl.worker({ heartbeatMs: 1_000 });
    await worker.start();
    while (done < 2 || failed.length < 1) await clock.advance(100);
    // A result that fails its schema fails the job on every backend alike.
    expect(failed).toEqual(["invalid_result"]);
    await clock.advance(5_000);
    await worker.stop();
    const methods = new Set(calls.map((c) => c.method));
    expect(methods.has("report")).toBe(false);
    expect(methods.has("registerWorker")).toBe(false);
    const acked = calls.filter((c) => c.method === "ack").flatMap((c) => c.args[0] as object[]);
    expect(acked).toHaveLength(2);
    for (const item of acked)
      expect(Object.keys(item).sort()).toEqual(["expiresAt", "jobId", "token"]);
    // The handler's reports are still local events, as before.
    expect(progress).toEqual([{ n: 1 }, { log: "n is 1" }, { n: 2 }, { log: "n is 2" }]);
  });

  it("refuses the operator operations with UnsupportedError, before anything is written", async () => {
    const calls: Array<{ method: string; args: unknown[] }> = [];
    const task = defineTask({ name: "t", lane: "default", schema: z.object({}), run: () => {} });
    const tl = createTasklane({
      adapter: withoutOperatorFeatures(createMemoryAdapter(), calls),
      lanes: [{ name: "default" }, { name: "other" }],
      tasks: [task],
    });
    open.push(tl);
    const lane = tl.lane("default");
    await expect(tl.publish(task, {}, { tags: ["a"] })).rejects.toBeInstanceOf(UnsupportedError);
    await expect(tl.publish(task, {}, { expiresInMs: 1_000 })).rejects.toBeInstanceOf(
      UnsupportedError,
    );
    await expect(tl.publishAndWait(task, {})).rejects.toBeInstanceOf(UnsupportedError);
    expect(calls.filter((c) => c.method === "put")).toEqual([]);
    await expect(tl.waitFor("x")).rejects.toBeInstanceOf(UnsupportedError);
    await expect(tl.workers()).rejects.toBeInstanceOf(UnsupportedError);
    await expect(tl.failures()).rejects.toBeInstanceOf(UnsupportedError);
    await expect(lane.listPage({ task: "t" })).rejects.toBeInstanceOf(UnsupportedError);
    await expect(lane.count({ task: "t" })).rejects.toBeInstanceOf(UnsupportedError);
    await expect(lane.setPriority(["x"], 1)).rejects.toBeInstanceOf(UnsupportedError);
    await expect(lane.promote(["x"])).rejects.toBeInstanceOf(UnsupportedError);
    await expect(lane.move(["x"], "other")).rejects.toBeInstanceOf(UnsupportedError);
    await expect(lane.retryFailed({ group: "TypeError" })).rejects.toBeInstanceOf(UnsupportedError);
    // What an adapter without search still answers: a state alone.
    await tl.publish(task, {});
    expect(await lane.count({ state: "waiting" })).toBe(1);
    expect(await lane.count()).toBe(1);
    const listed = [];
    for await (const job of lane.list({ state: "waiting" })) listed.push(job.id);
    expect(listed).toHaveLength(1);
  });
});

describe("operator options", () => {
  it("are checked, naming the field", async () => {
    const task = defineTask({ name: "t", lane: "default", schema: z.object({}), run: () => {} });
    expect(() =>
      createTasklane({
        adapter: createMemoryAdapter(),
        lanes: [{ name: "default" }],
        tasks: [task],
        maxResultBytes: 0,
      }),
    ).toThrow(ConfigError);
    const tl = createTasklane({
      adapter: createMemoryAdapter(),
      lanes: [{ name: "default" }, { name: "other" }],
      tasks: [task],
    });
    open.push(tl);
    expect(() => tl.worker({ reportMs: 1 })).toThrow(/worker\.reportMs/);
    await expect(tl.publish(task, {}, { tags: "a" as never })).rejects.toThrow(/options\.tags/);
    await expect(
      tl.publishMany(task, [
        { payload: {}, tags: ["ok"] },
        { payload: {}, tags: [7 as never] },
      ]),
    ).rejects.toThrow(/items\[1\]\.tags\[0\]/);
    const lane = tl.lane("default");
    await expect(lane.setPriority(["x"], 1.5)).rejects.toThrow(/priority/);
    await expect(lane.setPriority(["x"], 1001)).rejects.toBeInstanceOf(ConfigError);
    await expect(lane.move(["x"], "default")).rejects.toThrow(/toLane/);
    await expect(lane.move(["x"], "nowhere")).rejects.toThrow(/toLane/);
    await expect(lane.listPage({}, 42 as never)).rejects.toThrow(/cursor/);
    await expect(lane.count({ since: Number.NaN })).rejects.toThrow(/filter\.since/);
    await expect(lane.retryFailed({ group: "" })).rejects.toThrow(/target\.group/);
    await expect(lane.deleteJobs({ group: "E", errorName: "F" })).rejects.toThrow(/errorName/);
  });

  it("VERSION is the package's version", () => {
    const pkg = JSON.parse(readFileSync(new URL("../package.json", import.meta.url), "utf8"));
    expect(VERSION).toBe(pkg.version);
  });
});
