import { createManualClock, createMemoryAdapter } from "@tasklane/adapter-memory";
import { afterEach, describe, expect, it } from "vitest";
import { z } from "zod";
import {
  ConfigError,
  createTasklane,
  defineTask,
  flushAsync,
  MAX_CATCH_UP_RUNS,
  type ManualClock,
  type Tasklane,
  UnsupportedError,
} from "../src/index.ts";
import { firstSlot, planFire, resolveScheduleSpec, type SlotRule } from "../src/schedule.ts";
import { other, T0, tick } from "./schedule-fixtures.ts";

const open: Tasklane[] = [];
afterEach(async () => {
  await Promise.all(open.splice(0).map((tl) => tl.close({ graceMs: 0 })));
});

function setup(start = T0) {
  const clock = createManualClock(start);
  const adapter = createMemoryAdapter({ clock });
  const tl = createTasklane({
    adapter,
    clock,
    lanes: [{ name: "cron" }, { name: "side" }],
    tasks: [tick, other],
  });
  open.push(tl);
  return { clock, adapter, tl };
}

/** The ids of the waiting and delayed jobs of a lane, in id order. */
async function jobIds(tl: Tasklane, lane = "cron"): Promise<string[]> {
  const ids: string[] = [];
  for await (const job of tl.lane(lane).list()) ids.push(job.id);
  return ids.sort();
}

/** The slots (epoch ms) of schedule `id` among the lane's jobs, ascending. */
async function slotsOf(tl: Tasklane, id: string, lane = "cron"): Promise<number[]> {
  return (await jobIds(tl, lane))
    .filter((j) => j.startsWith(`${id}@`))
    .map((j) => Number(j.slice(id.length + 1)))
    .sort((a, b) => a - b);
}

/** Fire at each whole step until `until`, as a worker's ticker would (without one). */
async function fireEvery(tl: Tasklane, clock: ManualClock, stepMs: number, until: number) {
  while (clock.now() + stepMs <= until) {
    await clock.advance(stepMs);
    await tl.schedules.fireDue();
  }
}

const iso = (ms: number) => new Date(ms).toISOString();

/** Let a few rounds of promises and macrotasks run (a worker's async look at its lanes). */
async function settle() {
  for (let i = 0; i < 5; i++) await flushAsync();
}

