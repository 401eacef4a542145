/**
 * A retry this worker scheduled falls due while it long-polls another lane: the poll ends
 * then (by the end of the backend's time step), so the retry does not wait for the poll.
 */
import { createManualClock, createMemoryAdapter } from "@tasklane/adapter-memory";
import { afterEach, describe, expect, it } from "vitest";
import { z } from "zod";
import type { Adapter } from "../src/adapter.ts";
import { createTasklane, defineTask, type Tasklane } from "../src/index.ts";

const open: Tasklane[] = [];
afterEach(async () => {
  await Promise.all(open.splice(0).map((tl) => tl.close({ graceMs: 0 })));
});

/** When each attempt of a job that fails once (retry in 2 s) starts, ms after the first. */
async function attemptsAt(timeResolutionMs: number): Promise<number[]> {
  const clock = createManualClock();
  const memory = createMemoryAdapter({ clock });
  const adapter: Adapter = {
    name: "stepped",
    capabilities: { ...memory.capabilities, timeResolutionMs },
    close: () => memory.close(),
    lane: (name, options) => memory.lane(name, options),
    subscribe: (listener, options) => memory.subscribe(listener, options),
  };
  const startedAt: number[] = [];
  const task = defineTask({
    name: "t",
    lane: "low",
    schema: z.object({}),
    retry: { maxAttempts: 2, baseMs: 2_000, jitter: 0 },
    run: (_p, ctx) => {
      startedAt.push(clock.now());
      if (ctx.attempt === 1) throw new Error("first attempt fails");
    },
  });
  const tl = createTasklane({
    adapter,
    clock,
    // strict priority long-polls "high" whenever both lanes are empty
    selector: "strict-priority",
    lanes: [
      { name: "high", priority: 100, longPollMs: 60_000 },
      { name: "low", priority: 5, longPollMs: 60_000 },
    ],
    tasks: [task],
  });
  open.push(tl);
  await tl.publish(task, {});
  await tl.worker().start();
  for (let i = 0; i < 2_000 && startedAt.length < 2; i++) await clock.advance(10);
  return startedAt.map((t) => t - (startedAt[0] as number));
}

describe("a retry due while the worker long-polls another lane", () => {
  it("runs when it falls due, on a backend that keeps milliseconds", async () => {
    const [first, second] = await attemptsAt(1);
    expect(first).toBe(0);
    expect(second).toBeGreaterThanOrEqual(2_000);
    expect(second).toBeLessThanOrEqual(2_020);
  });

  it("runs by the end of the time step it falls due in, on a coarser backend", async () => {
    const [, second] = await attemptsAt(1_000);
    expect(second).toBeGreaterThanOrEqual(2_000);
    expect(second).toBeLessThanOrEqual(3_020);
  });
});
