import { createManualClock, createMemoryAdapter } from "@tasklane/adapter-memory";
import { afterEach, describe, expect, it } from "vitest";
import { z } from "zod";
import { ConfigError, createTasklane, defineTask, type Tasklane } from "../src/index.ts";
import { configError } from "./bent-adapter.ts";

const open: Tasklane[] = [];
afterEach(async () => {
  await Promise.all(open.splice(0).map((tl) => tl.close({ graceMs: 0 })));
});

const task = defineTask({ name: "t", lane: "short", schema: z.object({}), run: () => {} });

function client() {
  const tl = createTasklane({
    adapter: createMemoryAdapter(),
    lanes: [
      { name: "short", leaseMs: 10_000 },
      { name: "long", leaseMs: 60_000 },
    ],
    tasks: [task],
  });
  open.push(tl);
  return tl;
}

describe("a worker's options", () => {
  it("keep the heartbeat within half the shortest lease the worker serves", () => {
    const tl = client();
    expect(configError(() => tl.worker({ heartbeatMs: 5_001 }))).toEqual({
      field: "worker.heartbeatMs",
      value: 5_001,
      message:
        "Invalid option worker.heartbeatMs = 5001: must be at most half the shortest served lease (10000 ms)",
    });
    expect(() => tl.worker({ heartbeatMs: 5_000 })).not.toThrow();
    // serving only the long lane, a longer heartbeat fits
    expect(() => tl.worker({ lanes: ["long"], heartbeatMs: 30_000 })).not.toThrow();
    expect(configError(() => tl.worker({ lanes: ["long"], heartbeatMs: 30_001 })).field).toBe(
      "worker.heartbeatMs",
    );
  });

  it("name a lane the client does not have", () => {
    expect(configError(() => client().worker({ lanes: ["long", "nope"] }))).toMatchObject({
      field: "worker.lanes[1]",
      value: "nope",
      message: expect.stringContaining("no such lane"),
    });
  });

  it("refuse a stop option that is not a number of ms", async () => {
    const worker = client().worker();
    await worker.start();
    const err = await worker.stop({ graceMs: -1 }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ConfigError);
    expect((err as ConfigError).field).toBe("stop.graceMs");
    await worker.stop({ graceMs: 0 });
  });

  it("hold concurrency + prefetch jobs, prefetch defaulting to the larger of the largest batch and twice it less concurrency", async () => {
    const clock = createManualClock();
    let release = () => {};
    const gate = new Promise<void>((resolve) => {
      release = resolve;
    });
    const blocked = defineTask({
      name: "b",
      lane: "big",
      schema: z.object({}),
      run: () => gate,
    });
    const tl = createTasklane({
      adapter: createMemoryAdapter({ clock }),
      clock,
      lanes: [
        { name: "big", batchSize: 10, numIterations: 10 },
        { name: "small", batchSize: 4 },
      ],
      tasks: [blocked],
    });
    open.push(tl);
    await tl.publishMany(
      blocked,
      Array.from({ length: 40 }, () => ({ payload: {} })),
    );
    // concurrency 2: prefetch max(10, 2 * 10 - 2) = 18, so 20 held
    const worker = tl.worker({ concurrency: 2 });
    await worker.start();
    for (let i = 0; i < 20; i++) await clock.advance(10);
    expect(worker.held).toBe(20);
    expect(await tl.lane("big").counts()).toMatchObject({ active: 20, waiting: 20 });
    release();
  });
});

describe("a lane's maxConcurrency", () => {
  it("caps the jobs active at once on the lane, across workers", async () => {
    const clock = createManualClock();
    let release = () => {};
    const gate = new Promise<void>((resolve) => {
      release = resolve;
    });
    const blocked = defineTask({ name: "b", lane: "q", schema: z.object({}), run: () => gate });
    const tl = createTasklane({
      adapter: createMemoryAdapter({ clock }),
      clock,
      lanes: [{ name: "q", maxConcurrency: 2 }],
      tasks: [blocked],
    });
    open.push(tl);
    await tl.publishMany(
      blocked,
      Array.from({ length: 6 }, () => ({ payload: {} })),
    );
    await tl.worker({ concurrency: 5 }).start();
    await tl.worker({ concurrency: 5 }).start();
    for (let i = 0; i < 20; i++) await clock.advance(10);
    expect(await tl.lane("q").counts()).toMatchObject({ active: 2, waiting: 4 });
    release();
  });
});

describe("a task's retry policy", () => {
  it("needs maxMs >= baseMs", () => {
    const define = (retry: object) =>
      defineTask({ name: "r", lane: "q", schema: z.object({}), retry, run: () => {} });
    expect(configError(() => define({ baseMs: 1_000, maxMs: 999 }))).toMatchObject({
      field: 'task("r").retry.maxMs',
      value: 999,
      message: expect.stringContaining("must be >= baseMs"),
    });
    expect(define({ baseMs: 1_000, maxMs: 1_000 }).retry).toMatchObject({
      baseMs: 1_000,
      maxMs: 1_000,
    });
  });
});
