import { createManualClock, createMemoryAdapter } from "@tasklane/adapter-memory";
import { afterEach, describe, expect, it } from "vitest";
import { z } from "zod";
import type { LaneStore, ReserveOptions } from "../src/adapter-kit.ts";
import {
  type Adapter,
  AdapterError,
  createTasklane,
  defineTask,
  type Tasklane,
  type TasklaneEvents,
} from "../src/index.ts";

/** Wrap an adapter's lanes to observe or bend calls (a slow network, a flaky backend). */
function wrapAdapter(inner: Adapter, wrapLane: (q: LaneStore) => LaneStore): Adapter {
  return {
    ...inner,
    name: inner.name,
    capabilities: inner.capabilities,
    lane: async (n, o) => wrapLane(await inner.lane(n, o)),
    close: () => inner.close(),
    ...(inner.subscribe ? { subscribe: inner.subscribe.bind(inner) } : {}),
  };
}

function wrapLane(q: LaneStore, overrides: Partial<LaneStore>): LaneStore {
  return new Proxy(q, {
    get(target, prop, receiver) {
      if (prop in overrides) return overrides[prop as keyof LaneStore];
      const v = Reflect.get(target, prop, receiver);
      return typeof v === "function" ? v.bind(target) : v;
    },
  });
}

/** `inner` with every reserve's lane and options noted before the call. */
function noteReserves(inner: Adapter, note: (lane: string, options: ReserveOptions) => void) {
  return wrapAdapter(inner, (q) =>
    wrapLane(q, {
      reserve: async (o) => {
        note(q.name, o);
        return q.reserve(o);
      },
    }),
  );
}

const open: Tasklane[] = [];
afterEach(async () => {
  await Promise.all(open.splice(0).map((tl) => tl.close({ graceMs: 0 })));
});

function record<K extends keyof TasklaneEvents>(tl: Tasklane, name: K): Array<TasklaneEvents[K]> {
  const list: Array<TasklaneEvents[K]> = [];
  tl.events.on(name, ((e: TasklaneEvents[K]) => list.push(e)) as never);
  return list;
}