describe("schedule spec validation", () => {
  const bad: Array<[string, object, string]> = [
    ["spec.cron", { cron: "* * * *" }, "has 4 fields"],
    ["spec.cron", { cron: "* * * * * * *" }, "has 7 fields"],
    ["spec.cron", { cron: "61 * * * *" }, "minute"],
    ["spec.cron", { cron: "0 0 30 2 *" }, "never matches"],
    ["spec.cron", {}, "exactly one"],
    ["spec.cron", { cron: "* * * * *", everyMs: 60_000 }, "exactly one"],
    ["spec.everyMs", { everyMs: 999 }, ">= 1000"],
    ["spec.everyMs", { everyMs: 1500.5 }, "whole"],
    ["spec.timezone", { cron: "* * * * *", timezone: "Mars/Olympus" }, "IANA"],
    ["spec.timezone", { everyMs: 60_000, timezone: "UTC" }, "cron only"],
    ["spec.endAt", { everyMs: 60_000, startAt: 2_000, endAt: 1_000 }, "before startAt"],
    ["spec.limit", { everyMs: 60_000, limit: 0 }, ">= 1"],
    ["spec.catchUp", { everyMs: 60_000, catchUp: "some" }, '"skip", "one" or "all"'],
    ["spec.graceMs", { everyMs: 60_000, graceMs: 10 }, "skip"],
    ["spec", { everyMs: 60_000, every: 1 }, "unknown option"],
  ];
  for (const [field, spec, problem] of bad) {
    it(`refuses ${JSON.stringify(spec)} naming ${field}`, () => {
      let error: unknown;
      try {
        resolveScheduleSpec(spec);
      } catch (e) {
        error = e;
      }
      expect(error).toBeInstanceOf(ConfigError);
      expect((error as ConfigError).field).toBe(field);
      expect((error as ConfigError).message).toContain(problem);
    });
  }

  it("refuses a bad id, task, payload or job option before writing", async () => {
    const { tl } = setup();
    const spec = { everyMs: 60_000 };
    await expect(tl.schedules.upsert("", spec, tick, { n: 1 })).rejects.toMatchObject({
      field: "id",
    });
    await expect(tl.schedules.upsert("x".repeat(101), spec, tick, { n: 1 })).rejects.toMatchObject({
      field: "id",
    });
    await expect(
      tl.schedules.upsert("a", spec, tick, { n: "one" } as unknown as { n: number }),
    ).rejects.toMatchObject({ code: "VALIDATION" });
    await expect(
      tl.schedules.upsert("a", spec, tick, { n: 1 }, { priority: 5000 }),
    ).rejects.toMatchObject({ field: "options.priority" });
    await expect(
      tl.schedules.upsert("a", spec, tick, { n: 1 }, { delayMs: 5 } as object),
    ).rejects.toMatchObject({ field: "jobOptions.delayMs" });
    const stranger = defineTask({
      name: "stranger",
      lane: "cron",
      schema: z.object({}),
      run: async () => {},
    });
    await expect(tl.schedules.upsert("a", spec, stranger, {})).rejects.toMatchObject({
      field: "task",
    });
    expect(await tl.schedules.list()).toEqual([]);
  });

  it("refuses schedules on an adapter without the capability", async () => {
    const clock = createManualClock(T0);
    const inner = createMemoryAdapter({ clock });
    const tl = createTasklane({
      adapter: {
        name: "plain",
        capabilities: Object.freeze({ ...inner.capabilities, schedules: false }),
        lane: (name, options) => inner.lane(name, options),
        close: () => inner.close(),
      },
      clock,
      lanes: [{ name: "cron" }, { name: "side" }],
      tasks: [tick, other],
    });
    open.push(tl);
    await expect(
      tl.schedules.upsert("a", { everyMs: 60_000 }, tick, { n: 1 }),
    ).rejects.toBeInstanceOf(UnsupportedError);
    // and a worker on it never asks for schedules
    const w = tl.worker();
    await w.start();
    await clock.advance(5_000);
    await w.stop();
  });
});

