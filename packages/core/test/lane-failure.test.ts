/**
 * Lanes fail independently: one lane's backend failing (a Redis Cluster master down, a
 * slot migrating, an unreachable queue) must not hold up the worker's other lanes. The
 * memory adapter with a manual clock, one lane's calls made to throw by a wrapper.
 */
import { createManualClock, createMemoryAdapter, type ManualClock } from "@tasklane/adapter-memory";
import { afterEach, describe, expect, it } from "vitest";
import { z } from "zod";
import type { LaneStore } from "../src/adapter-kit.ts";
import {
  type Adapter,
  AdapterError,
  createSeededRandom,
  createTasklane,
  defineTask,
  type SelectorName,
  type Tasklane,
} from "../src/index.ts";

const open: Tasklane[] = [];
afterEach(async () => {
  await Promise.all(open.splice(0).map((tl) => tl.close({ graceMs: 0 })));
});

/** A lane "bad" whose reserve (and probe, with `probeFails`) throws while `down` is set. */
interface Outage {
  down: boolean;
  /** Clock time of each call made on the lane while it was down. */
  failedAt: number[];
}

function withFailingLane(inner: Adapter, clock: ManualClock, outage: Outage, probeFails: boolean) {
  const fail = () => {
    outage.failedAt.push(clock.now());
    throw new AdapterError("flaky", "node down");
  };
  const wrap = (q: LaneStore): LaneStore =>
    q.name !== "bad"
      ? q
      : new Proxy(q, {
          get(target, prop, receiver) {
            if (prop === "reserve") {
              return async (o: Parameters<LaneStore["reserve"]>[0]) =>
                outage.down ? fail() : target.reserve(o);
            }
            if (prop === "probe") {
              return async () => (outage.down && probeFails ? fail() : target.probe());
            }
            const v = Reflect.get(target, prop, receiver);
            return typeof v === "function" ? v.bind(target) : v;
          },
        });
  return {
    ...inner,
    lane: async (n, o) => wrap(await inner.lane(n, o)),
    close: () => inner.close(),
  } satisfies Adapter;
}

const good = defineTask({ name: "g", lane: "good", schema: z.object({}), run: () => {} });
const bad = defineTask({ name: "b", lane: "bad", schema: z.object({}), run: () => {} });

function setup(selector: SelectorName, probeFails: boolean) {
  const clock = createManualClock();
  const outage: Outage = { down: true, failedAt: [] };
  const adapter = withFailingLane(createMemoryAdapter({ clock }), clock, outage, probeFails);
  const tl = createTasklane({
    adapter,
    clock,
    selector,
    random: createSeededRandom(7),
    lanes: [
      { name: "good", batchSize: 10 },
      { name: "bad", batchSize: 10 },
    ],
    tasks: [good, bad],
  });
  open.push(tl);
  const done = { good: 0, bad: 0 };
  tl.events.on("succeeded", (e) => {
    if (e.lane === "good" || e.lane === "bad") done[e.lane]++;
  });
  const errors: Array<{ during: string; lane?: string }> = [];
  tl.events.on("error", (e) =>
    errors.push({ during: e.during, ...(e.lane ? { lane: e.lane } : {}) }),
  );
  return { clock, outage, tl, done, errors };
}

/** Advance the clock 1 ms at a time until `until()` or `maxMs` ms have passed. */
async function runFor(clock: ManualClock, maxMs: number, until: () => boolean): Promise<number> {
  const start = clock.now();
  while (!until() && clock.now() - start < maxMs) await clock.advance(1);
  return clock.now() - start;
}