describe("worker", () => {
  it("hands back a job whose time limit no longer fits in its lease (Kale's time budget)", async () => {
    const clock = createManualClock();
    let shortened = 0;
    const adapter = wrapAdapter(createMemoryAdapter({ clock }), (q) =>
      wrapLane(q, {
        reserve: async (o) => {
          const r = await q.reserve(o);
          // The first delivery arrives with only 1 s of its lease left (a slow network).
          for (const j of r.jobs) if (shortened++ === 0) j.lock.expiresAt = clock.now() + 1_000;
          return r;
        },
      }),
    );
    const attempts: number[] = [];
    const task = defineTask({
      name: "t",
      lane: "q",
      schema: z.object({}),
      timeLimitMs: 5_000,
      run: (_p, ctx) => void attempts.push(ctx.attempt),
    });
    const tl = createTasklane({
      adapter,
      clock,
      lanes: [{ name: "q", leaseMs: 30_000 }],
      tasks: [task],
    });
    open.push(tl);
    const started = record(tl, "started");
    await tl.publish(task, {});
    await tl.worker().start();
    for (let i = 0; i < 50 && attempts.length === 0; i++) await clock.advance(100);
    // Handed back unstarted, then run on the next delivery with the same attempt number.
    expect(shortened).toBeGreaterThanOrEqual(2);
    expect(started).toHaveLength(1);
    expect(attempts).toEqual([1]);
  });

  it("never starts a job whose lease has already ended, even without a time limit", async () => {
    const clock = createManualClock();
    let expired = 0;
    const adapter = wrapAdapter(createMemoryAdapter({ clock }), (q) =>
      wrapLane(q, {
        reserve: async (o) => {
          const r = await q.reserve(o);
          // The first delivery's lease is over by the time it arrives (a reply held up).
          for (const j of r.jobs) if (expired++ === 0) j.lock.expiresAt = clock.now();
          return r;
        },
      }),
    );
    const attempts: number[] = [];
    const task = defineTask({
      name: "t",
      lane: "q",
      schema: z.object({}),
      run: (_p, ctx) => void attempts.push(ctx.attempt),
    });
    const tl = createTasklane({ adapter, clock, lanes: [{ name: "q" }], tasks: [task] });
    open.push(tl);
    const started = record(tl, "started");
    await tl.publish(task, {});
    await tl.worker().start();
    for (let i = 0; i < 50 && attempts.length === 0; i++) await clock.advance(100);
    // Handed back unstarted, then run on the next delivery with the same attempt number.
    expect(expired).toBeGreaterThanOrEqual(2);
    expect(started).toHaveLength(1);
    expect(attempts).toEqual([1]);
  });

  it("does not spin while every lane is empty", async () => {
    const clock = createManualClock();
    let calls = 0;
    const adapter = wrapAdapter(createMemoryAdapter({ clock }), (q) =>
      wrapLane(q, {
        reserve: (o) => {
          calls++;
          return q.reserve(o);
        },
        probe: () => {
          calls++;
          return q.probe();
        },
      }),
    );
    const task = defineTask({ name: "t", lane: "high", schema: z.object({}), run: () => {} });
    const tl = createTasklane({
      adapter,
      clock,
      lanes: [
        { name: "high", priority: 100, longPollMs: 1_000 },
        { name: "default", priority: 40, longPollMs: 1_000 },
        { name: "low", priority: 5, longPollMs: 5_000 },
      ],
      tasks: [task],
    });
    open.push(tl);
    const drained = record(tl, "drained");
    await tl.worker().start();
    await clock.advance(60_000);
    // At most one long poll per second plus one look at each lane when hints go stale.
    expect(calls).toBeLessThanOrEqual(60 * 4);
    expect(calls).toBeGreaterThan(10);
    expect(drained.length).toBe(1);
  });

  it("starts a job published in-process at once, even while long-polling another lane", async () => {
    const clock = createManualClock();
    const ran: string[] = [];
    const low = defineTask({
      name: "low",
      lane: "low",
      schema: z.object({}),
      run: () => void ran.push("low"),
    });
    const tl = createTasklane({
      adapter: createMemoryAdapter({ clock }),
      clock,
      lanes: [
        { name: "high", priority: 100, longPollMs: 60_000 },
        { name: "low", priority: 5, longPollMs: 60_000 },
      ],
      tasks: [low],
    });
    open.push(tl);
    await tl.worker().start();
    await clock.advance(5_000); // everything empty: the worker is in a long poll
    await tl.publish(low, {});
    for (let i = 0; i < 20 && ran.length === 0; i++) await clock.advance(0);
    expect(ran).toEqual(["low"]);
  });

  it("starts a job published in-process with a delay when it falls due, while long-polling another lane", async () => {
    const clock = createManualClock();
    const ranAt: number[] = [];
    const low = defineTask({
      name: "low",
      lane: "low",
      schema: z.object({}),
      run: () => void ranAt.push(clock.now()),
    });
    const tl = createTasklane({
      adapter: createMemoryAdapter({ clock }),
      clock,
      // strict priority long-polls "high" whenever both lanes are empty
      selector: "strict-priority",
      lanes: [
        { name: "high", priority: 100, longPollMs: 60_000 },
        { name: "low", priority: 5, longPollMs: 60_000 },
      ],
      tasks: [low],
    });
    open.push(tl);
    await tl.worker().start();
    await clock.advance(5_000); // everything empty: the worker is in a long poll on "high"
    const dueAt = clock.now() + 10_000;
    await tl.publish(low, {}, { delayMs: 10_000 });
    await clock.advance(9_999);
    expect(ranAt).toEqual([]);
    for (let i = 0; i < 20 && ranAt.length === 0; i++) await clock.advance(1);
    expect(ranAt).toEqual([dueAt]);
  });

  it("passes appData, prefixes the namespace and emits progress", async () => {
    const clock = createManualClock();
    const memory = createMemoryAdapter({ clock });
    const names: string[] = [];
    const adapter = wrapAdapter(memory, (q) => {
      names.push(q.name);
      return q;
    });
    let seen: unknown;
    const task = defineTask({
      name: "t",
      lane: "default",
      schema: z.object({ n: z.number() }),
      run: (p, ctx) => {
        seen = ctx.appData;
        ctx.progress({ pct: 50 });
        ctx.log(`n=${p.n}`);
      },
    });
    const tl = createTasklane({
      adapter,
      clock,
      namespace: "v42",
      lanes: [{ name: "default" }],
      tasks: [task],
    });
    open.push(tl);
    const progress = record(tl, "progress");
    const succeeded = record(tl, "succeeded");
    await tl.publish(task, { n: 7 }, { appData: { env: "staging" } });
    await tl.worker().start();
    for (let i = 0; i < 20 && succeeded.length === 0; i++) await clock.advance(10);
    expect(names).toEqual(["v42_default"]);
    expect(seen).toEqual({ env: "staging" });
    expect(progress.map((e) => e.value)).toEqual([{ pct: 50 }, { log: "n=7" }]);
  });

  it("survives a failing backend: reports the error, backs off and goes on", async () => {
    const clock = createManualClock();
    let failures = 2;
    const adapter = wrapAdapter(createMemoryAdapter({ clock }), (q) =>
      wrapLane(q, {
        reserve: async (o) => {
          if (failures > 0) {
            failures--;
            throw new AdapterError("flaky", "connection reset");
          }
          return q.reserve(o);
        },
      }),
    );
    const task = defineTask({ name: "t", lane: "q", schema: z.object({}), run: () => {} });
    const tl = createTasklane({ adapter, clock, lanes: [{ name: "q" }], tasks: [task] });
    open.push(tl);
    const errors = record(tl, "error");
    const succeeded = record(tl, "succeeded");
    await tl.publish(task, {});
    await tl.worker().start();
    for (let i = 0; i < 100 && succeeded.length === 0; i++) await clock.advance(100);
    expect(errors.map((e) => (e.error as Error).message)).toEqual([
      "[flaky] connection reset",
      "[flaky] connection reset",
    ]);
    expect(succeeded).toHaveLength(1);
  });

  it("keeps running jobs at the configured concurrency", async () => {
    const clock = createManualClock();
    let running = 0;
    let peak = 0;
    const task = defineTask({
      name: "t",
      lane: "q",
      schema: z.object({}),
      run: async () => {
        peak = Math.max(peak, ++running);
        await new Promise<void>((r) => clock.setTimeout(r, 1_000));
        running--;
      },
    });
    const tl = createTasklane({
      adapter: createMemoryAdapter({ clock }),
      clock,
      lanes: [{ name: "q", batchSize: 100 }],
      tasks: [task],
    });
    open.push(tl);
    const succeeded = record(tl, "succeeded");
    await tl.publishMany(
      task,
      Array.from({ length: 100 }, () => ({ payload: {} })),
    );
    await tl.worker({ concurrency: 25 }).start();
    for (let i = 0; i < 100 && succeeded.length < 100; i++) await clock.advance(250);
    expect(succeeded).toHaveLength(100);
    expect(peak).toBe(25);
  });

  it("prefetches whole batches beyond its concurrency and hands the unstarted ones back at stop", async () => {
    const clock = createManualClock();
    const adapter = createMemoryAdapter({ clock });
    let running = 0;
    let peak = 0;
    const task = defineTask({
      name: "t",
      lane: "q",
      schema: z.object({}),
      run: async () => {
        peak = Math.max(peak, ++running);
        await new Promise<void>((r) => clock.setTimeout(r, 10_000));
        running--;
      },
    });
    const tl = createTasklane({
      adapter,
      clock,
      lanes: [{ name: "q", batchSize: 10 }],
      tasks: [task],
    });
    open.push(tl);
    await tl.publishMany(
      task,
      Array.from({ length: 30 }, () => ({ payload: {} })),
    );
    // prefetch defaults to 2 × batchSize − concurrency: 18, so two whole batches fit.
    const worker = tl.worker({ concurrency: 2 });
    await worker.start();
    await clock.advance(100);
    // Two full batches: 2 running, 18 buffered. The buffer is refilled only once it has
    // room for a whole batch, so batches stay whole.
    expect(running).toBe(2);
    expect(worker.held).toBe(20);
    expect(await tl.lane("q").counts()).toMatchObject({ waiting: 10, active: 20 });
    // Stopping with a long grace: the 18 prefetched jobs go back at once, the 2 running finish.
    const stopped = worker.stop({ graceMs: 60_000 });
    await clock.advance(100);
    expect(await tl.lane("q").counts()).toMatchObject({ waiting: 28, active: 2 });
    await clock.advance(10_000);
    await stopped;
    expect(await tl.lane("q").counts()).toMatchObject({ waiting: 28, active: 0, succeeded: 2 });
    expect(peak).toBe(2);
  });

  it("sends the next reserve before running the batch it just received (round trip overlaps the jobs)", async () => {
    const clock = createManualClock();
    const log: string[] = [];
    const adapter = noteReserves(createMemoryAdapter({ clock }), (_, o) =>
      log.push(`reserve ${o.limit}`),
    );
    const task = defineTask({
      name: "t",
      lane: "q",
      schema: z.object({ i: z.number() }),
      run: async (p) => {
        log.push(`run ${p.i}`);
      },
    });
    const tl = createTasklane({
      adapter,
      clock,
      lanes: [{ name: "q", batchSize: 2, numIterations: 3 }],
      tasks: [task],
    });
    open.push(tl);
    await tl.publishMany(
      task,
      Array.from({ length: 5 }, (_, i) => ({ payload: { i } })),
    );
    const succeeded = record(tl, "succeeded");
    // concurrency 2 + prefetch 4: room for the next batch while the previous two are held,
    // however far their handlers have got (the rule counts a job until its run ends).
    await tl.worker({ concurrency: 2, prefetch: 4 }).start();
    for (let i = 0; i < 20 && succeeded.length < 5; i++) await clock.advance(10);
    expect(succeeded).toHaveLength(5);
    // Each reserve goes out before the jobs of the previous batch start. The third is the
    // last of the stay (numIterations 3), so nothing is sent ahead of its jobs.
    expect(log.slice(0, 8)).toEqual([
      "reserve 2",
      "reserve 2",
      "run 0",
      "run 1",
      "reserve 2",
      "run 2",
      "run 3",
      "run 4",
    ]);
  });

  it("honours a selector's turn cap (one reserve of at most that many jobs, no long poll) without spinning", async () => {
    const clock = createManualClock();
    const calls: Array<{ limit: number; waitMs: number }> = [];
    const adapter = noteReserves(createMemoryAdapter({ clock }), (_, o) =>
      calls.push({ limit: o.limit, waitMs: o.waitMs }),
    );
    const task = defineTask({ name: "t", lane: "q", schema: z.object({}), run: async () => {} });
    const tl = createTasklane({
      adapter,
      clock,
      // Every turn capped at 2 jobs, whatever the hints say.
      selector: {
        name: "capped",
        select: (ctx) => {
          ctx.limitTurn?.(2);
          return ctx.lanes[0] as never;
        },
      },
      lanes: [{ name: "q", batchSize: 10, numIterations: 5, longPollMs: 1_000 }],
      tasks: [task],
    });
    open.push(tl);
    await tl.publishMany(
      task,
      Array.from({ length: 5 }, () => ({ payload: {} })),
    );
    const succeeded = record(tl, "succeeded");
    await tl.worker({ concurrency: 10 }).start();
    for (let i = 0; i < 20 && succeeded.length < 5; i++) await clock.advance(10);
    expect(succeeded).toHaveLength(5);
    // Five jobs, two per capped turn: three turns, each a single reserve.
    expect(calls.slice(0, 3)).toEqual([
      { limit: 2, waitMs: 0 },
      { limit: 2, waitMs: 0 },
      { limit: 2, waitMs: 0 },
    ]);
    // Once every lane is known empty, a second capped turn in a row would spin: the
    // worker long-polls instead, so calls stay few however long it idles.
    await clock.advance(5_000);
    expect(calls.some((c) => c.waitMs === 1_000)).toBe(true);
    expect(calls.length).toBeLessThan(20);
  });

  it("runs trickle-stride's one-job looks at a low lane on the client's clock", async () => {
    const clock = createManualClock();
    const calls: Array<{ lane: string; limit: number }> = [];
    const adapter = noteReserves(createMemoryAdapter({ clock }), (lane, o) =>
      calls.push({ lane, limit: o.limit }),
    );
    const run = async () => {
      await new Promise<void>((r) => clock.setTimeout(r, 50));
    };
    const high = defineTask({ name: "high", lane: "high", schema: z.object({}), run });
    const low = defineTask({ name: "low", lane: "low", schema: z.object({}), run });
    const tl = createTasklane({
      adapter,
      clock,
      selector: "trickle-stride",
      lanes: [
        { name: "high", priority: 100, batchSize: 10 },
        { name: "low", priority: 5, batchSize: 10 },
      ],
      tasks: [high, low],
    });
    open.push(tl);
    await tl.publishMany(
      high,
      Array.from({ length: 200 }, () => ({ payload: {} })),
    );
    await tl.publishMany(
      low,
      Array.from({ length: 20 }, () => ({ payload: {} })),
    );
    await tl.worker({ concurrency: 2, prefetch: 0 }).start();
    // Virtual time only: on the system clock the 200 ms trickle interval would not pass.
    for (let i = 0; i < 40; i++) await clock.advance(50);
    const lowCalls = calls.filter((c) => c.lane.endsWith("low"));
    expect(lowCalls.some((c) => c.limit === 1)).toBe(true);
  });

  it("reserves no further ahead than concurrency + prefetch", async () => {
    const clock = createManualClock();
    let peakHeld = 0;
    let release: (() => void) | undefined;
    const gate = new Promise<void>((r) => {
      release = r;
    });
    const task = defineTask({
      name: "t",
      lane: "q",
      schema: z.object({}),
      run: async () => {
        await gate;
      },
    });
    const tl = createTasklane({
      adapter: createMemoryAdapter({ clock }),
      clock,
      lanes: [{ name: "q", batchSize: 2, numIterations: 10 }],
      tasks: [task],
    });
    open.push(tl);
    await tl.publishMany(
      task,
      Array.from({ length: 30 }, () => ({ payload: {} })),
    );
    // 2 running + 4 prefetched: the batches sent ahead fill the buffer, and no more.
    const worker = tl.worker({ concurrency: 2, prefetch: 4 });
    await worker.start();
    for (let i = 0; i < 10; i++) {
      await clock.advance(10);
      peakHeld = Math.max(peakHeld, worker.held);
    }
    expect(peakHeld).toBe(6);
    expect(await tl.lane("q").counts()).toMatchObject({ active: 6, waiting: 24 });
    release?.();
  });

  it.each([
    ["high lane configured first", false],
    ["low lane configured first", true],
  ])("starts buffered jobs in lane-priority order (%s)", async (_name, lowFirst) => {
    const clock = createManualClock();
    const order: string[] = [];
    let release: (() => void) | undefined;
    const gate = new Promise<void>((r) => {
      release = r;
    });
    const run = async (p: { lane: string }) => {
      order.push(p.lane);
      await gate;
    };
    const low = defineTask({
      name: "low",
      lane: "low",
      schema: z.object({ lane: z.string() }),
      run,
    });
    const high = defineTask({
      name: "high",
      lane: "high",
      schema: z.object({ lane: z.string() }),
      run,
    });
    const tl = createTasklane({
      adapter: createMemoryAdapter({ clock }),
      clock,
      selector: "strict-priority",
      lanes: lowFirst
        ? [
            { name: "low", priority: 5, batchSize: 5 },
            { name: "high", priority: 100, batchSize: 5 },
          ]
        : [
            { name: "high", priority: 100, batchSize: 5 },
            { name: "low", priority: 5, batchSize: 5 },
          ],
      tasks: [low, high],
    });
    open.push(tl);
    await tl.publishMany(
      low,
      Array.from({ length: 5 }, () => ({ payload: { lane: "low" } })),
    );
    await tl.worker({ concurrency: 1, prefetch: 10 }).start();
    await clock.advance(10); // one low job runs, four wait in the buffer
    await tl.publishMany(
      high,
      Array.from({ length: 3 }, () => ({ payload: { lane: "high" } })),
    );
    await clock.advance(10); // the high jobs join the buffer
    release?.();
    for (let i = 0; i < 20 && order.length < 8; i++) await clock.advance(10);
    expect(order).toEqual(["low", "high", "high", "high", "low", "low", "low", "low"]);
  });
});

