import { createManualClock, createMemoryAdapter } from "@tasklane/adapter-memory";
import { afterEach, describe, expect, it } from "vitest";
import { z } from "zod";
import type { LaneStore } from "../src/adapter.ts";
import { sleep } from "../src/clock.ts";
import {
  type Adapter,
  type AnyTask,
  type Clock,
  createTasklane,
  defineTask,
  type Selector,
  type Tasklane,
  type TasklaneEvents,
} from "../src/index.ts";
import { bend } from "./bent-adapter.ts";

const open: Tasklane[] = [];
afterEach(async () => {
  await Promise.all(open.splice(0).map((tl) => tl.close({ graceMs: 0 })));
});

const task = defineTask({ name: "t", lane: "a", schema: z.object({}), run: () => {} });

/**
 * A client of lanes "high" and "low" served by strict priority, both long-polling for
 * `longPollMs`: a worker idle on "high" is what a job on "low" must not wait behind.
 */
function highAndLow(
  adapter: Adapter,
  clock: Clock,
  longPollMs: number,
  tasks: AnyTask[],
): Tasklane {
  const tl = createTasklane({
    adapter,
    clock,
    selector: "strict-priority",
    lanes: [
      { name: "high", priority: 1000, longPollMs },
      { name: "low", priority: 1, longPollMs },
    ],
    tasks,
  });
  open.push(tl);
  return tl;
}

describe("the worker loop", () => {
  it("reports a selector that throws as a loop error and tries again after a doubling back-off", async () => {
    const clock = createManualClock();
    let failures = 3;
    const selector: Selector = {
      name: "flaky",
      select: async (context) => {
        if (failures-- > 0) throw new Error("selector broke");
        return context.lanes[0] as (typeof context.lanes)[number];
      },
    };
    const tl = createTasklane({
      adapter: createMemoryAdapter({ clock }),
      clock,
      selector,
      lanes: [{ name: "a" }],
      tasks: [task],
    });
    open.push(tl);
    const start = clock.now();
    const errorsAt: number[] = [];
    tl.events.on("error", (e) => {
      expect(e).toMatchObject({ during: "loop", error: { message: "selector broke" } });
      expect(e.lane).toBeUndefined();
      errorsAt.push(clock.now() - start);
    });
    let succeeded = 0;
    tl.events.on("succeeded", () => {
      succeeded++;
    });
    await tl.publish(task, {});
    await tl.worker({ errorBackoffMs: 100 }).start();
    for (let i = 0; i < 200 && succeeded === 0; i++) await clock.advance(5);
    expect(succeeded).toBe(1);
    // 100, then 200 ms between tries
    expect(errorsAt).toEqual([0, 100, 300]);
  });

  it("emits drained once, naming its lanes, when it runs out of work, and again after new work", async () => {
    const clock = createManualClock();
    const tl = createTasklane({
      adapter: createMemoryAdapter({ clock }),
      clock,
      lanes: [{ name: "a" }, { name: "b" }],
      tasks: [task],
    });
    open.push(tl);
    const drained: Array<TasklaneEvents["drained"]> = [];
    tl.events.on("drained", (e) => drained.push(e));
    let succeeded = 0;
    tl.events.on("succeeded", () => {
      succeeded++;
    });
    await tl.publish(task, {});
    await tl.worker().start();
    for (let i = 0; i < 100 && drained.length === 0; i++) await clock.advance(10);
    expect(succeeded).toBe(1);
    await clock.advance(5_000);
    expect(drained).toEqual([{ lanes: ["a", "b"] }]);
    await tl.publish(task, {});
    for (let i = 0; i < 100 && drained.length === 1; i++) await clock.advance(10);
    expect(succeeded).toBe(2);
    expect(drained).toEqual([{ lanes: ["a", "b"] }, { lanes: ["a", "b"] }]);
  });

  it("a probe that a local publish to its lane overtook does not mark the lane empty", async () => {
    // The loop's first selection probes the lanes while the application publishes: the
    // probe of "low" counts before the job is put, and answers after the publish told the
    // worker. Taken as "empty", the worker would long-poll "high" (60 s here, a clock
    // nobody advances) with the job waiting on "low".
    const clock = createManualClock();
    let probeCounted: () => void = () => {};
    const counted = new Promise<void>((resolve) => {
      probeCounted = resolve;
    });
    let answer: () => void = () => {};
    const answered = new Promise<void>((resolve) => {
      answer = resolve;
    });
    let gated = false;
    const adapter = bend(createMemoryAdapter({ clock }), {
      lane: (store: LaneStore) =>
        store.name === "low"
          ? {
              probe: async () => {
                const n = await store.probe();
                if (!gated) {
                  gated = true;
                  probeCounted();
                  await answered;
                }
                return n;
              },
            }
          : {},
    });
    const low = defineTask({ name: "low", lane: "low", schema: z.object({}), run: () => {} });
    const tl = highAndLow(adapter, clock, 60_000, [low]);
    let succeeded = 0;
    tl.events.on("succeeded", () => {
      succeeded++;
    });
    await tl.worker().start();
    await counted;
    await tl.publish(low, {});
    answer();
    // Within a second of the 60 s poll on "high".
    for (let i = 0; i < 100 && succeeded === 0; i++) await clock.advance(10);
    expect(succeeded).toBe(1);
  });

  it("a probe sent before a retry falls due and answered after does not make the worker forget it", async () => {
    // Strict priority long-polls "high" for 1.5 s, shorter than the retry's 2 s back-off:
    // when that poll ends, "low" is known empty no longer (its hint is older than
    // hintTtlMs) and not due yet, so it is probed. The count is taken then (0: the retry is
    // not due) and answered 0.6 s later, after the retry fell due (a slow answer, or SQS,
    // whose counts lag and leave a retry out). That 0 says nothing of the retry: the
    // worker must serve the lane, not long-poll "high" again with the retry forgotten
    // until a later probe.
    const clock = createManualClock();
    const answerMs = 600;
    const adapter = bend(createMemoryAdapter({ clock }), {
      lane: (store: LaneStore) =>
        store.name === "low"
          ? {
              probe: async () => {
                const n = await store.probe();
                await sleep(clock, answerMs);
                return n;
              },
            }
          : {},
    });
    const backoffMs = 2_000;
    const runAts: number[] = [];
    const startedAt: number[] = [];
    const flaky = defineTask({
      name: "flaky",
      lane: "low",
      schema: z.object({}),
      retry: { maxAttempts: 2, baseMs: backoffMs, jitter: 0 },
      run: (_payload, ctx) => {
        if (ctx.attempt === 1) throw new Error("first attempt fails");
        startedAt.push(clock.now());
      },
    });
    const tl = highAndLow(adapter, clock, 1_500, [flaky]);
    tl.events.on("retrying", (e) => runAts.push(e.runAt));
    await tl.publish(flaky, {});
    await tl.worker().start();
    for (let i = 0; i < 1_000 && startedAt.length === 0; i++) await clock.advance(10);
    expect(runAts).toHaveLength(1);
    expect(startedAt).toHaveLength(1);
    // Served when the probe answers (runAt + 0.1 s); before, after the next poll on "high"
    // and another probe (runAt + 2.2 s).
    expect((startedAt[0] as number) - (runAts[0] as number)).toBeLessThanOrEqual(answerMs);
  });
});
