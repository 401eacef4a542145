import { createTasklane, defineTask, type Tasklane } from "@tasklane/core";
import type { JobError, LaneStore, Lock, ReservedJob } from "@tasklane/core/adapter";
import { afterEach, describe, expect, it } from "vitest";
import { z } from "zod";
import type { Harness } from "./harness.ts";
import type { ConformanceOptions } from "./options.ts";

const ERROR: JobError = { name: "Error", message: "boom", reason: "error" };

/**
 * The contract's finer rules (docs/adapter-contract.md): a lock named twice in one call,
 * every call seeing the jobs that fell due and the leases that ran out before it, the exact
 * order reserve takes jobs in, and long polls that end when a job falls due.
 */
export function registerContractTests(get: () => Harness, _options: ConformanceOptions): void {
  describe("contract", () => {
    /** Let the adapter's clock move on by at least `ms` (2 by default): distinct due times. */
    const tick = async (h: Harness, ms = 2) => {
      const from = h.now();
      await h.waitFor(() => h.now() >= from + ms, `the clock to pass ${ms} ms`);
    };
    /** Wait until `lock`'s lease has run out by the clock, without calling the lane. */
    const expire = async (h: Harness, lock: Lock) => {
      await h.waitFor(() => h.now() > lock.expiresAt + 1, "the lease to run out");
    };
    const reserveOne = async (h: Harness, q: LaneStore, leaseMs = 30 * h.unit) => {
      const [job] = await h.reserveAll(q, 1, leaseMs);
      return job as ReservedJob;
    };
    const ids = (jobs: readonly ReservedJob[], names: Record<string, string>) =>
      jobs.map((j) => names[j.id] ?? j.id);
    /** Nothing more to reserve (only where counts are exact: elsewhere "nothing" is a guess). */
    const expectEmpty = async (h: Harness, q: LaneStore) => {
      if (!h.caps.exactCounts) return;
      expect((await q.reserve({ limit: 10, leaseMs: h.unit, waitMs: 0 })).jobs).toEqual([]);
    };

    describe("a lock named twice in one call is lost after its first use", () => {
      it("ack", async () => {
        const h = get();
        const q = await h.freshLane();
        await q.put([h.job()]);
        const { lock } = await reserveOne(h, q);
        expect(await q.ack([lock, lock])).toEqual(["ok", "lost"]);
        if (h.caps.exactCounts) expect(await q.counts()).toMatchObject({ active: 0, succeeded: 1 });
      });

      it("nack with a retry due now: the job waits once", async () => {
        const h = get();
        const q = await h.freshLane();
        const put = h.job();
        await q.put([put]);
        const { lock } = await reserveOne(h, q);
        const retry = { lock, runAt: h.now(), error: ERROR };
        expect(await q.nack([retry, retry])).toEqual(["ok", "lost"]);
        if (h.caps.exactCounts) expect(await q.counts()).toMatchObject({ waiting: 1, active: 0 });
        const again = await reserveOne(h, q);
        expect(again.id).toBe(put.id);
        expect(again.attempt).toBe(2);
        await expectEmpty(h, q);
      });

      it("nack with a retry, then dead: the retry stands and nothing is lost", async () => {
        const h = get();
        const q = await h.freshLane();
        const put = h.job();
        await q.put([put]);
        const { lock } = await reserveOne(h, q);
        expect(
          await q.nack([
            { lock, runAt: h.now(), error: ERROR },
            { lock, dead: true, error: ERROR },
          ]),
        ).toEqual(["ok", "lost"]);
        if (h.caps.exactCounts) expect(await q.counts()).toMatchObject({ waiting: 1, failed: 0 });
        if (h.caps.get) expect((await q.get?.(put.id))?.state).toBe("waiting");
        const again = await reserveOne(h, q);
        expect(again.id).toBe(put.id);
        await expectEmpty(h, q);
      });

      it("release: the delivery is given back once", async () => {
        const h = get();
        const q = await h.freshLane();
        const put = h.job();
        await q.put([put]);
        const first = await reserveOne(h, q);
        const item = { lock: first.lock, uncounted: true as const };
        expect(await q.release([item, item])).toEqual(["ok", "lost"]);
        const again = await reserveOne(h, q);
        expect(again.id).toBe(put.id);
        if (h.caps.exactCounts) expect(again.attempt).toBe(first.attempt);
        await expectEmpty(h, q);
      });

      it("extend", async () => {
        const h = get();
        const q = await h.freshLane();
        await q.put([h.job()]);
        const { lock } = await reserveOne(h, q);
        expect(await q.extend([lock, lock], 30 * h.unit)).toEqual(["ok", "lost"]);
        // the first use stands: the job is still held under the lock
        expect(await q.ack([lock])).toEqual(["ok"]);
      });
    });

    describe("every call first applies the jobs that fell due and the leases that ran out", () => {
      it("cancel of a delayed job that has just fallen due", async (ctx) => {
        const h = get();
        if (!h.caps.cancel || !h.caps.priorities || !h.caps.exactCounts) return ctx.skip();
        const q = await h.freshLane();
        const soon = h.job({ priority: 5, runAt: h.now() + h.unit });
        const plain = h.job();
        await q.put([soon, plain]);
        await h.waitFor(() => h.now() > (soon.runAt as number) + 1, "the job to fall due");
        expect(await q.cancel?.([soon.id])).toEqual(["canceled"]);
        expect(await q.counts()).toMatchObject({ waiting: 1, delayed: 0, canceled: 1 });
        expect(await q.probe()).toBe(1);
        const got = await q.reserve({ limit: 5, leaseMs: 10 * h.unit, waitMs: 0 });
        expect(got.jobs.map((j) => j.id)).toEqual([plain.id]);
      });

      for (const priority of [0, 5]) {
        it(`delete of a job (priority ${priority}) whose lease has just run out`, async (ctx) => {
          const h = get();
          if (!h.caps.delete || !h.caps.exactCounts) return ctx.skip();
          if (priority !== 0 && !h.caps.priorities) return ctx.skip();
          const q = await h.freshLane();
          const put = h.job({ priority });
          await q.put([put]);
          const { lock } = await reserveOne(h, q, h.unit);
          await expire(h, lock);
          expect(await q.delete?.([put.id])).toBe(1);
          expect(await q.counts()).toMatchObject({ waiting: 0, active: 0, failed: 0 });
          await expectEmpty(h, q);
        });
      }

      it("retryFailed and delete of a job that has just stalled into the dead letter set", async (ctx) => {
        const h = get();
        if (!h.caps.retryFailed || !h.caps.delete || !h.caps.exactCounts) return ctx.skip();
        // maxStalls 0: the first lease that runs out sends the job to failed
        const q = await h.freshLane({ maxStalls: 0 });
        const [a, b, c] = [h.job(), h.job(), h.job()];
        await q.put([a]);
        await expire(h, (await reserveOne(h, q, h.unit)).lock);
        expect(await q.retryFailed?.()).toBe(1);
        expect(await q.counts()).toMatchObject({ waiting: 1, active: 0, failed: 0 });
        expect((await reserveOne(h, q)).id).toBe(a.id);

        await q.put([b]);
        await expire(h, (await reserveOne(h, q, h.unit)).lock);
        expect(await q.retryFailed?.([b.id])).toBe(1);
        expect(await q.counts()).toMatchObject({ waiting: 1, failed: 0 });
        expect((await reserveOne(h, q)).id).toBe(b.id);

        await q.put([c]);
        await expire(h, (await reserveOne(h, q, h.unit)).lock);
        expect(await q.delete?.([c.id])).toBe(1);
        expect(await q.counts()).toMatchObject({ waiting: 0, failed: 0 });
        expect(await q.get?.(c.id)).toBeUndefined();
      });

      it("probe and get see a lease that has just run out", async (ctx) => {
        const h = get();
        if (!h.caps.exactCounts || !h.caps.get) return ctx.skip();
        const q = await h.freshLane({ maxStalls: 3 });
        const put = h.job();
        await q.put([put]);
        await expire(h, (await reserveOne(h, q, h.unit)).lock);
        expect(await q.probe()).toBe(1);
        expect(await q.get?.(put.id)).toMatchObject({ state: "waiting", attempt: 1 });
      });
    });

    describe("reserve order: priority, then due time, then put order", () => {
      it("a retry due in the past takes its place among the waiting jobs by its runAt", async (ctx) => {
        const h = get();
        if (!h.caps.ordered) return ctx.skip();
        const q = await h.freshLane();
        const [x, p1, p2] = [h.job(), h.job(), h.job()];
        const names = { [x.id]: "x", [p1.id]: "p1", [p2.id]: "p2" };
        await q.put([x]);
        const { lock } = await reserveOne(h, q);
        await tick(h);
        await q.put([p1]);
        await tick(h);
        const runAt = h.now();
        await tick(h);
        await q.put([p2]);
        expect(await q.nack([{ lock, runAt, error: ERROR }])).toEqual(["ok"]);
        expect(ids(await h.reserveAll(q, 3, 30 * h.unit), names)).toEqual(["p1", "x", "p2"]);
      });

      it("released jobs keep their due time: back in due, then put order", async (ctx) => {
        const h = get();
        if (!h.caps.ordered) return ctx.skip();
        const q = await h.freshLane();
        const [a, b, c, d] = [h.job(), h.job(), h.job(), h.job()];
        const names = { [a.id]: "a", [b.id]: "b", [c.id]: "c", [d.id]: "d" };
        await q.put([a, b, c]);
        const held = await h.reserveAll(q, 3, 30 * h.unit);
        await tick(h);
        await q.put([d]);
        await tick(h);
        const lockOf = (id: string) => (held.find((j) => j.id === id) as ReservedJob).lock;
        // handed back in another order than they were put, after d
        const items = [c, a, b].map((j) => ({ lock: lockOf(j.id), uncounted: true as const }));
        expect(await q.release(items)).toEqual(["ok", "ok", "ok"]);
        expect(ids(await h.reserveAll(q, 4, 30 * h.unit), names)).toEqual(["a", "b", "c", "d"]);
      });

      it("a job whose lease ran out goes ahead of the jobs that waited behind it", async (ctx) => {
        const h = get();
        if (!h.caps.ordered) return ctx.skip();
        const q = await h.freshLane();
        const first = h.job();
        await q.put([first]);
        await tick(h);
        const behind = Array.from({ length: 10 }, () => h.job());
        await q.put(behind);
        const held = await reserveOne(h, q, h.unit);
        expect(held.id).toBe(first.id);
        await expire(h, held.lock);
        const again = await reserveOne(h, q);
        expect(again.id).toBe(first.id);
        expect(again.attempt).toBe(2);
      });

      it("a delayed job takes its place by its runAt once due", async (ctx) => {
        const h = get();
        if (!h.caps.ordered) return ctx.skip();
        const q = await h.freshLane();
        const delayed = h.job({ runAt: h.now() + h.unit });
        const [w1, w2] = [h.job(), h.job()];
        const names = { [delayed.id]: "delayed", [w1.id]: "w1", [w2.id]: "w2" };
        await q.put([delayed]);
        await q.put([w1]);
        await h.waitFor(() => h.now() > (delayed.runAt as number) + 1, "the job to fall due");
        await q.put([w2]);
        expect(ids(await h.reserveAll(q, 3, 30 * h.unit), names)).toEqual(["w1", "delayed", "w2"]);
      });

      it("a job retried by hand is due at the time of the call", async (ctx) => {
        const h = get();
        if (!h.caps.ordered || !h.caps.retryFailed) return ctx.skip();
        const q = await h.freshLane();
        const [x, y] = [h.job(), h.job()];
        const names = { [x.id]: "x", [y.id]: "y" };
        await q.put([x]);
        const { lock } = await reserveOne(h, q);
        expect(await q.nack([{ lock, dead: true, error: ERROR }])).toEqual(["ok"]);
        await q.put([y]);
        await tick(h);
        expect(await q.retryFailed?.([x.id])).toBe(1);
        expect(ids(await h.reserveAll(q, 2, 30 * h.unit), names)).toEqual(["y", "x"]);
      });

      it("priority comes before due time", async (ctx) => {
        const h = get();
        if (!h.caps.ordered || !h.caps.priorities) return ctx.skip();
        const q = await h.freshLane();
        const [x, high, low] = [h.job(), h.job({ priority: 5 }), h.job({ priority: -5 })];
        const names = { [x.id]: "x", [high.id]: "high", [low.id]: "low" };
        await q.put([x]);
        const { lock } = await reserveOne(h, q);
        const runAt = h.now();
        await tick(h);
        await q.put([high, low]);
        expect(await q.nack([{ lock, runAt, error: ERROR }])).toEqual(["ok"]);
        expect(ids(await h.reserveAll(q, 3, 30 * h.unit), names)).toEqual(["high", "x", "low"]);
      });
    });

    describe("a long poll ends when a job falls due during it", () => {
      /** Start a long poll and let time pass until it returns; resolves with its jobs and duration. */
      const poll = async (
        h: Harness,
        q: LaneStore,
        waitMs: number,
        during: () => Promise<void>,
      ) => {
        const started = h.now();
        let done: { jobs: ReservedJob[]; ms: number } | undefined;
        const pending = q.reserve({ limit: 1, leaseMs: 30 * h.unit, waitMs }).then((r) => {
          done = { jobs: r.jobs, ms: h.now() - started };
        });
        await during();
        await h.waitFor(() => done !== undefined, "the long poll to return", 2 * waitMs);
        await pending;
        return done as { jobs: ReservedJob[]; ms: number };
      };

      it("a delayed job", async () => {
        const h = get();
        const q = await h.freshLane();
        const waitMs = Math.min(h.caps.maxWaitMs, 5_000);
        const job = h.job({ runAt: h.now() + Math.max(200, h.caps.timeResolutionMs) });
        const got = await poll(h, q, waitMs, () => q.put([job]).then(() => {}));
        expect(got.jobs.map((j) => j.id)).toEqual([job.id]);
        expect(got.ms).toBeLessThan(2_000 + h.caps.timeResolutionMs);
      });

      it("a retry", async () => {
        const h = get();
        const q = await h.freshLane();
        const put = h.job();
        await q.put([put]);
        const { lock } = await reserveOne(h, q);
        const waitMs = Math.min(h.caps.maxWaitMs, 5_000);
        const runAt = h.now() + Math.max(200, h.caps.timeResolutionMs);
        const got = await poll(h, q, waitMs, async () => {
          expect(await q.nack([{ lock, runAt, error: ERROR }])).toEqual(["ok"]);
        });
        expect(got.jobs.map((j) => [j.id, j.attempt])).toEqual([[put.id, 2]]);
        expect(got.ms).toBeLessThan(2_000 + h.caps.timeResolutionMs);
      });
    });

    describe("worker", () => {
      const open: Tasklane[] = [];
      afterEach(async () => {
        await Promise.all(open.splice(0).map((tl) => tl.close({ graceMs: 0 })));
      });

      it("a worker long-polling one lane starts a retry due on another lane on time", async () => {
        const h = get();
        const backoffMs = 2 * h.unit;
        const runAts: number[] = [];
        const startedAt: number[] = [];
        const flaky = defineTask({
          name: "flaky",
          lane: "low",
          schema: z.object({}),
          retry: { maxAttempts: 2, baseMs: backoffMs, jitter: 0 },
          run: async (_payload, ctx) => {
            if (ctx.attempt === 1) throw new Error("first attempt fails");
            startedAt.push(h.now());
          },
        });
        // Strict priority long-polls "high" whenever both lanes are empty, for much longer
        // than the backoff: the retry on "low" must not wait for that poll to end.
        const longPollMs = Math.min(25 * h.unit, h.caps.maxWaitMs);
        const tl = createTasklane({
          adapter: h.adapter,
          closeAdapter: false,
          clock: h.clock,
          namespace: h.uniqueName("ns").replace(/[^A-Za-z0-9_-]/g, ""),
          selector: "strict-priority",
          lanes: [
            { name: "high", priority: 1000, leaseMs: 20 * h.unit, longPollMs },
            { name: "low", priority: 1, leaseMs: 20 * h.unit, longPollMs },
          ],
          tasks: [flaky],
        });
        open.push(tl);
        tl.events.on("retrying", (e) => runAts.push(e.runAt));
        const worker = tl.worker({ concurrency: 2 });
        await worker.start();
        await tl.publish(flaky, {});
        await h.waitFor(() => startedAt.length > 0, "the retry to start", 4 * longPollMs);
        const lateMs = (startedAt[0] as number) - (runAts[0] as number);
        expect(lateMs).toBeGreaterThanOrEqual(-h.caps.timeResolutionMs);
        expect(lateMs).toBeLessThan(Math.min(longPollMs / 2, 5 * h.unit) + h.caps.timeResolutionMs);
        await worker.stop();
      });
    });
  });
}
