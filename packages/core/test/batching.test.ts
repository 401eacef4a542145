/**
 * A worker gathers its adapter calls (acks, heartbeats, reports) into batches, each no
 * larger than the adapter's `maxBatch`.
 */
import { createManualClock, createMemoryAdapter } from "@tasklane/adapter-memory";
import { afterEach, describe, expect, it } from "vitest";
import { z } from "zod";
import type { Adapter, LaneStore } from "../src/adapter.ts";
import { createTasklane, defineTask, type JobContext, type Tasklane } from "../src/index.ts";
import { bend } from "./bent-adapter.ts";

const open: Tasklane[] = [];
afterEach(async () => {
  await Promise.all(open.splice(0).map((tl) => tl.close({ graceMs: 0 })));
});

type Calls = Record<"ack" | "extend" | "report", number[]>;

/** The memory adapter declaring `maxBatch` 2, each ack, extend and report call's size noted. */
function counted(clock: ReturnType<typeof createManualClock>, calls: Calls): Adapter {
  return bend(createMemoryAdapter({ clock }), {
    caps: { maxBatch: 2 },
    lane: (store) => ({
      ack: (items: Parameters<LaneStore["ack"]>[0]) => {
        calls.ack.push(items.length);
        return store.ack(items);
      },
      extend: (locks: Parameters<LaneStore["extend"]>[0], leaseMs: number) => {
        calls.extend.push(locks.length);
        return store.extend(locks, leaseMs);
      },
      report: (items: Parameters<NonNullable<LaneStore["report"]>>[0]) => {
        calls.report.push(items.length);
        return store.report?.(items);
      },
    }),
  });
}

/**
 * A client on `counted`'s adapter whose task runs `before(ctx)`, then waits for `release()`;
 * its jobs' acks, extends and reports are noted in `calls`.
 */
function setup(before: (ctx: JobContext) => void, leaseMs: number) {
  const clock = createManualClock();
  const calls: Calls = { ack: [], extend: [], report: [] };
  let release = () => {};
  const gate = new Promise<void>((resolve) => {
    release = resolve;
  });
  const task = defineTask({
    name: "t",
    lane: "q",
    schema: z.object({}),
    run: async (_p, ctx) => {
      before(ctx);
      await gate;
    },
  });
  const tl = createTasklane({
    adapter: counted(clock, calls),
    clock,
    lanes: [{ name: "q", leaseMs }],
    tasks: [task],
  });
  open.push(tl);
  let succeeded = 0;
  tl.events.on("succeeded", () => {
    succeeded++;
  });
  return { clock, calls, task, tl, release: () => release(), succeeded: () => succeeded };
}

describe("a worker's batched calls", () => {
  it("never exceed the adapter's maxBatch, and carry every job", async () => {
    const { clock, calls, task, tl, release, succeeded } = setup(
      (ctx) => ctx.log("started"),
      3_000,
    );
    await tl.publishMany(
      task,
      Array.from({ length: 5 }, () => ({ payload: {} })),
    );
    await tl.worker({ concurrency: 5, reportMs: 100 }).start();
    // Reports go out after 100 ms, heartbeats after a third of the lease.
    for (let i = 0; i < 150 && calls.extend.length < 3; i++) await clock.advance(10);
    release();
    for (let i = 0; i < 100 && succeeded() < 5; i++) await clock.advance(10);
    expect(succeeded()).toBe(5);
    // One round of each, in calls of at most 2 jobs: 5 jobs make 2 + 2 + 1.
    expect(calls).toEqual({ ack: [2, 2, 1], extend: [2, 2, 1], report: [2, 2, 1] });
  });

  it("sends a report only when a job has something new, however many periods pass", async () => {
    const { clock, calls, task, tl, release, succeeded } = setup((ctx) => {
      ctx.log("once");
      ctx.progress(1);
      ctx.log("twice");
    }, 60_000);
    const { id } = await tl.publish(task, {});
    await tl.worker({ reportMs: 100 }).start();
    for (let i = 0; i < 100; i++) await clock.advance(10);
    expect(calls.report).toEqual([1]);
    expect((await tl.getJob(id))?.logs?.map((l) => l.message)).toEqual(["once", "twice"]);
    release();
    for (let i = 0; i < 100 && succeeded() === 0; i++) await clock.advance(10);
    // nothing new at the end: a bare ack
    expect(calls.report).toEqual([1]);
    expect(calls.ack).toEqual([1]);
  });
});
