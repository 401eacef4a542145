import { createManualClock, createTasklane, defineTask, type Tasklane } from "@tasklane/core";
import type { LaneStore, NewJob, ScheduleRecord } from "@tasklane/core/adapter";
import { afterEach, describe, expect, it } from "vitest";
import { z } from "zod";
import { type Harness, method, need } from "./harness.ts";
import type { ConformanceOptions } from "./options.ts";

/** The schedule methods of a lane whose adapter declares capability `schedules`. */
function schedulesOf(lane: LaneStore) {
  const names = [
    "putSchedule",
    "getSchedule",
    "listSchedules",
    "removeSchedule",
    "dueSchedules",
    "nextScheduleAt",
    "fireSchedule",
  ] as const;
  for (const name of names) {
    if (typeof lane[name] !== "function") {
      throw new Error(`lane "${lane.name}" has no ${name}() although it declares schedules`);
    }
  }
  return lane as LaneStore & Required<Pick<LaneStore, (typeof names)[number]>>;
}

/**
 * Recurring schedules (capability `schedules`): the store's compare-and-set and ordering,
 * a firing that commits its write and its jobs together, and the client's schedules on
 * top (their time is the client's clock: a manual one here, whatever the backend's).
 */
export function registerScheduleTests(get: () => Harness, _options: ConformanceOptions): void {
  describe("schedules", () => {
    const open: Tasklane[] = [];
    afterEach(async () => {
      await Promise.all(open.splice(0).map((tl) => tl.close({ graceMs: 0 })));
    });

    const job = (h: Harness, id: string): NewJob => h.job({ id, freshId: false });

    it("putSchedule is a compare-and-set on the revision; get, remove", async (ctx) => {
      const h = get();
      need(h.caps, ctx, "schedules");
      const lane = schedulesOf(await h.freshLane());
      expect(await lane.getSchedule("a")).toBeUndefined();
      expect(await lane.putSchedule({ id: "a", data: "one", nextAt: 1_000 }, 0)).toEqual({
        status: "ok",
        revision: 1,
      });
      expect(await lane.putSchedule({ id: "a", data: "two", nextAt: 2_000 }, 0)).toEqual({
        status: "stale",
      });
      expect(await lane.putSchedule({ id: "a", data: "two", nextAt: 2_000 }, 7)).toEqual({
        status: "stale",
      });
      expect(await lane.getSchedule("a")).toEqual({
        id: "a",
        data: "one",
        nextAt: 1_000,
        revision: 1,
      });
      expect(await lane.putSchedule({ id: "a", data: "two\nlines", nextAt: null }, 1)).toEqual({
        status: "ok",
        revision: 2,
      });
      expect(await lane.putSchedule({ id: "a", data: "three", nextAt: 5 })).toEqual({
        status: "ok",
        revision: 3,
      });
      expect(await lane.getSchedule("a")).toEqual({
        id: "a",
        data: "three",
        nextAt: 5,
        revision: 3,
      });
      expect(await lane.removeSchedule("a")).toBe(true);
      expect(await lane.removeSchedule("a")).toBe(false);
      expect(await lane.getSchedule("a")).toBeUndefined();
      expect(await lane.nextScheduleAt()).toBeUndefined();
    });

    it("dueSchedules: only nextAt <= now, earliest first, at most limit; nextScheduleAt", async (ctx) => {
      const h = get();
      need(h.caps, ctx, "schedules");
      const lane = schedulesOf(await h.freshLane());
      for (const [id, nextAt] of [
        ["late", 5_000],
        ["early", 1_000],
        ["never", null],
        ["mid", 3_000],
        ["future", 9_000],
      ] as const) {
        await lane.putSchedule({ id, data: id, nextAt });
      }
      expect(await lane.nextScheduleAt()).toBe(1_000);
      const ids = (rs: ScheduleRecord[]) => rs.map((r) => r.id);
      expect(ids(await lane.dueSchedules(5_000, 10))).toEqual(["early", "mid", "late"]);
      expect(ids(await lane.dueSchedules(5_000, 2))).toEqual(["early", "mid"]);
      expect(ids(await lane.dueSchedules(999, 10))).toEqual([]);
      // an update moves it in the index; a paused one (nextAt null) leaves it
      await lane.putSchedule({ id: "early", data: "early", nextAt: 20_000 });
      await lane.putSchedule({ id: "mid", data: "mid", nextAt: null });
      expect(await lane.nextScheduleAt()).toBe(5_000);
      expect(ids(await lane.dueSchedules(30_000, 10))).toEqual(["late", "future", "early"]);
      expect((await lane.dueSchedules(30_000, 10))[0]).toEqual({
        id: "late",
        data: "late",
        nextAt: 5_000,
        revision: 1,
      });
    });

    it("listSchedules pages through every schedule once", async (ctx) => {
      const h = get();
      need(h.caps, ctx, "schedules");
      const lane = schedulesOf(await h.freshLane());
      const all = Array.from({ length: 250 }, (_, i) => `s${i}`);
      await Promise.all(all.map((id, i) => lane.putSchedule({ id, data: id, nextAt: i })));
      const seen: string[] = [];
      let cursor: string | undefined;
      let pages = 0;
      do {
        const page = await lane.listSchedules(cursor);
        for (const r of page.records) {
          expect(r.data).toBe(r.id);
          seen.push(r.id);
        }
        cursor = page.cursor;
        pages++;
      } while (cursor !== undefined && pages < 1_000);
      expect(seen.sort()).toEqual([...all].sort());
    });

    it("fireSchedule writes the schedule and puts its jobs together, or nothing when stale", async (ctx) => {
      const h = get();
      need(h.caps, ctx, "schedules");
      const lane = schedulesOf(await h.freshLane());
      await lane.putSchedule({ id: "f", data: "v1", nextAt: 1_000 }, 0);
      const stale = await lane.fireSchedule({ id: "f", data: "v2", nextAt: 2_000 }, 5, [
        job(h, "f@1000"),
      ]);
      expect(stale).toEqual({ status: "stale" });
      expect((await lane.counts()).waiting).toBe(0);
      expect((await lane.getSchedule("f"))?.data).toBe("v1");

      const fired = await lane.fireSchedule({ id: "f", data: "v2", nextAt: 2_000 }, 1, [
        job(h, "f@1000"),
        job(h, "f@1500"),
      ]);
      expect(fired).toEqual({
        status: "ok",
        revision: 2,
        results: [
          { id: "f@1000", status: "created" },
          { id: "f@1500", status: "created" },
        ],
      });
      expect(await lane.getSchedule("f")).toEqual({
        id: "f",
        data: "v2",
        nextAt: 2_000,
        revision: 2,
      });
      // the same slot fired again (a process that read revision 2 late): de-duplicated
      const again = await lane.fireSchedule({ id: "f", data: "v3", nextAt: null }, 2, [
        job(h, "f@1500"),
      ]);
      expect(again).toEqual({
        status: "ok",
        revision: 3,
        results: [{ id: "f@1500", status: "duplicate" }],
      });
      expect((await lane.counts()).waiting).toBe(2);
      expect(await lane.nextScheduleAt()).toBeUndefined();
      const taken = await h.reserveAll(lane, 2, 20 * h.unit);
      expect(taken.map((j) => j.id).sort()).toEqual(["f@1000", "f@1500"]);
    });

    /** A client on fresh lanes with a manual clock of its own (the schedules' time). */
    const client = (h: Harness, namespace: string, clock = createManualClock(h.now())) => {
      const task = defineTask({
        name: "beat",
        lane: "cron",
        schema: z.object({ n: z.number() }),
        run: async () => {},
      });
      const tl = createTasklane({
        adapter: h.adapter,
        closeAdapter: false,
        clock,
        namespace,
        lanes: [{ name: "cron", leaseMs: 20 * h.unit }],
        tasks: [task],
      });
      open.push(tl);
      return { tl, task, clock };
    };
    const namespaceOf = (h: Harness) => h.uniqueName("ns").replace(/[^A-Za-z0-9_-]/g, "");
    /** The ids of the waiting jobs in lane cron of namespace `ns` (capability list). */
    const waitingIds = async (h: Harness, ns: string): Promise<string[]> => {
      const store = await h.adapter.lane(`${ns}_cron`, { maxStalls: 1, historyLimit: 100 });
      const ids: string[] = [];
      for await (const j of method(store, "list")({ state: "waiting" })) ids.push(j.id);
      return ids.sort();
    };

    it("clients racing on one schedule put every slot exactly once", async (ctx) => {
      const h = get();
      need(h.caps, ctx, "schedules", "list");
      const ns = namespaceOf(h);
      const start = Math.ceil(h.now() / 60_000) * 60_000;
      const clock = createManualClock(start);
      const clients = [client(h, ns, clock), client(h, ns, clock), client(h, ns, clock)];
      const [first] = clients;
      if (!first) throw new Error("no client");
      await first.tl.schedules.upsert("s", { cron: "*/5 * * * * *", catchUp: "all" }, first.task, {
        n: 1,
      });
      let created = 0;
      for (let step = 0; step < 40; step++) {
        await clock.advance(1_500);
        const reports = await Promise.all(clients.map((c) => c.tl.schedules.fireDue()));
        for (const r of reports) created += r.created;
      }
      // 60 s of slots every 5 s from start: 0, 5, ... 60 (the last at start + 60 s)
      const expected = Array.from({ length: 13 }, (_, i) => `s@${start + i * 5_000}`);
      expect(await waitingIds(h, ns)).toEqual(expected.sort());
      expect(created).toBe(13);
      expect(await first.tl.schedules.get("s")).toMatchObject({
        runs: 13,
        lastSlotAt: start + 60_000,
      });
    });

    it("catch-up policies after downtime: skip, one, all", async (ctx) => {
      const h = get();
      need(h.caps, ctx, "schedules", "list");
      const start = Math.ceil(h.now() / 60_000) * 60_000;
      const got: Record<string, number[]> = {};
      for (const catchUp of ["skip", "one", "all"] as const) {
        const ns = namespaceOf(h);
        const { tl, task, clock } = client(h, ns, createManualClock(start));
        const spec = {
          everyMs: 60_000,
          catchUp,
          ...(catchUp === "skip" ? { graceMs: 10_000 } : {}),
        };
        await tl.schedules.upsert("c", spec, task, { n: 1 });
        await tl.schedules.fireDue();
        await clock.advance(5 * 60_000 + 30_000);
        await tl.schedules.fireDue();
        const slots = (await waitingIds(h, ns)).map((id) => Number(id.slice(2)) - start);
        got[catchUp] = slots.sort((a, b) => a - b);
        expect((await tl.schedules.get("c"))?.nextAt).toBe(start + 6 * 60_000);
      }
      expect(got).toEqual({
        skip: [0],
        one: [0, 300_000],
        all: [0, 60_000, 120_000, 180_000, 240_000, 300_000],
      });
    });

    it("a schedule's runs wait in the fair group its job options name", async (ctx) => {
      const h = get();
      need(h.caps, ctx, "schedules", "groups");
      const task = defineTask({
        name: "beat",
        lane: "cron",
        schema: z.object({ n: z.number() }),
        run: async () => {},
      });
      const ns = namespaceOf(h);
      const tl = createTasklane({
        adapter: h.adapter,
        closeAdapter: false,
        clock: createManualClock(h.now()),
        namespace: ns,
        lanes: [{ name: "cron", leaseMs: 20 * h.unit, groups: { concurrency: 1 } }],
        tasks: [task],
      });
      open.push(tl);
      // A group's limit is a grouped lane's rule: a run in group "t" waits while t's job runs.
      await tl.publish(task, { n: 0 }, { jobId: "busy", group: "t" });
      const store = await h.adapter.lane(`${ns}_cron`, {
        maxStalls: 1,
        historyLimit: 100,
        groups: { concurrency: 1 },
      });
      const held = await store.reserve({ limit: 10, leaseMs: 20 * h.unit, waitMs: 0 });
      expect(held.jobs.map((j) => j.id)).toEqual(["busy"]);
      await tl.schedules.upsert("g", { everyMs: 60_000 }, task, { n: 1 }, { group: "t" });
      expect((await tl.schedules.get("g"))?.jobOptions).toEqual({ group: "t" });
      expect((await tl.schedules.fireDue()).created).toBe(1);
      expect((await store.counts()).waiting).toBe(1);
      const runId = `g@${(await tl.schedules.get("g"))?.lastSlotAt}`;
      expect((await tl.lane("cron").get(runId))?.group).toBe("t");
      expect((await store.reserve({ limit: 10, leaseMs: 20 * h.unit, waitMs: 0 })).jobs).toEqual(
        [],
      );
      await store.ack([held.jobs[0]!.lock]);
      const next = await store.reserve({ limit: 10, leaseMs: 20 * h.unit, waitMs: 0 });
      expect(next.jobs.map((j) => j.id)).toEqual([runId]);
    });

    it("a worker fires the schedules of its lanes and runs them", async (ctx) => {
      const h = get();
      need(h.caps, ctx, "schedules");
      const ran: string[] = [];
      const task = defineTask({
        name: "beat",
        lane: "cron",
        schema: z.object({ n: z.number() }),
        run: async (_p, c) => {
          ran.push(c.jobId);
        },
      });
      const tl = createTasklane({
        adapter: h.adapter,
        closeAdapter: false,
        clock: h.clock,
        namespace: namespaceOf(h),
        lanes: [{ name: "cron", leaseMs: 20 * h.unit, longPollMs: h.unit }],
        tasks: [task],
      });
      open.push(tl);
      const startAt = h.now() + h.unit;
      await tl.schedules.upsert("w", { everyMs: 1_000, startAt, limit: 2 }, task, { n: 1 });
      const worker = tl.worker({ schedulePollMs: 100 });
      await worker.start();
      await h.waitFor(() => ran.length >= 2, "two scheduled runs");
      await worker.stop();
      expect(ran).toEqual([`w@${startAt}`, `w@${startAt + 1_000}`]);
      expect(await tl.schedules.get("w")).toMatchObject({ runs: 2, nextAt: null });
    });
  });
}