describe("subscribe", () => {
  it("delivers lifecycle events of its lanes from another client, by config name", async () => {
    const clock = createManualClock();
    const adapter = createMemoryAdapter({ clock });
    const task = defineTask({
      name: "t",
      lane: "default",
      schema: z.object({ n: z.number() }),
      run: (p) => {
        if (p.n === 2) throw new Error("boom");
      },
      retry: { maxAttempts: 1 },
    });
    const config = { namespace: "v1", lanes: [{ name: "default" }], tasks: [task] };
    // One client runs the jobs; the other only watches (both on one adapter: the memory
    // adapter's stand-in for two processes on one Redis).
    const runner = createTasklane({ adapter, clock, ...config, closeAdapter: false });
    const watcher = createTasklane({ adapter, clock, ...config, closeAdapter: false });
    const other = createTasklane({
      adapter,
      clock,
      ...config,
      namespace: "v2",
      closeAdapter: false,
    });
    open.push(runner, watcher, other);
    const seen: string[] = [];
    const unsubscribe = await watcher.subscribe((e) => seen.push(`${e.lane} ${e.type}`));
    await other.publish(task, { n: 0 }); // another namespace: not one of watcher's lanes
    const ok = await runner.publish(task, { n: 1 });
    const bad = await runner.publish(task, { n: 2 });
    await runner.worker().start();
    for (let i = 0; i < 50 && seen.length < 6; i++) await clock.advance(10);
    expect(seen).toEqual([
      "default published",
      "default published",
      "default started",
      "default started",
      "default succeeded",
      "default failed",
    ]);
    expect(ok.id).not.toBe(bad.id);
    await unsubscribe();
  });

  it("throws UnsupportedError when the adapter carries no events", async () => {
    const memory = createMemoryAdapter();
    const adapter: Adapter = {
      ...wrapAdapter(memory, (q) => q),
      capabilities: { ...memory.capabilities, subscribe: false, lifecycleEvents: false },
    };
    const tl = createTasklane({ adapter, lanes: [{ name: "default" }], tasks: [] });
    open.push(tl);
    await expect(tl.subscribe(() => {})).rejects.toMatchObject({ code: "UNSUPPORTED" });
  });
});
