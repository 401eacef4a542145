import { createManualClock, createMemoryAdapter } from "@tasklane/adapter-memory";
import { afterEach, describe, expect, it } from "vitest";
import { z } from "zod";
import { ClosedError, createTasklane, defineTask, type Tasklane } from "../src/index.ts";

const open: Tasklane[] = [];
afterEach(async () => {
  await Promise.all(open.splice(0).map((tl) => tl.close({ graceMs: 0 })));
});

function setup() {
  const clock = createManualClock();
  const task = defineTask({ name: "t", lane: "a", schema: z.object({}), run: () => {} });
  const tl = createTasklane({
    adapter: createMemoryAdapter({ clock }),
    clock,
    selector: "round-robin",
    lanes: [{ name: "a" }, { name: "b" }],
    tasks: [task],
  });
  open.push(tl);
  return { tl, clock, task };
}

describe("a worker's life", () => {
  it("starts once, and cannot start again once stopped", async () => {
    const { tl } = setup();
    const worker = tl.worker();
    await worker.start();
    await worker.start();
    expect(worker.running).toBe(true);
    await worker.stop();
    const err = await worker.start().catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ClosedError);
    expect((err as Error).message).toBe("worker is closed");
    expect(worker.running).toBe(false);
  });

  it("counts per lane the jobs reserved, the reserves made and those that came back empty", async () => {
    const { tl, clock, task } = setup();
    await tl.publishMany(
      task,
      Array.from({ length: 3 }, () => ({ payload: {} })),
    );
    let succeeded = 0;
    tl.events.on("succeeded", () => {
      succeeded++;
    });
    const worker = tl.worker();
    await worker.start();
    for (let i = 0; i < 100 && succeeded < 3; i++) await clock.advance(5);
    const metrics = worker.metrics();
    // Round-robin: a (3 jobs, fewer than asked for: the lane is left at once), b (nothing
    // there), then a again, where a long poll is still waiting: selected, not yet counted.
    expect(metrics).toEqual({
      selected: { a: 2, b: 1 },
      reserves: { a: 1, b: 1 },
      emptyReserves: { b: 1 },
      jobs: { a: 3 },
    });
    // a copy: changing it changes nothing in the worker
    metrics.jobs.a = 99;
    expect(worker.metrics().jobs).toEqual({ a: 3 });
  });
});
