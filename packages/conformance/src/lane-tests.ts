import {
  type AdapterEvent,
  ClosedError,
  isLifecycleEvent,
  type LaneCounts,
  type LaneStore,
  type ReservedJob,
  type ReserveResult,
} from "@tasklane/core/adapter";
import { describe, expect, it } from "vitest";
import { type Harness, method, need, subscribeOf } from "./harness.ts";
import type { ConformanceOptions } from "./options.ts";

/** Adapter-level behaviour: the LaneStore contract of docs/adapter-contract.md. */
export function registerLaneTests(get: () => Harness, options: ConformanceOptions): void {
  describe("lane", () => {
    it("round-trips a job through put, reserve and ack", async () => {
      const h = get();
      const q = await h.freshLane();
      const job = h.job({
        task: "send-email",
        payload: '{"to":"a@example.com","n":"ü€😀"}',
        appData: '{"env":"test"}',
      });
      expect(await q.put([job])).toEqual([{ id: job.id, status: "created" }]);
      const [got] = await h.reserveAll(q, 1, 10 * h.unit);
      expect(got).toMatchObject({
        id: job.id,
        task: "send-email",
        payload: job.payload,
        appData: job.appData,
        attempt: 1,
      });
      expect(got?.malformed).toBeUndefined();
      expect(got?.lock.jobId).toBe(job.id);
      expect(got?.lock.token).toBeTruthy();
      expect(got?.lock.expiresAt).toBeGreaterThan(h.now());
      expect((await q.reserve({ limit: 5, leaseMs: h.unit, waitMs: 0 })).jobs).toEqual([]);
      expect(await q.ack([(got as ReservedJob).lock])).toEqual(["ok"]);
      // Fencing: a second ack of the same reservation changes nothing.
      expect(await q.ack([(got as ReservedJob).lock])).toEqual(["lost"]);
    });

    it("hands out higher priority first, FIFO among equals (capability ordered)", async (ctx) => {
      const h = get();
      need(h.caps, ctx, "priorities", "ordered");
      const q = await h.freshLane();
      const ids: Record<string, string> = {};
      for (const [name, priority] of [
        ["a", 0],
        ["b", 5],
        ["c", 0],
        ["d", 10],
        ["e", 5],
      ] as const) {
        const job = h.job({ priority });
        ids[job.id] = name;
        await q.put([job]);
      }
      const got = await h.reserveAll(q, 5, 10 * h.unit);
      expect(got.map((j) => ids[j.id])).toEqual(["d", "b", "e", "a", "c"]);
    });

    it("hands out priority 1000 before 0 before -1000 (capability priorities)", async (ctx) => {
      const h = get();
      need(h.caps, ctx, "priorities");
      // The promise every adapter with priorities keeps, also one with only coarse order
      // (SQS priority bands): the extremes always land in different bands.
      const q = await h.freshLane();
      const low = h.job({ priority: -1000 });
      const mid = h.job({ priority: 0 });
      const high = h.job({ priority: 1000 });
      await q.put([low]);
      await q.put([mid]);
      await q.put([high]);
      const order: string[] = [];
      await h.waitFor(async () => {
        const { jobs } = await q.reserve({ limit: 1, leaseMs: 30 * h.unit, waitMs: 0 });
        order.push(...jobs.map((j) => j.id));
        return order.length >= 3;
      }, "three jobs, one at a time");
      expect(order).toEqual([high.id, mid.id, low.id]);
    });

    it("holds a delayed job until its runAt", async () => {
      const h = get();
      const q = await h.freshLane();
      const runAt = h.now() + 3 * h.unit;
      const job = h.job({ runAt });
      await q.put([job]);
      expect((await q.reserve({ limit: 1, leaseMs: 10 * h.unit, waitMs: 0 })).jobs).toEqual([]);
      if (h.caps.exactCounts) expect((await q.counts()).delayed).toBe(1);
      const got = await h.waitFor(
        async () => (await q.reserve({ limit: 1, leaseMs: 10 * h.unit, waitMs: 0 })).jobs[0],
        "the delayed job",
      );
      expect(got.id).toBe(job.id);
      // Against runAt itself: a put slowed by a busy machine must not count against it.
      expect(h.now()).toBeGreaterThanOrEqual(runAt - h.caps.timeResolutionMs);
    });

    it("refuses a duplicate job id, also inside one batch", async (ctx) => {
      const h = get();
      need(h.caps, ctx, "dedup");
      const q = await h.freshLane();
      const job = h.job();
      const other = h.job();
      expect(await q.put([job, { ...job, payload: '"second"' }, other])).toEqual([
        { id: job.id, status: "created" },
        { id: job.id, status: "duplicate" },
        { id: other.id, status: "created" },
      ]);
      expect(await q.put([job])).toEqual([{ id: job.id, status: "duplicate" }]);
      const got = await h.reserveAll(q, 2, 10 * h.unit);
      expect(got.map((j) => j.id).sort()).toEqual([job.id, other.id].sort());
      expect(got.find((j) => j.id === job.id)?.payload).toBe(job.payload);
    });

    it("still refuses a caller's duplicate id in a batch of fresh (client-generated) ids", async (ctx) => {
      const h = get();
      need(h.caps, ctx, "dedup");
      const q = await h.freshLane();
      // freshId lets an adapter skip the check for an id the client generated; an id the
      // caller chose (no freshId) must still be looked up, also when the rest are fresh.
      const mine = h.job();
      await q.put([mine]);
      const a = h.job({ freshId: true });
      const b = h.job({ freshId: true });
      expect(await q.put([a, { ...mine, payload: '"second"' }, b])).toEqual([
        { id: a.id, status: "created" },
        { id: mine.id, status: "duplicate" },
        { id: b.id, status: "created" },
      ]);
      const got = await h.reserveAll(q, 3, 10 * h.unit);
      expect(got.map((j) => j.id).sort()).toEqual([mine.id, a.id, b.id].sort());
      expect(got.find((j) => j.id === mine.id)?.payload).toBe(mine.payload);
    });

    it("gives parallel reserves disjoint jobs", async () => {
      const h = get();
      const q = await h.freshLane();
      const jobs = Array.from({ length: 30 }, () => h.job());
      for (let i = 0; i < jobs.length; i += h.caps.maxBatch)
        await q.put(jobs.slice(i, i + h.caps.maxBatch));
      const seen: string[] = [];
      await h.waitFor(async () => {
        const batches = await Promise.all(
          Array.from({ length: 4 }, () =>
            q.reserve({ limit: Math.min(10, h.caps.maxBatch), leaseMs: 30 * h.unit, waitMs: 0 }),
          ),
        );
        for (const b of batches) seen.push(...b.jobs.map((j) => j.id));
        return seen.length >= jobs.length;
      }, "all jobs reserved");
      expect(seen.length).toBe(jobs.length);
      expect(new Set(seen).size).toBe(jobs.length);
    });

    it("re-delivers a job whose lease expired, with attempt + 1, and fences the old lock", async () => {
      const h = get();
      const q = await h.freshLane();
      await q.put([h.job()]);
      const [first] = await h.reserveAll(q, 1, h.unit);
      const second = await h.waitFor(
        async () => (await q.reserve({ limit: 1, leaseMs: 10 * h.unit, waitMs: 0 })).jobs[0],
        "re-delivery",
      );
      expect(second.id).toBe(first?.id);
      expect(second.attempt).toBe(2);
      expect(second.lock.token).not.toBe(first?.lock.token);
      const stale = (first as ReservedJob).lock;
      expect(await q.ack([stale])).toEqual(["lost"]);
      expect(await q.extend([stale], h.unit)).toEqual(["lost"]);
      expect(await q.ack([second.lock])).toEqual(["ok"]);
    });

    it("hands a job out exactly maxStalls + 1 times, then dead-letters it as stalled", async (ctx) => {
      const h = get();
      need(h.caps, ctx, "get");
      const q = await h.freshLane({ maxStalls: 1 });
      const put = h.job();
      await q.put([put]);
      const [first] = await h.reserveAll(q, 1, h.unit);
      expect(first?.attempt).toBe(1);
      // Stall 1 is tolerated: handed out again.
      const second = await h.waitFor(
        async () => (await q.reserve({ limit: 1, leaseMs: h.unit, waitMs: 0 })).jobs[0],
        "the second delivery",
      );
      expect(second.attempt).toBe(2);
      // Stall 2 exceeds maxStalls: once that lease has surely run out, the next reserve
      // dead-letters the job instead of handing it out a third time.
      await h.waitFor(
        () => h.now() > second.lock.expiresAt + h.caps.timeResolutionMs,
        "the second lease to run out",
      );
      expect((await q.reserve({ limit: 1, leaseMs: h.unit, waitMs: 0 })).jobs).toEqual([]);
      const info = await method(q, "get")(put.id);
      expect(info?.state).toBe("failed");
      expect(info?.attempt).toBe(2);
      expect(info?.error).toMatchObject({ name: "StalledError", reason: "stalled" });
    });

    it("marks a job whose lease ran out a suspect on every later delivery, a fresh one not (capability suspects)", async (ctx) => {
      const h = get();
      need(h.caps, ctx, "suspects");
      const q = await h.freshLane();
      const a = h.job();
      await q.put([a]);
      const [first] = await h.reserveAll(q, 1, h.unit);
      expect(first?.suspect).toBeUndefined();
      await h.waitFor(
        () => h.now() > (first as ReservedJob).lock.expiresAt + h.caps.timeResolutionMs,
        "the lease to run out",
      );
      const b = h.job();
      await q.put([b]);
      const both = await h.reserveAll(q, 2, 10 * h.unit);
      const again = both.find((j) => j.id === a.id) as ReservedJob;
      expect(again).toMatchObject({ attempt: 2, suspect: true });
      expect(both.find((j) => j.id === b.id)?.suspect).toBeUndefined();
      // Handed back unrun, it is still a suspect.
      expect(await q.release([{ lock: again.lock, uncounted: true }])).toEqual(["ok"]);
      const [third] = await h.reserveAll(q, 1, 10 * h.unit);
      expect(third).toMatchObject({ id: a.id, attempt: 2, suspect: true });
    });

    it("hands back prefetched deliveries whose lease ran out with no attempt spent and no stall (capability startNow)", async (ctx) => {
      const h = get();
      need(h.caps, ctx, "startNow", "suspects", "get");
      // maxStalls 0: one stall is fatal, so a prefetched job counted as a stall would die.
      const q = await h.freshLane({ maxStalls: 0 });
      const [a, b, c] = [h.job(), h.job(), h.job()];
      await q.put([a, b, c]);
      const { jobs } = await q.reserve({ limit: 3, leaseMs: h.unit, waitMs: 0, startNow: 1 });
      expect(jobs.map((j) => j.id).sort()).toEqual([a.id, b.id, c.id].sort());
      const started = jobs[0] as ReservedJob;
      const prefetched = jobs.slice(1).map((j) => j.id);
      await h.waitFor(
        () => h.now() > started.lock.expiresAt + h.caps.timeResolutionMs,
        "the leases to run out",
      );
      const back = await q.reserve({ limit: 3, leaseMs: 10 * h.unit, waitMs: 0 });
      expect(
        back.jobs
          .map((j) => ({ id: j.id, attempt: j.attempt, suspect: j.suspect }))
          .sort((x, y) => (x.id < y.id ? -1 : 1)),
      ).toEqual(prefetched.sort().map((id) => ({ id, attempt: 1, suspect: true })));
      const dead = await method(q, "get")(started.id);
      expect(dead).toMatchObject({ state: "failed", attempt: 1 });
      expect(dead?.error).toMatchObject({ name: "StalledError", reason: "stalled" });
    });

    it("counts a skipped delivery at the job's next stall: at most maxStalls + 1 runs (capability startNow)", async (ctx) => {
      const h = get();
      need(h.caps, ctx, "startNow", "suspects", "get");
      const q = await h.freshLane({ maxStalls: 1 });
      const a = h.job();
      await q.put([a]);
      // Prefetched (startNow 0): its lease runs out, a skip.
      const first = (await q.reserve({ limit: 1, leaseMs: h.unit, waitMs: 0, startNow: 0 }))
        .jobs[0] as ReservedJob;
      expect(first).toMatchObject({ id: a.id, attempt: 1 });
      const second = await h.waitFor(
        async () =>
          (await q.reserve({ limit: 1, leaseMs: h.unit, waitMs: 0, startNow: 0 })).jobs[0],
        "the second delivery",
      );
      // A suspect counts as started whatever startNow says.
      expect(second).toMatchObject({ id: a.id, attempt: 1, suspect: true });
      await h.waitFor(
        () => h.now() > second.lock.expiresAt + h.caps.timeResolutionMs,
        "the second lease to run out",
      );
      // Its stall counts the skipped delivery too: 2 stalls, more than maxStalls 1.
      expect((await q.reserve({ limit: 1, leaseMs: h.unit, waitMs: 0 })).jobs).toEqual([]);
      const info = await method(q, "get")(a.id);
      expect(info).toMatchObject({ state: "failed", attempt: 1 });
      expect(info?.error).toMatchObject({ name: "StalledError", reason: "stalled" });
    });

    it("extend moves the lease's expiry", async () => {
      const h = get();
      const q = await h.freshLane();
      await q.put([h.job()]);
      const [job] = await h.reserveAll(q, 1, 2 * h.unit);
      await h.pass(h.unit);
      expect(await q.extend([(job as ReservedJob).lock], 6 * h.unit)).toEqual(["ok"]);
      // Past the original expiry, the job is still ours: nobody else gets it.
      await h.pass(2 * h.unit);
      expect((await q.reserve({ limit: 1, leaseMs: h.unit, waitMs: 0 })).jobs).toEqual([]);
      expect(await q.ack([(job as ReservedJob).lock])).toEqual(["ok"]);
    });

    it("nack with runAt schedules the next attempt", async () => {
      const h = get();
      const q = await h.freshLane();
      await q.put([h.job()]);
      const [job] = await h.reserveAll(q, 1, 10 * h.unit);
      const runAt = h.now() + 3 * h.unit;
      const error = { name: "Error", message: "boom", reason: "error" as const };
      expect(await q.nack([{ lock: (job as ReservedJob).lock, runAt, error }])).toEqual(["ok"]);
      expect((await q.reserve({ limit: 1, leaseMs: h.unit, waitMs: 0 })).jobs).toEqual([]);
      const again = await h.waitFor(
        async () => (await q.reserve({ limit: 1, leaseMs: 10 * h.unit, waitMs: 0 })).jobs[0],
        "the retried job",
      );
      expect(again.id).toBe(job?.id);
      expect(again.attempt).toBe(2);
      expect(h.now()).toBeGreaterThanOrEqual(runAt - h.caps.timeResolutionMs);
      // The old lock is fenced off once the job was handed out again.
      expect(await q.ack([(job as ReservedJob).lock])).toEqual(["lost"]);
    });

    it("release hands a job back at once, its delivery not counted", async () => {
      const h = get();
      const q = await h.freshLane();
      await q.put([h.job()]);
      // A lease far longer than the wait below: only the release can bring the job back.
      const [job] = await h.reserveAll(q, 1, 100 * h.unit);
      const lock = (job as ReservedJob).lock;
      expect(job?.attempt).toBe(1);
      expect(await q.release([{ lock, uncounted: true }])).toEqual(["ok"]);
      const again = await h.waitFor(
        async () => (await q.reserve({ limit: 1, leaseMs: 10 * h.unit, waitMs: 0 })).jobs[0],
        "the released job",
        10 * h.unit,
      );
      expect(again.id).toBe(job?.id);
      expect(again.attempt).toBe(1);
      // The released reservation is over: its lock is fenced off.
      expect(await q.release([{ lock, uncounted: true }])).toEqual(["lost"]);
      expect(await q.ack([lock])).toEqual(["lost"]);
      expect(await q.ack([again.lock])).toEqual(["ok"]);
    });

    it("fences a lock whose token is not the job's current one, also on a job with no history", async (ctx) => {
      const h = get();
      need(h.caps, ctx, "fencing");
      // historyLimit 0: nothing but the state is ever written for these jobs, so a backend
      // with a fast path for history-free records (Redis) takes it for every call below.
      const q = await h.freshLane({ historyLimit: 0 });
      const a = h.job();
      const b = h.job();
      await q.put([a, b]);
      const taken = await h.reserveAll(q, 2, 100 * h.unit);
      const lockOf = (id: string) => (taken.find((j) => j.id === id) as ReservedJob).lock;
      const [la, lb] = [lockOf(a.id), lockOf(b.id)];
      // A token taken from another job's reservation is not this job's.
      const foreign = { ...la, token: lb.token };
      const error = { name: "Error", message: "x", reason: "error" as const };
      expect(await q.ack([foreign])).toEqual(["lost"]);
      expect(await q.extend([foreign], h.unit)).toEqual(["lost"]);
      expect(await q.nack([{ lock: foreign, dead: true, error }])).toEqual(["lost"]);
      // A token of this job's own earlier reservation is stale once it was handed out again.
      expect(await q.release([{ lock: la, uncounted: true }])).toEqual(["ok"]);
      const [again] = await h.reserveAll(q, 1, 100 * h.unit);
      expect(again?.id).toBe(a.id);
      expect(await q.ack([la])).toEqual(["lost"]);
      expect(await q.extend([la], h.unit)).toEqual(["lost"]);
      expect(await q.nack([{ lock: la, runAt: h.now(), error }])).toEqual(["lost"]);
      expect(await q.ack([(again as ReservedJob).lock, lb])).toEqual(["ok", "ok"]);
      expect((await q.reserve({ limit: 2, leaseMs: h.unit, waitMs: 0 })).jobs).toEqual([]);
    });

    /** A job put, reserved and dead-lettered with `error`; returns the put job. */
    const deadJob = async (h: Harness, q: LaneStore) => {
      const put = h.job();
      await q.put([put]);
      const [job] = await h.reserveAll(q, 1, 10 * h.unit);
      const error = {
        name: "TypeError",
        message: "bad thing",
        stack: "TypeError: bad thing\n    at x",
        reason: "error" as const,
      };
      expect(await q.nack([{ lock: (job as ReservedJob).lock, dead: true, error }])).toEqual([
        "ok",
      ]);
      return put;
    };

    it("dead-letters a job: it is not handed out again", async () => {
      const h = get();
      const q = await h.freshLane();
      await deadJob(h, q);
      expect((await q.reserve({ limit: 1, leaseMs: h.unit, waitMs: 0 })).jobs).toEqual([]);
    });

    it("counts a dead job as failed (capability count)", async (ctx) => {
      const h = get();
      need(h.caps, ctx, "count");
      const q = await h.freshLane();
      await deadJob(h, q);
      await h.waitFor(async () => (await q.counts()).failed === 1, "failed count 1");
    });

    it("keeps a dead job's error (capability get)", async (ctx) => {
      const h = get();
      need(h.caps, ctx, "get");
      const q = await h.freshLane();
      const put = await deadJob(h, q);
      const info = await method(q, "get")(put.id);
      expect(info?.state).toBe("failed");
      expect(info?.attempt).toBe(1);
      expect(info?.error).toMatchObject({
        name: "TypeError",
        message: "bad thing",
        reason: "error",
      });
    });

    it("retries a dead job by hand, from attempt 1 again (capability retryFailed)", async (ctx) => {
      const h = get();
      need(h.caps, ctx, "retryFailed");
      const q = await h.freshLane();
      const put = await deadJob(h, q);
      const retryFailed = method(q, "retryFailed");
      expect(
        await h.waitFor(
          async () => (await retryFailed([put.id])) || false,
          "retryFailed to move the job",
        ),
      ).toBe(1);
      const again = await h.waitFor(
        async () => (await q.reserve({ limit: 1, leaseMs: 10 * h.unit, waitMs: 0 })).jobs[0],
        "the job retried by hand",
      );
      expect(again.id).toBe(put.id);
      expect(again.payload).toBe(put.payload);
      expect(again.attempt).toBe(1);
      expect(await retryFailed([put.id])).toBe(0);
    });

    it("cancels waiting jobs, and reports unknown and finished ones", async (ctx) => {
      const h = get();
      need(h.caps, ctx, "cancel");
      const q = await h.freshLane();
      const cancel = method(q, "cancel");
      const a = h.job();
      const b = h.job({ runAt: h.now() + 100 * h.unit });
      await q.put([a, b]);
      expect(await cancel([a.id, b.id, "no-such-job"])).toEqual([
        "canceled",
        "canceled",
        "not_found",
      ]);
      expect((await q.reserve({ limit: 5, leaseMs: h.unit, waitMs: 0 })).jobs).toEqual([]);
      expect(await cancel([a.id])).toEqual(["finished"]);
      if (h.caps.get) expect((await method(q, "get")(a.id))?.state).toBe("canceled");
    });

    it("cancels an active job: the holder learns it from its next call and from an event", async (ctx) => {
      const h = get();
      need(h.caps, ctx, "cancelActive");
      const q = await h.freshLane();
      const put = h.job();
      await q.put([put]);
      const events: AdapterEvent[] = [];
      const unsubscribe = h.caps.subscribe
        ? await subscribeOf(h.adapter)((e) => events.push(e))
        : undefined;
      try {
        const [job] = await h.reserveAll(q, 1, 30 * h.unit);
        expect(await method(q, "cancel")([put.id])).toEqual(["canceled"]);
        expect(await q.extend([(job as ReservedJob).lock], h.unit)).toEqual(["canceled"]);
        expect(await q.ack([(job as ReservedJob).lock])).toEqual(["canceled"]);
        if (h.caps.subscribe) {
          await h.waitFor(
            () =>
              events.some((e) => e.type === "canceled" && e.jobId === put.id && e.lane === q.name),
            "the canceled event",
          );
        }
      } finally {
        await unsubscribe?.();
      }
    });

    it("reports each job's lifecycle to subscribers (capability lifecycleEvents)", async (ctx) => {
      const h = get();
      need(h.caps, ctx, "subscribe", "lifecycleEvents");
      const q = await h.freshLane({ maxStalls: 0 });
      const seen = new Map<string, string[]>();
      const unsubscribe = await subscribeOf(h.adapter)((e) => {
        if (e.lane !== q.name) return;
        seen.set(e.jobId, [...(seen.get(e.jobId) ?? []), e.type]);
      });
      // A worker's kind of subscription: lifecycle events need not reach it, and must not.
      const quiet: string[] = [];
      const unsubscribeQuiet = await subscribeOf(h.adapter)(
        (e) => {
          if (e.lane === q.name && isLifecycleEvent(e)) quiet.push(e.type);
        },
        { lifecycle: false },
      );
      try {
        const error = { name: "Error", message: "boom", reason: "error" as const };
        const [a, b, c, d, e] = [h.job(), h.job(), h.job(), h.job(), h.job()];
        await q.put([a, b]);
        // a duplicate is not published again
        expect(await q.put([a])).toEqual([{ id: a.id, status: "duplicate" }]);
        const taken = await h.reserveAll(q, 2, 30 * h.unit);
        const lockOf = (id: string) => (taken.find((j) => j.id === id) as ReservedJob).lock;
        expect(await q.ack([lockOf(a.id)])).toEqual(["ok"]);
        expect(await q.nack([{ lock: lockOf(b.id), runAt: h.now(), error }])).toEqual(["ok"]);
        const [again] = await h.reserveAll(q, 1, 30 * h.unit);
        expect(again?.id).toBe(b.id);
        expect(await q.nack([{ lock: (again as ReservedJob).lock, dead: true, error }])).toEqual([
          "ok",
        ]);
        // c's lease runs out: one stall is more than maxStalls 0, so it also fails
        await q.put([c]);
        await h.reserveAll(q, 1, h.unit);
        await h.waitFor(async () => {
          await q.reserve({ limit: 1, leaseMs: h.unit, waitMs: 0 });
          return seen.get(c.id)?.includes("failed");
        }, "c to stall and fail");
        const want: Record<string, string[]> = {
          [a.id]: ["published", "started", "succeeded"],
          [b.id]: ["published", "started", "retrying", "started", "failed"],
          [c.id]: ["published", "started", "stalled", "failed"],
        };
        if (h.caps.cancel) {
          await q.put([d]);
          expect(await method(q, "cancel")([d.id])).toEqual(["canceled"]);
          want[d.id] = ["published", "canceled"];
        }
        // e: handed back unrun, then run and failed; out of the dead letter set again, and
        // gone; b and c (failed) too
        await q.put([e]);
        const [first] = await h.reserveAll(q, 1, 30 * h.unit);
        expect(await q.release([{ lock: (first as ReservedJob).lock, uncounted: true }])).toEqual([
          "ok",
        ]);
        const [second] = await h.reserveAll(q, 1, 30 * h.unit);
        expect(await q.nack([{ lock: (second as ReservedJob).lock, dead: true, error }])).toEqual([
          "ok",
        ]);
        want[e.id] = ["published", "started", "released", "started", "failed"];
        if (h.caps.retryFailed) {
          expect(await method(q, "retryFailed")([e.id])).toBe(1);
          want[e.id]?.push("retried");
        }
        if (h.caps.delete) {
          expect(await method(q, "delete")([e.id, b.id])).toBe(2);
          want[e.id]?.push("deleted");
          want[b.id]?.push("deleted");
        }
        await h.waitFor(
          () => Object.keys(want).every((id) => seen.get(id)?.length === want[id]?.length),
          "every lifecycle event",
        );
        expect(Object.fromEntries(Object.keys(want).map((id) => [id, seen.get(id)]))).toEqual(want);
        expect(quiet).toEqual([]);
      } finally {
        await unsubscribe?.();
        await unsubscribeQuiet?.();
      }
    });

    it("ends a long poll at once when its signal aborts", async () => {
      const h = get();
      const q = await h.freshLane();
      const controller = new AbortController();
      const waitMs = Math.min(h.caps.maxWaitMs, 20_000);
      const { poll } = await h.pollUntilWaiting(q, {
        limit: 1,
        leaseMs: h.unit,
        waitMs,
        signal: controller.signal,
      });
      const aborted = performance.now();
      controller.abort();
      const result = await poll;
      expect(result.jobs).toEqual([]);
      expect(performance.now() - aborted).toBeLessThan(Math.min(waitMs / 2, 3_000));
    });

    it("wakes a long poll when a job is put", async () => {
      const h = get();
      const q = await h.freshLane();
      const waitMs = Math.min(h.caps.maxWaitMs, 20_000);
      const started = h.now();
      const { poll } = await h.pollUntilWaiting(q, { limit: 1, leaseMs: 10 * h.unit, waitMs });
      const job = h.job();
      await q.put([job]);
      const result = await poll;
      expect(result.jobs.map((j) => j.id)).toEqual([job.id]);
      expect(h.now() - started).toBeLessThan(waitMs);
    });

    it("wakes a long poll when a delayed job falls due", async () => {
      const h = get();
      const q = await h.freshLane();
      const waitMs = Math.min(h.caps.maxWaitMs, 20_000);
      const job = h.job({ runAt: h.now() + 3 * h.unit });
      await q.put([job]);
      const started = h.now();
      const { poll } = await h.pollUntilWaiting(q, { limit: 1, leaseMs: 10 * h.unit, waitMs });
      let result: ReserveResult | undefined;
      void poll.then((r) => {
        result = r;
      });
      await h.waitFor(() => result, "the poll to return the job");
      expect(result?.jobs.map((j) => j.id)).toEqual([job.id]);
      const took = h.now() - started;
      expect(took).toBeLessThan(waitMs);
      expect(took).toBeGreaterThanOrEqual(2 * h.unit - h.caps.timeResolutionMs);
    });

    it("a long poll with nothing due waits its waitMs, then returns nothing", async () => {
      const h = get();
      const q = await h.freshLane();
      const waitMs = 3 * h.unit;
      const started = h.now();
      const { poll } = await h.pollUntilWaiting(q, { limit: 1, leaseMs: h.unit, waitMs });
      let result: ReserveResult | undefined;
      void poll.then((r) => {
        result = r;
      });
      await h.waitFor(() => result, "the poll to time out");
      expect(result?.jobs).toEqual([]);
      expect(h.now() - started).toBeGreaterThanOrEqual(waitMs - h.caps.timeResolutionMs);
    });

    it("counts and probes what it holds", async () => {
      const h = get();
      const q = await h.freshLane();
      await q.put([h.job(), h.job(), h.job(), h.job({ runAt: h.now() + 100 * h.unit })]);
      // Approximate counts (exactCounts false) must still get there once the backend settles.
      const settle = async <T>(read: () => Promise<T>, want: (v: T) => boolean, what: string) =>
        h.caps.exactCounts ? read() : h.waitFor(async () => want(await read()) && read(), what);
      const counts = (want: Partial<LaneCounts>) =>
        settle(
          () => q.counts(),
          (c) => Object.entries(want).every(([k, v]) => c[k as keyof LaneCounts] === v),
          `counts ${JSON.stringify(want)}`,
        );
      expect(
        await settle(
          () => q.probe(),
          (n) => n === 3,
          "probe 3",
        ),
      ).toBe(3);
      expect(await counts({ waiting: 3, delayed: 1, active: 0 })).toMatchObject({
        waiting: 3,
        delayed: 1,
        active: 0,
      });
      await h.reserveAll(q, 1, 10 * h.unit);
      expect(await counts({ waiting: 2, delayed: 1, active: 1 })).toMatchObject({
        waiting: 2,
        delayed: 1,
        active: 1,
      });
    });

    it("lists jobs by state as a stream", async (ctx) => {
      const h = get();
      need(h.caps, ctx, "list");
      const q = await h.freshLane();
      const jobs = Array.from({ length: 25 }, () => h.job());
      for (let i = 0; i < jobs.length; i += h.caps.maxBatch)
        await q.put(jobs.slice(i, i + h.caps.maxBatch));
      const listed: string[] = [];
      for await (const info of method(q, "list")({ state: "waiting", pageSize: 7 })) {
        expect(info.state).toBe("waiting");
        listed.push(info.id);
      }
      expect(listed.sort()).toEqual(jobs.map((j) => j.id).sort());
    });

    it("close is idempotent and later calls throw ClosedError", async () => {
      const h = get();
      const adapter = await options.createAdapter();
      const q = await adapter.lane(h.uniqueName(), { maxStalls: 1, historyLimit: 10 });
      await adapter.close();
      await adapter.close();
      await expect(q.put([h.job()])).rejects.toBeInstanceOf(ClosedError);
      await expect(q.reserve({ limit: 1, leaseMs: h.unit, waitMs: 0 })).rejects.toBeInstanceOf(
        ClosedError,
      );
      await expect(
        adapter.lane("another", { maxStalls: 1, historyLimit: 10 }),
      ).rejects.toBeInstanceOf(ClosedError);
    });
  });
}
