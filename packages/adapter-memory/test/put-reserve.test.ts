import { ClosedError, LaneFullError } from "@tasklane/core/adapter";
import { describe, expect, it } from "vitest";
import { createManualClock, createMemoryAdapter } from "../src/index.ts";
import { job, now, START, setup } from "./helpers.ts";

describe("put and reserve", () => {
  it("hands out higher priority first, then earlier due time, then put order", async () => {
    const { lane } = await setup();
    await lane.put([
      job("low-1", { priority: 0 }),
      job("high-1", { priority: 5 }),
      job("low-2", { priority: 0 }),
      job("high-2", { priority: 5 }),
      job("old-low", { priority: 0, runAt: START - 1000 }),
      job("mid", { priority: 1 }),
    ]);
    const { jobs, ready } = await lane.reserve(now);
    expect(jobs.map((j) => j.id)).toEqual(["high-1", "high-2", "mid", "old-low", "low-1", "low-2"]);
    expect(ready).toBe(0);
    expect(jobs[0]?.attempt).toBe(1);
  });

  it("takes at most limit jobs and reports how many are still ready", async () => {
    const { lane } = await setup();
    await lane.put([job("a"), job("b"), job("c")]);
    const r = await lane.reserve({ ...now, limit: 2 });
    expect(r.jobs.map((j) => j.id)).toEqual(["a", "b"]);
    expect(r.ready).toBe(1);
    expect(await lane.probe()).toBe(1);
  });

  it("holds a delayed job until its runAt on the injected clock", async () => {
    const { clock, lane } = await setup();
    await lane.put([job("later", { runAt: START + 60_000 }), job("past", { runAt: START - 5 })]);
    expect(await lane.counts()).toMatchObject({ waiting: 1, delayed: 1 });
    const lease = { ...now, leaseMs: 3_600_000 };
    expect((await lane.reserve(lease)).jobs.map((j) => j.id)).toEqual(["past"]);
    await clock.advance(59_999);
    expect((await lane.reserve(now)).jobs).toEqual([]);
    await clock.advance(1);
    const { jobs } = await lane.reserve(now);
    expect(jobs.map((j) => j.id)).toEqual(["later"]);
    expect(jobs[0]?.readyAt).toBe(START + 60_000);
    expect(await lane.counts()).toMatchObject({ waiting: 0, delayed: 0, active: 2 });
  });

  it("de-duplicates by id, inside one batch too (first occurrence wins)", async () => {
    const { lane } = await setup();
    expect(
      await lane.put([job("a", { payload: '"first"' }), job("a", { payload: '"second"' })]),
    ).toEqual([
      { id: "a", status: "created" },
      { id: "a", status: "duplicate" },
    ]);
    expect(await lane.put([job("a"), job("b")])).toEqual([
      { id: "a", status: "duplicate" },
      { id: "b", status: "created" },
    ]);
    expect((await lane.get("a"))?.payload).toBe('"first"');
    // Still a duplicate once finished, until deleted.
    const { jobs } = await lane.reserve(now);
    await lane.ack(jobs.map((j) => j.lock));
    expect(await lane.put([job("a")])).toEqual([{ id: "a", status: "duplicate" }]);
    expect(await lane.delete(["a"])).toBe(1);
    expect(await lane.put([job("a")])).toEqual([{ id: "a", status: "created" }]);
  });

  it("refuses a whole batch that does not fit maxJobs, writing nothing", async () => {
    const { lane } = await setup({}, { maxJobs: 3 });
    await lane.put([job("a"), job("b")]);
    await expect(lane.put([job("c"), job("d")])).rejects.toBeInstanceOf(LaneFullError);
    expect(await lane.counts()).toMatchObject({ waiting: 2 });
    expect(await lane.get("c")).toBeUndefined();
    // Duplicates take no room; finished jobs do not count toward the bound.
    expect(await lane.put([job("a"), job("c")])).toEqual([
      { id: "a", status: "duplicate" },
      { id: "c", status: "created" },
    ]);
    const { jobs } = await lane.reserve(now);
    await lane.ack(jobs.map((j) => j.lock));
    await lane.put([job("d"), job("e"), job("f")]);
    expect(await lane.counts()).toMatchObject({ waiting: 3, succeeded: 3 });
  });

  it("counts a job repeated inside a batch once against maxJobs", async () => {
    const { lane } = await setup({}, { maxJobs: 3 });
    await lane.put([job("a"), job("b")]);
    expect(await lane.put([job("x"), job("x"), job("a")])).toEqual([
      { id: "x", status: "created" },
      { id: "x", status: "duplicate" },
      { id: "a", status: "duplicate" },
    ]);
    await expect(lane.put([job("y")])).rejects.toMatchObject({ code: "LANE_FULL", limit: 3 });
  });

  it("never has more than maxConcurrency jobs active", async () => {
    const { lane } = await setup({ maxConcurrency: 2 });
    await lane.put([job("a"), job("b"), job("c")]);
    const first = await lane.reserve({ ...now, limit: 10 });
    expect(first.jobs).toHaveLength(2);
    expect(first.ready).toBe(0);
    expect(await lane.probe()).toBe(0);
    expect((await lane.reserve(now)).jobs).toEqual([]);
    await lane.ack([first.jobs[0]!.lock]);
    expect((await lane.reserve(now)).jobs.map((j) => j.id)).toEqual(["c"]);
  });

  it("hands out nothing while paused", async () => {
    const { lane } = await setup();
    await lane.put([job("a")]);
    await lane.pause();
    expect(await lane.isPaused()).toBe(true);
    expect((await lane.reserve(now)).jobs).toEqual([]);
    expect(await lane.probe()).toBe(0);
    await lane.resume();
    expect(await lane.isPaused()).toBe(false);
    expect((await lane.reserve(now)).jobs.map((j) => j.id)).toEqual(["a"]);
  });

  it("returns one lane per name and validates options by field", async () => {
    const adapter = createMemoryAdapter({ clock: createManualClock() });
    const a = await adapter.lane("x", { maxStalls: 0, historyLimit: 0 });
    expect(await adapter.lane("x", { maxStalls: 0, historyLimit: 0 })).toBe(a);
    await expect(adapter.lane("y", { maxStalls: -1, historyLimit: 0 })).rejects.toMatchObject({
      code: "CONFIG",
      field: "maxStalls",
    });
    expect(() => createMemoryAdapter({ maxJobs: 0 })).toThrow(/maxJobs/);
  });

  it("close is idempotent and later calls throw ClosedError", async () => {
    const { adapter, lane } = await setup();
    await adapter.close();
    await adapter.close();
    await expect(lane.put([job("a")])).rejects.toBeInstanceOf(ClosedError);
    await expect(lane.reserve(now)).rejects.toBeInstanceOf(ClosedError);
    await expect(lane.counts()).rejects.toBeInstanceOf(ClosedError);
    await expect(adapter.lane("q", { maxStalls: 1, historyLimit: 1 })).rejects.toBeInstanceOf(
      ClosedError,
    );
    const iterate = async () => {
      for await (const _ of lane.list({ state: "waiting" })) break;
    };
    await expect(iterate()).rejects.toBeInstanceOf(ClosedError);
  });
});

describe("fairness to the event loop", () => {
  it("lets macrotasks run while a backlog is drained one reserve after another", async () => {
    const { lane } = await setup({ historyLimit: 0 });
    await lane.put(Array.from({ length: 3000 }, (_, i) => job(`j${i}`)));
    let turns = 0;
    let stop = false;
    const tick = () => {
      turns++;
      if (!stop) setImmediate(tick);
    };
    setImmediate(tick);
    for (let i = 0; i < 3000; i++) {
      const { jobs } = await lane.reserve({ ...now, limit: 1 });
      await lane.ack(jobs.map((j) => j.lock));
    }
    stop = true;
    // A microtask-only drain would give the macrotask queue no turn at all.
    expect(turns).toBeGreaterThanOrEqual(2);
  });
});
