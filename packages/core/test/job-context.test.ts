import { createManualClock, createMemoryAdapter } from "@tasklane/adapter-memory";
import { afterEach, describe, expect, it } from "vitest";
import { z } from "zod";
import {
  CanceledError,
  createTasklane,
  defineTask,
  type JobContext,
  type Tasklane,
} from "../src/index.ts";

const open: Tasklane[] = [];
afterEach(async () => {
  await Promise.all(open.splice(0).map((tl) => tl.close({ graceMs: 0 })));
});

describe("a handler's context", () => {
  it("names the job, its attempt and limits, and renews the lease on demand", async () => {
    const clock = createManualClock();
    const adapter = createMemoryAdapter({ clock });
    const seen: Array<Partial<JobContext> & { renewed?: boolean }> = [];
    let release = () => {};
    const held = new Promise<void>((resolve) => {
      release = resolve;
    });
    const task = defineTask({
      name: "ctx",
      lane: "work",
      schema: z.object({}),
      retry: { maxAttempts: 4 },
      run: async (_p, ctx) => {
        seen.push({
          jobId: ctx.jobId,
          attempt: ctx.attempt,
          maxAttempts: ctx.maxAttempts,
          lane: ctx.lane,
          task: ctx.task,
        });
        // Past most of the lease (heartbeats are off: heartbeatMs is as long as allowed).
        await clock.advance(8_000);
        seen.push({ renewed: await ctx.heartbeat() });
        await held;
      },
    });
    const tl = createTasklane({
      adapter,
      clock,
      namespace: "ns",
      lanes: [{ name: "work", leaseMs: 10_000 }],
      tasks: [task],
    });
    open.push(tl);
    const { id } = await tl.publish(task, {});
    await tl.worker({ heartbeatMs: 5_000 }).start();
    for (let i = 0; i < 50 && seen.length < 2; i++) await clock.advance(10);
    expect(seen).toEqual([
      { jobId: id, attempt: 1, maxAttempts: 4, lane: "work", task: "ctx" },
      { renewed: true },
    ]);
    // Past the first lease's end: still ours, as the handler renewed it.
    await clock.advance(4_000);
    const store = await adapter.lane("ns_work", { maxStalls: 3, historyLimit: 20 });
    expect((await store.reserve({ limit: 1, leaseMs: 1_000, waitMs: 0 })).jobs).toEqual([]);
    expect((await tl.lane("work").get(id))?.state).toBe("active");
    release();
  });

  it("heartbeat resolves false, and the signal aborts, once the job is canceled", async () => {
    const clock = createManualClock();
    const adapter = createMemoryAdapter({ clock });
    let ctxOf: JobContext | undefined;
    const task = defineTask({
      name: "cancel-me",
      lane: "work",
      schema: z.object({}),
      run: (_p, ctx) =>
        new Promise<void>((resolve) => {
          ctxOf = ctx;
          ctx.signal.addEventListener("abort", () => resolve());
        }),
    });
    const tl = createTasklane({ adapter, clock, lanes: [{ name: "work" }], tasks: [task] });
    open.push(tl);
    const { id } = await tl.publish(task, {});
    await tl.worker().start();
    for (let i = 0; i < 50 && ctxOf === undefined; i++) await clock.advance(10);
    const ctx = ctxOf as JobContext;
    expect(ctx.signal.aborted).toBe(false);
    expect(await tl.lane("work").cancel([id])).toEqual(["canceled"]);
    expect(await ctx.heartbeat()).toBe(false);
    expect(ctx.signal.aborted).toBe(true);
    expect(ctx.signal.reason).toBeInstanceOf(CanceledError);
  });
});