describe("lanes fail independently", () => {
  for (const [selector, probeFails] of [
    ["round-robin", false],
    ["reduced-lottery", true],
  ] as const) {
    it(`serves the healthy lane at full speed while the other's ${probeFails ? "probe and reserve" : "reserve"} throw (${selector})`, async () => {
      const { clock, outage, tl, done, errors } = setup(selector, probeFails);
      await tl.publishMany(
        good,
        Array.from({ length: 300 }, () => ({ payload: {} })),
      );
      await tl.publishMany(
        bad,
        Array.from({ length: 5 }, () => ({ payload: {} })),
      );
      await tl.worker({ concurrency: 10 }).start();
      // Jobs take no time: only a back-off (a timer on the manual clock) can slow the
      // healthy lane. Set aside at once, the failing lane costs it nothing.
      const tookMs = await runFor(clock, 10_000, () => done.good === 300);
      expect(done.good).toBe(300);
      expect(tookMs).toBeLessThan(50);
      // The failing lane was tried once, then left to its back-off (250 ms).
      expect(outage.failedAt).toEqual([outage.failedAt[0]]);
      expect(errors).toEqual([{ during: probeFails ? "probe" : "reserve", lane: "bad" }]);
      expect(done.bad).toBe(0);
    });
  }

  it("retries the failing lane after a back-off of its own (doubling, reset by a success) and resumes it", async () => {
    const { clock, outage, tl, done } = setup("round-robin", true);
    await tl.publishMany(
      bad,
      Array.from({ length: 5 }, () => ({ payload: {} })),
    );
    await tl.worker().start();
    await runFor(clock, 4_000, () => false);
    // Tried, then probed at 250, 500, 1,000 and 2,000 ms after each failure.
    const gaps = outage.failedAt.slice(1).map((at, i) => at - (outage.failedAt[i] as number));
    expect(gaps).toEqual([250, 500, 1_000, 2_000].slice(0, gaps.length));
    expect(gaps.length).toBeGreaterThanOrEqual(3);
    expect(done.bad).toBe(0);

    // Back up: the next probe brings it back and its jobs run.
    outage.down = false;
    const lastFailure = outage.failedAt.at(-1) as number;
    await runFor(clock, 10_000, () => done.bad === 5);
    expect(done.bad).toBe(5);
    // At the probe due after the last failure's back-off, not later.
    expect(clock.now() - lastFailure).toBeLessThanOrEqual(2 ** outage.failedAt.length * 250);

    // Its turns succeeded, so its back-off starts from the first step again.
    outage.down = true;
    outage.failedAt.length = 0;
    await tl.publish(bad, {});
    await runFor(clock, 400, () => outage.failedAt.length >= 2);
    expect(outage.failedAt.slice(1).map((at, i) => at - (outage.failedAt[i] as number))).toEqual([
      250,
    ]);
  });

  it("does not report drained while a lane is set aside (its jobs are unknown)", async () => {
    const { clock, outage, tl } = setup("round-robin", true);
    let drained = 0;
    tl.events.on("drained", () => drained++);
    await tl.worker().start();
    await runFor(clock, 2_000, () => false);
    expect(outage.failedAt.length).toBeGreaterThan(1);
    expect(drained).toBe(0);
    outage.down = false;
    await runFor(clock, 5_000, () => drained > 0);
    expect(drained).toBe(1);
  });

  it("waits without spinning when every lane fails, and resumes the first lane back", async () => {
    const clock = createManualClock();
    const calls: Array<{ lane: string; at: number }> = [];
    let down = true;
    const inner = createMemoryAdapter({ clock });
    const adapter: Adapter = {
      ...inner,
      lane: async (n, o) => {
        const q = await inner.lane(n, o);
        const fail = async (): Promise<never> => {
          calls.push({ lane: n, at: clock.now() });
          throw new AdapterError("flaky", "cluster down");
        };
        return new Proxy(q, {
          get(target, prop, receiver) {
            if (prop === "reserve" || prop === "probe") {
              return (...args: never[]) =>
                down ? fail() : (target[prop] as (...a: never[]) => unknown)(...args);
            }
            const v = Reflect.get(target, prop, receiver);
            return typeof v === "function" ? v.bind(target) : v;
          },
        });
      },
      close: () => inner.close(),
    };
    const tl = createTasklane({
      adapter,
      clock,
      selector: "round-robin",
      lanes: [{ name: "good" }, { name: "bad" }],
      tasks: [good, bad],
    });
    open.push(tl);
    tl.events.on("error", () => {});
    let succeeded = 0;
    tl.events.on("succeeded", () => succeeded++);
    await tl.publish(good, {});
    const started = clock.now();
    await tl.worker().start();
    await runFor(clock, 8_000, () => false);
    // Each lane: its first failure, then a probe after 250, 500, 1,000, 2,000 and 4,000 ms;
    // in between, nothing.
    for (const lane of ["good", "bad"]) {
      const at = calls.filter((c) => c.lane === lane).map((c) => c.at - started);
      expect(at).toEqual([0, 250, 750, 1_750, 3_750, 7_750]);
    }
    down = false;
    await runFor(clock, 10_000, () => succeeded === 1);
    expect(succeeded).toBe(1);
  });
});