describe("slots", () => {
  const rule = (spec: object, anchorAt = 0): SlotRule => ({
    spec: resolveScheduleSpec(spec),
    anchorAt,
  });

  /** The slots a schedule would run firing on time at every slot from `from` to `to`. */
  const runs = (r: SlotRule, from: number, to: number): string[] => {
    const out: string[] = [];
    let state = { runs: 0 } as { runs: number; lastSlotAt?: number };
    let next = firstSlot(r, state, from);
    while (next !== undefined && next <= to) {
      const plan = planFire(r, state, next, next);
      out.push(...plan.slots.map(iso));
      state = {
        runs: plan.runs,
        ...(plan.lastSlotAt !== undefined ? { lastSlotAt: plan.lastSlotAt } : {}),
      };
      next = plan.nextAt ?? undefined;
    }
    return out;
  };

  it("Europe/Berlin, spring forward: 02:30 does not exist on 29 March, it runs at 03:00 CEST", () => {
    const r = rule({ cron: "30 2 * * *", timezone: "Europe/Berlin" });
    expect(runs(r, Date.UTC(2026, 2, 27), Date.UTC(2026, 2, 31))).toEqual([
      "2026-03-27T01:30:00.000Z", // 02:30 CET
      "2026-03-28T01:30:00.000Z",
      "2026-03-29T01:00:00.000Z", // the gap: 03:00 CEST
      "2026-03-30T00:30:00.000Z", // 02:30 CEST
    ]);
  });

  it("Europe/Berlin, fall back: 02:30 happens twice on 25 October, it runs once", () => {
    const r = rule({ cron: "30 2 * * *", timezone: "Europe/Berlin" });
    expect(runs(r, Date.UTC(2026, 9, 24), Date.UTC(2026, 9, 27))).toEqual([
      "2026-10-24T00:30:00.000Z", // 02:30 CEST
      "2026-10-25T00:30:00.000Z", // the first 02:30 (CEST), not again at 02:30 CET
      "2026-10-26T01:30:00.000Z", // 02:30 CET
    ]);
  });

  it("America/New_York, spring forward and fall back (fixed time)", () => {
    const spring = rule({ cron: "30 2 * * *", timezone: "America/New_York" });
    expect(runs(spring, Date.UTC(2026, 2, 7), Date.UTC(2026, 2, 9, 12))).toEqual([
      "2026-03-07T07:30:00.000Z", // 02:30 EST
      "2026-03-08T07:00:00.000Z", // 02:30 does not exist: 03:00 EDT
      "2026-03-09T06:30:00.000Z", // 02:30 EDT
    ]);
    const fall = rule({ cron: "30 1 * * *", timezone: "America/New_York" });
    expect(runs(fall, Date.UTC(2026, 9, 31, 12), Date.UTC(2026, 10, 2, 12))).toEqual([
      "2026-11-01T05:30:00.000Z", // 01:30 EDT, once (not again at 01:30 EST, 06:30Z)
      "2026-11-02T06:30:00.000Z", // 01:30 EST
    ]);
  });

  it("America/New_York, an interval pattern runs on every real occurrence", () => {
    // "every 30 minutes": the hour skipped in spring has no slot; the repeated one, two.
    const r = rule({ cron: "*/30 * * * *", timezone: "America/New_York" });
    expect(runs(r, Date.UTC(2026, 10, 1, 5), Date.UTC(2026, 10, 1, 7))).toEqual([
      "2026-11-01T05:00:00.000Z", // 01:00 EDT
      "2026-11-01T05:30:00.000Z", // 01:30 EDT
      "2026-11-01T06:00:00.000Z", // 01:00 EST
      "2026-11-01T06:30:00.000Z", // 01:30 EST
      "2026-11-01T07:00:00.000Z", // 02:00 EST
    ]);
    expect(runs(r, Date.UTC(2026, 2, 8, 6), Date.UTC(2026, 2, 8, 7, 30))).toEqual([
      "2026-03-08T06:00:00.000Z", // 01:00 EST
      "2026-03-08T06:30:00.000Z", // 01:30 EST
      "2026-03-08T07:00:00.000Z", // 03:00 EDT (02:00-02:59 does not exist)
      "2026-03-08T07:30:00.000Z",
    ]);
  });

  it("six fields: seconds first", () => {
    const r = rule({ cron: "*/20 * * * * *" });
    expect(runs(r, T0, T0 + 59_000)).toEqual([iso(T0), iso(T0 + 20_000), iso(T0 + 40_000)]);
  });

  it("everyMs counts from startAt, within endAt, up to limit", () => {
    const r = rule({ everyMs: 60_000, startAt: T0 + 30_000, endAt: T0 + 300_000 }, T0 + 30_000);
    expect(runs(r, T0, T0 + 3_600_000)).toEqual([
      iso(T0 + 30_000),
      iso(T0 + 90_000),
      iso(T0 + 150_000),
      iso(T0 + 210_000),
      iso(T0 + 270_000),
    ]);
    expect(runs(rule({ everyMs: 60_000, limit: 2 }, T0), T0, T0 + 3_600_000)).toEqual([
      iso(T0),
      iso(T0 + 60_000),
    ]);
  });
});

describe("tl.schedules on the memory adapter (manual clock)", () => {
  it("a worker puts each slot's run, with a job id from the schedule and the slot", async () => {
    const { clock, tl } = setup();
    const ran: Array<{ id: string; n: number }> = [];
    const t = defineTask({
      name: "beat",
      lane: "cron",
      schema: z.object({ n: z.number() }),
      run: async (p, ctx) => {
        ran.push({ id: ctx.jobId, n: p.n });
      },
    });
    const tl2 = createTasklane({
      adapter: tl.adapter,
      clock,
      closeAdapter: false,
      lanes: [{ name: "cron" }],
      tasks: [t],
    });
    open.push(tl2);
    const info = await tl2.schedules.upsert("beat", { cron: "*/10 * * * * *" }, t, { n: 7 });
    expect(info).toMatchObject({ id: "beat", lane: "cron", task: "beat", nextAt: T0, runs: 0 });
    const w = tl2.worker({ schedulePollMs: 1_000 });
    await w.start();
    for (let i = 0; i < 35; i++) await clock.advance(1_000);
    await w.stop();
    expect(ran).toEqual([
      { id: `beat@${T0}`, n: 7 },
      { id: `beat@${T0 + 10_000}`, n: 7 },
      { id: `beat@${T0 + 20_000}`, n: 7 },
      { id: `beat@${T0 + 30_000}`, n: 7 },
    ]);
    expect(await tl2.schedules.get("beat")).toMatchObject({
      runs: 4,
      lastSlotAt: T0 + 30_000,
      nextAt: T0 + 40_000,
    });
  });

  it("a worker's timer is set to the earliest slot, not only the poll period", async () => {
    const { clock, tl } = setup();
    await tl.schedules.upsert("s", { everyMs: 5_000, startAt: T0 + 2_500 }, tick, { n: 1 });
    const w = tl.worker({ schedulePollMs: 60_000, concurrency: 1, lanes: ["side"] });
    // the worker serves lane side only: it never fires lane cron's schedules
    await w.start();
    await clock.advance(10_000);
    expect(await jobIds(tl)).toEqual([]);
    await w.stop();
    const w2 = tl.worker({ schedulePollMs: 60_000, lanes: ["cron"], prefetch: 0, concurrency: 1 });
    await w2.start();
    // at start (T0 + 10 s) slots 2,500 and 7,500 are due: catchUp "one" runs the latest;
    // then the timer is set to the next slot (12,500), not to the end of the 60 s period
    await clock.advance(2_500);
    expect(await slotsOf(tl, "s")).toEqual([T0 + 7_500, T0 + 12_500]);
    await w2.stop({ graceMs: 0 });
  });

  describe("catch-up after downtime (everyMs 60 s, down 10 min 30 s)", () => {
    const down = async (catchUp: "skip" | "one" | "all", graceMs?: number) => {
      const { clock, tl } = setup();
      const spec = { everyMs: 60_000, catchUp, ...(graceMs !== undefined ? { graceMs } : {}) };
      await tl.schedules.upsert("c", spec, tick, { n: 1 });
      await tl.schedules.fireDue(); // T0 runs on time
      await clock.advance(630_000);
      const report = await tl.schedules.fireDue();
      return { report, slots: await slotsOf(tl, "c"), info: await tl.schedules.get("c") };
    };

    it("skip: no missed slot runs; the latest runs only when within graceMs", async () => {
      const strict = await down("skip", 10_000);
      expect(strict.slots).toEqual([T0]);
      expect(strict.report).toEqual({ created: 0, duplicates: 0, skipped: 10, stale: 0 });
      expect(strict.info?.nextAt).toBe(T0 + 660_000);
      const lenient = await down("skip", 30_000);
      expect(lenient.slots).toEqual([T0, T0 + 600_000]);
    });

    it("one: one run, for the latest missed slot", async () => {
      const r = await down("one");
      expect(r.slots).toEqual([T0, T0 + 600_000]);
      expect(r.report).toEqual({ created: 1, duplicates: 0, skipped: 9, stale: 0 });
      expect(r.info).toMatchObject({ runs: 2, nextAt: T0 + 660_000, lastSlotAt: T0 + 600_000 });
    });

    it("all: every missed slot", async () => {
      const r = await down("all");
      expect(r.slots).toEqual(Array.from({ length: 11 }, (_, i) => T0 + i * 60_000));
      expect(r.report.created).toBe(10);
    });

    it(`all is bounded: at most ${MAX_CATCH_UP_RUNS} runs, the latest slots`, async () => {
      const { clock, tl } = setup();
      await tl.schedules.upsert("b", { everyMs: 1_000, catchUp: "all" }, tick, { n: 1 });
      await clock.advance(2 * 3_600_000); // 7,201 slots due
      const report = await tl.schedules.fireDue();
      expect(report.created).toBe(MAX_CATCH_UP_RUNS);
      // slots are counted up to one more than the bound, not walked one by one
      expect(report.skipped).toBe(1);
      const slots = await slotsOf(tl, "b");
      expect(slots[0]).toBe(T0 + 7_200_000 - (MAX_CATCH_UP_RUNS - 1) * 1_000);
      expect(slots.at(-1)).toBe(T0 + 7_200_000);
    });

    it("a limit caps the catch-up too, and ends the schedule", async () => {
      const { clock, tl } = setup();
      await tl.schedules.upsert("l", { everyMs: 60_000, catchUp: "all", limit: 3 }, tick, {
        n: 1,
      });
      await clock.advance(600_000);
      await tl.schedules.fireDue();
      expect(await slotsOf(tl, "l")).toEqual([T0, T0 + 60_000, T0 + 120_000]);
      expect(await tl.schedules.get("l")).toMatchObject({ runs: 3, nextAt: null });
      await clock.advance(600_000);
      expect((await tl.schedules.fireDue()).created).toBe(0);
    });
  });

  it("an edit takes effect from the next slot; runs already put stay", async () => {
    const { clock, tl } = setup();
    await tl.schedules.upsert("e", { everyMs: 60_000 }, tick, { n: 1 });
    await fireEvery(tl, clock, 30_000, T0 + 90_000); // slots T0, T0+60s
    // edited at T0+90s: a new payload and interval (anchored where it was: T0)
    const edited = await tl.schedules.upsert("e", { everyMs: 20_000 }, tick, { n: 2 });
    expect(edited).toMatchObject({ runs: 2, lastSlotAt: T0 + 60_000, nextAt: T0 + 100_000 });
    await fireEvery(tl, clock, 10_000, T0 + 140_000);
    const jobs = new Map<string, unknown>();
    for await (const j of tl.lane("cron").list()) jobs.set(j.id, JSON.parse(j.payload).n);
    expect([...jobs.entries()].sort()).toEqual(
      [
        [`e@${T0}`, 1],
        [`e@${T0 + 60_000}`, 1],
        [`e@${T0 + 100_000}`, 2],
        [`e@${T0 + 120_000}`, 2],
        [`e@${T0 + 140_000}`, 2],
      ].sort(),
    );
    // an edit that would move the next slot before the last one handled does not re-run it
    const back = await tl.schedules.upsert("e", { everyMs: 60_000 }, tick, { n: 3 });
    expect(back.nextAt).toBe(T0 + 180_000);
  });

  it("a firing that races an edit loses its compare-and-set, and the edit wins", async () => {
    const { clock, tl, adapter } = setup();
    await tl.schedules.upsert("r", { everyMs: 60_000 }, tick, { n: 1 });
    const store = await adapter.lane("cron", { maxStalls: 1, historyLimit: 10 });
    const stale = (await store.getSchedule("r"))?.revision as number;
    await tl.schedules.upsert("r", { everyMs: 60_000 }, tick, { n: 2 });
    const result = await store.fireSchedule({ id: "r", data: "{}", nextAt: T0 + 60_000 }, stale, [
      { id: `r@${T0}`, task: "tick", payload: "{}", priority: 0, publishedAt: T0 },
    ]);
    expect(result).toEqual({ status: "stale" });
    expect(await jobIds(tl)).toEqual([]);
    await clock.advance(1);
    await tl.schedules.fireDue();
    const [job] = await Promise.all([tl.lane("cron").get(`r@${T0}`)]);
    expect(JSON.parse(job?.payload as string)).toEqual({ n: 2 });
  });

  it("three clients firing together put every slot exactly once", async () => {
    const { clock, tl, adapter } = setup();
    const clients = [tl];
    for (let i = 0; i < 2; i++) {
      const c = createTasklane({
        adapter,
        clock,
        closeAdapter: false,
        lanes: [{ name: "cron" }, { name: "side" }],
        tasks: [tick, other],
      });
      open.push(c);
      clients.push(c);
    }
    await tl.schedules.upsert("a", { cron: "* * * * * *", catchUp: "all" }, tick, { n: 1 });
    await tl.schedules.upsert("b", { everyMs: 7_000, catchUp: "all" }, tick, { n: 2 });
    let created = 0;
    for (let s = 0; s < 60; s++) {
      await clock.advance(1_000);
      const reports = await Promise.all(clients.map((c) => c.schedules.fireDue()));
      for (const r of reports) created += r.created;
    }
    const a = Array.from({ length: 61 }, (_, i) => T0 + i * 1_000);
    const b = Array.from({ length: 9 }, (_, i) => T0 + i * 7_000);
    expect(await slotsOf(tl, "a")).toEqual(a);
    expect(await slotsOf(tl, "b")).toEqual(b);
    expect(created).toBe(a.length + b.length);
  });

  it("get, list, pause, resume, remove; moving to another lane's task", async () => {
    const { clock, tl } = setup();
    await tl.schedules.upsert("p", { everyMs: 60_000 }, tick, { n: 1 }, { priority: 3 });
    await tl.schedules.upsert("q", { cron: "0 * * * *", timezone: "Asia/Tokyo" }, other, { n: 2 });
    const list = await tl.schedules.list();
    expect(list.map((s) => [s.id, s.lane, s.nextAt])).toEqual([
      ["p", "cron", T0],
      ["q", "side", T0],
    ]);
    expect(list[0]?.jobOptions).toEqual({ priority: 3 });
    await tl.schedules.fireDue();
    expect((await tl.lane("cron").get(`p@${T0}`))?.priority).toBe(3);

    expect(await tl.schedules.pause("p")).toMatchObject({ paused: true, nextAt: null });
    await clock.advance(180_000);
    expect((await tl.schedules.fireDue()).created).toBe(0);
    // slots while paused are not caught up: the next one from now
    expect(await tl.schedules.resume("p")).toMatchObject({ paused: false, nextAt: T0 + 180_000 });
    expect(await tl.schedules.pause("nope")).toBeUndefined();

    // the same id with a task of another lane: it moves
    await tl.schedules.upsert("p", { everyMs: 60_000 }, other, { n: 3 });
    expect((await tl.schedules.list()).map((s) => [s.id, s.lane])).toEqual([
      ["p", "side"],
      ["q", "side"],
    ]);
    expect(await tl.schedules.remove("p")).toBe(true);
    expect(await tl.schedules.remove("p")).toBe(false);
    expect(await tl.schedules.get("p")).toBeUndefined();
    // jobs it put stay
    expect(await jobIds(tl)).toEqual([`p@${T0}`]);
  });

  it("a schedule with unreadable data is set aside with an error event, the others fire", async () => {
    const { clock, tl, adapter } = setup();
    const store = await adapter.lane("cron", { maxStalls: 1, historyLimit: 10 });
    const errors: unknown[] = [];
    tl.events.on("error", (e) => errors.push(e));
    // more unreadable ones than a page of due schedules: they must not starve the good one
    for (let i = 0; i < 150; i++) {
      await store.putSchedule({ id: `bad${i}`, data: "{not json", nextAt: T0 - 1_000 });
    }
    await tl.schedules.upsert("good", { everyMs: 60_000 }, tick, { n: 1 });
    await clock.advance(1);
    await tl.schedules.fireDue();
    expect(await slotsOf(tl, "good")).toEqual([T0]);
    expect(errors).toHaveLength(150);
    expect(await store.getSchedule("bad0")).toEqual({
      id: "bad0",
      data: "{not json",
      nextAt: null,
      revision: 2,
    });
    expect(await store.nextScheduleAt()).toBe(T0 + 60_000);
  });

  it("a schedule moved to a task of another lane keeps its count and last slot", async () => {
    const { clock, tl } = setup();
    await tl.schedules.upsert("m", { everyMs: 60_000 }, tick, { n: 1 });
    await tl.schedules.fireDue(); // T0 in lane cron
    await clock.advance(30_000);
    const moved = await tl.schedules.upsert("m", { everyMs: 60_000 }, other, { n: 2 });
    expect(moved).toMatchObject({ lane: "side", runs: 1, lastSlotAt: T0, nextAt: T0 + 60_000 });
    await clock.advance(30_000);
    await tl.schedules.fireDue();
    expect(await slotsOf(tl, "m", "cron")).toEqual([T0]);
    expect(await slotsOf(tl, "m", "side")).toEqual([T0 + 60_000]);
  });

  it("end to end across both DST changes in Berlin and New York: each slot once", async () => {
    const cases = [
      {
        zone: "Europe/Berlin",
        cron: "30 2 * * *",
        from: Date.UTC(2026, 2, 28),
        to: Date.UTC(2026, 2, 30, 12),
        want: ["2026-03-28T01:30:00.000Z", "2026-03-29T01:00:00.000Z", "2026-03-30T00:30:00.000Z"],
      },
      {
        zone: "Europe/Berlin",
        cron: "*/30 2 * * *",
        from: Date.UTC(2026, 9, 24, 23),
        to: Date.UTC(2026, 9, 25, 3),
        // 02:00 and 02:30 twice: CEST, then CET
        want: [
          "2026-10-25T00:00:00.000Z",
          "2026-10-25T00:30:00.000Z",
          "2026-10-25T01:00:00.000Z",
          "2026-10-25T01:30:00.000Z",
        ],
      },
      {
        zone: "America/New_York",
        cron: "30 2 * * *",
        from: Date.UTC(2026, 2, 7, 12),
        to: Date.UTC(2026, 2, 9, 12),
        want: ["2026-03-08T07:00:00.000Z", "2026-03-09T06:30:00.000Z"],
      },
      {
        zone: "America/New_York",
        cron: "30 1 * * *",
        from: Date.UTC(2026, 9, 31, 12),
        to: Date.UTC(2026, 10, 2, 12),
        want: ["2026-11-01T05:30:00.000Z", "2026-11-02T06:30:00.000Z"],
      },
    ];
    for (const c of cases) {
      const { clock, tl } = setup(c.from);
      await tl.schedules.upsert("dst", { cron: c.cron, timezone: c.zone }, tick, { n: 1 });
      // fired every 10 minutes, as a worker would (each slot on time: catchUp never acts)
      await fireEvery(tl, clock, 600_000, c.to);
      expect((await slotsOf(tl, "dst")).map(iso)).toEqual(c.want);
    }
  });

  it("an upsert in this process sets a running worker's timer to the new slot at once", async () => {
    const { clock, tl } = setup();
    const w = tl.worker({ schedulePollMs: 60_000, lanes: ["cron"] });
    await w.start();
    await clock.advance(1_000); // the worker looked: no schedule; next look in 60 s
    await tl.schedules.upsert("soon", { everyMs: 60_000, startAt: T0 + 1_500 }, tick, { n: 1 });
    await settle(); // the worker's look at the lane (async) sets its timer
    await clock.advance(500);
    await settle(); // and the firing it started ends
    expect(await tl.schedules.get("soon")).toMatchObject({ runs: 1, nextAt: T0 + 61_500 });
    await tl.schedules.pause("soon");
    await clock.advance(60_000);
    // paused: no run; resumed here: the worker looks again at once
    expect((await tl.schedules.get("soon"))?.runs).toBe(1);
    await tl.schedules.upsert("later", { everyMs: 60_000, startAt: T0 + 70_000 }, tick, { n: 2 });
    await settle();
    await clock.advance(8_000);
    await settle();
    expect((await tl.schedules.get("later"))?.runs).toBe(0);
    await clock.advance(500);
    await settle();
    expect((await tl.schedules.get("later"))?.runs).toBe(1);
    await w.stop({ graceMs: 0 });
  });
});
