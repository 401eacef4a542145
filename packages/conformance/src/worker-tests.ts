import {
  type Adapter,
  AdapterError,
  CanceledError,
  createTasklane,
  defineTask,
  LockLostError,
  PayloadTooLargeError,
  type Tasklane,
  type TasklaneEvents,
  type TasklaneOptions,
  TimeoutError,
  UnrecoverableError,
  ValidationError,
} from "@tasklane/core";
import { type ReservedJob, sleep } from "@tasklane/core/adapter";
import { afterEach, describe, expect, it } from "vitest";
import { z } from "zod";
import { type Harness, need } from "./harness.ts";
import type { ConformanceOptions } from "./options.ts";

/**
 * `adapter`, with every lane's `extend` failing as over a broken network while
 * `partition.cut` is set: a worker's heartbeats fail and its leases run out.
 */
function withFailingHeartbeats(adapter: Adapter, partition: { cut: boolean }): Adapter {
  const failing = (): Promise<never> =>
    Promise.reject(new AdapterError(adapter.name, "heartbeat lost in a partition (test)"));
  return {
    name: adapter.name,
    capabilities: adapter.capabilities,
    close: () => adapter.close(),
    ...(adapter.subscribe ? { subscribe: adapter.subscribe.bind(adapter) } : {}),
    lane: async (name, options) => {
      const lane = await adapter.lane(name, options);
      return new Proxy(lane, {
        get(target, prop, receiver) {
          if (prop === "extend" && partition.cut) return failing;
          const value = Reflect.get(target, prop, receiver);
          return typeof value === "function" ? value.bind(target) : value;
        },
      });
    },
  };
}

type Recorded = { [K in keyof TasklaneEvents]: Array<TasklaneEvents[K]> };

/** The worker over the adapter: what a user sees end to end. */
export function registerWorkerTests(get: () => Harness, options: ConformanceOptions): void {
  const sanitize = (name: string) => name.replace(/[^A-Za-z0-9_-]/g, "");
  describe("worker", () => {
    const open: Tasklane[] = [];
    afterEach(async () => {
      await Promise.all(open.splice(0).map((tl) => tl.close({ graceMs: 0 })));
    });

    /** A client on a fresh namespace (fresh lanes), recording every event. */
    const setup = (
      h: Harness,
      overrides: Partial<TasklaneOptions> & Pick<TasklaneOptions, "tasks">,
    ) => {
      const tl = createTasklane({
        adapter: h.adapter,
        closeAdapter: false,
        clock: h.clock,
        namespace: sanitize(h.uniqueName("ns")),
        lanes: [
          {
            name: "work",
            leaseMs: 20 * h.unit,
            longPollMs: h.unit,
            batchSize: 10,
            numIterations: 5,
          },
        ],
        ...overrides,
      });
      open.push(tl);
      const seen = {} as Recorded;
      const names: Array<keyof TasklaneEvents> = [
        "published",
        "started",
        "succeeded",
        "retrying",
        "failed",
        "lock_lost",
        "canceled",
        "stalled",
        "error",
      ];
      for (const name of names) {
        const list: unknown[] = [];
        (seen as Record<string, unknown[]>)[name] = list;
        tl.events.on(name, (e: unknown) => list.push(e));
      }
      return { tl, seen };
    };

    it("runs published jobs to success", async () => {
      const h = get();
      const ran: number[] = [];
      const task = defineTask({
        name: "add",
        lane: "work",
        schema: z.object({ n: z.number() }),
        run: ({ n }) => void ran.push(n),
      });
      const { tl, seen } = setup(h, { tasks: [task] });
      await tl.publishMany(
        task,
        Array.from({ length: 25 }, (_, n) => ({ payload: { n } })),
      );
      const worker = tl.worker({ concurrency: 5 });
      await worker.start();
      await h.waitFor(() => seen.succeeded.length >= 25, "25 successes");
      expect([...ran].sort((a, b) => a - b)).toEqual(Array.from({ length: 25 }, (_, n) => n));
      expect(seen.failed).toEqual([]);
      await worker.stop();
      expect(worker.held).toBe(0);
      if (h.caps.exactCounts)
        expect(await tl.lane("work").counts()).toMatchObject({
          waiting: 0,
          active: 0,
          delayed: 0,
        });
    });

    it("publishMany refuses an item whose jobId exists, among items with generated ids", async (ctx) => {
      const h = get();
      need(h.caps, ctx, "dedup");
      const task = defineTask({
        name: "once",
        lane: "work",
        schema: z.object({ n: z.number() }),
        run: () => {},
      });
      const { tl } = setup(h, { tasks: [task] });
      expect(await tl.publish(task, { n: 0 }, { jobId: "order-7" })).toEqual({
        id: "order-7",
        status: "created",
      });
      const results = await tl.publishMany(task, [
        { payload: { n: 1 } },
        { payload: { n: 2 }, jobId: "order-7" },
        { payload: { n: 3 } },
      ]);
      expect(results.map((r) => r.status)).toEqual(["created", "duplicate", "created"]);
      expect(results[1]?.id).toBe("order-7");
      if (h.caps.get) {
        const info = await tl.lane("work").get("order-7");
        expect(JSON.parse(info?.payload ?? "null")).toEqual({ n: 0 });
      }
    });

    it("retries a failing job until it succeeds", async () => {
      const h = get();
      let calls = 0;
      const task = defineTask({
        name: "flaky",
        lane: "work",
        schema: z.object({}),
        retry: { maxAttempts: 3, baseMs: h.unit, jitter: 0 },
        run: (_p, ctx) => {
          calls++;
          if (ctx.attempt < 3) throw new Error(`fail ${ctx.attempt}`);
        },
      });
      const { tl, seen } = setup(h, { tasks: [task] });
      await tl.publish(task, {});
      await tl.worker({ concurrency: 2 }).start();
      await h.waitFor(() => seen.succeeded.length === 1, "success on the third attempt");
      expect(calls).toBe(3);
      expect(seen.retrying.map((e) => e.attempt)).toEqual([1, 2]);
      expect(seen.retrying.map((e) => e.error.message)).toEqual(["fail 1", "fail 2"]);
      expect(seen.succeeded[0]?.attempt).toBe(3);
      expect(seen.failed).toEqual([]);
    });

    it("schedules retry n at backoffMs(policy, n) after the failure, and dead-letters after exactly maxAttempts", async () => {
      const h = get();
      const base = 2 * h.unit;
      // Delay after attempt n: min(maxMs, baseMs · 2^(n−1)) · (1 − jitter · r). With r fixed
      // at 0.5 and jitter 0.5 that is 0.75 of base, 2·base, then the cap 3·base.
      const retry = { maxAttempts: 4, baseMs: base, maxMs: 3 * base, jitter: 0.5 };
      const want = [base, 2 * base, 3 * base].map((d) => Math.round(d * 0.75));
      const attempts: number[] = [];
      const failedAt: number[] = [];
      const task = defineTask({
        name: "always-fails",
        lane: "work",
        schema: z.object({}),
        retry,
        run: (_p, ctx) => {
          attempts.push(ctx.attempt);
          // The worker settles a synchronous throw in the same turn: this is its "now".
          failedAt.push(tl.clock.now());
          throw new Error(`fail ${ctx.attempt}`);
        },
      });
      const { tl, seen } = setup(h, { tasks: [task], random: () => 0.5 });
      const { id } = await tl.publish(task, {});
      await tl.worker().start();
      await h.waitFor(() => seen.failed.length === 1, "the last attempt to fail");
      expect(attempts).toEqual([1, 2, 3, 4]);
      expect(seen.retrying.map((e) => e.attempt)).toEqual([1, 2, 3]);
      expect(seen.failed.map((e) => [e.attempt, e.error.reason, e.error.message])).toEqual([
        [4, "error", "fail 4"],
      ]);
      const delays = seen.retrying.map((e, i) => e.runAt - (failedAt[i] ?? Number.NaN));
      if (options.advance) {
        // Manual clock: nothing moves between the throw and the settle.
        expect(delays).toEqual(want);
      } else {
        // Real time: the settle follows the throw within the same turn of the event loop,
        // but a loaded machine can pause between them (SQS: 349 ms, a third of its unit,
        // was seen beside a mutation run). Half a unit still tells each delay from its
        // neighbours' (they differ by at least 0.75 of base, 1.5 units).
        delays.forEach((d, i) => {
          expect(d).toBeGreaterThanOrEqual(want[i] as number);
          expect(d).toBeLessThanOrEqual((want[i] as number) + h.unit / 2);
        });
      }
      if (h.caps.get) {
        const info = await tl.lane("work").get(id);
        expect([info?.state, info?.attempt]).toEqual(["failed", 4]);
      }
    });

    it("sends an unrecoverable failure straight to the dead letter set", async () => {
      const h = get();
      let calls = 0;
      const task = defineTask({
        name: "doomed",
        lane: "work",
        schema: z.object({}),
        retry: { maxAttempts: 5 },
        run: () => {
          calls++;
          throw new UnrecoverableError("cannot ever work");
        },
      });
      const { tl, seen } = setup(h, { tasks: [task] });
      const { id } = await tl.publish(task, {});
      await tl.worker().start();
      await h.waitFor(() => seen.failed.length === 1, "the failure");
      expect(calls).toBe(1);
      expect(seen.retrying).toEqual([]);
      expect(seen.failed[0]?.error).toMatchObject({
        name: "UnrecoverableError",
        message: "cannot ever work",
        reason: "unrecoverable",
      });
      if (h.caps.get) expect((await tl.lane("work").get(id))?.state).toBe("failed");
    });

    it("aborts a job past its time limit and counts it as a failure", async () => {
      const h = get();
      let reason: unknown;
      const task = defineTask({
        name: "slow",
        lane: "work",
        schema: z.object({}),
        timeLimitMs: 2 * h.unit,
        retry: { maxAttempts: 1 },
        run: (_p, ctx) =>
          new Promise<void>((_resolve, reject) => {
            ctx.signal.addEventListener("abort", () => {
              reason = ctx.signal.reason;
              reject(ctx.signal.reason);
            });
          }),
      });
      const { tl, seen } = setup(h, { tasks: [task] });
      await tl.publish(task, {});
      await tl.worker().start();
      await h.waitFor(() => seen.failed.length === 1, "the timeout failure");
      expect(reason).toBeInstanceOf(TimeoutError);
      expect(seen.failed[0]?.error).toMatchObject({ name: "TimeoutError", reason: "timeout" });
    });

    it("keeps a slow job's lease alive with heartbeats", async () => {
      const h = get();
      let calls = 0;
      const leaseMs = 3 * h.unit;
      const task = defineTask({
        name: "long",
        lane: "work",
        schema: z.object({}),
        run: async (_p, ctx) => {
          calls++;
          await sleep(tl.clock, 4 * leaseMs, ctx.signal);
        },
      });
      const { tl, seen } = setup(h, {
        tasks: [task],
        lanes: [{ name: "work", leaseMs, longPollMs: h.unit }],
      });
      await tl.publish(task, {});
      await tl.worker().start();
      await h.waitFor(() => seen.succeeded.length === 1, "the slow job to finish", 60 * leaseMs);
      expect(calls).toBe(1);
      expect(seen.lock_lost).toEqual([]);
    });

    it("aborts the handler when its lease is lost", async () => {
      const h = get();
      const leaseMs = 2 * h.unit;
      let reason: unknown;
      const task = defineTask({
        name: "hold",
        lane: "work",
        schema: z.object({}),
        run: (_p, ctx) =>
          new Promise<void>((resolve) => {
            ctx.signal.addEventListener("abort", () => {
              reason = ctx.signal.reason;
              resolve();
            });
          }),
      });
      const namespace = h.uniqueName("ns");
      const partition = { cut: true };
      const { tl, seen } = setup(h, {
        adapter: withFailingHeartbeats(h.adapter, partition),
        tasks: [task],
        namespace,
        lanes: [{ name: "work", leaseMs, longPollMs: h.unit }],
      });
      await tl.publish(task, {});
      // A partition: the worker's heartbeats fail, the lease runs out, and a rival consumer
      // takes the job (the worker has one slot, held by the running job, and no prefetch,
      // so it cannot take the job back itself). Once healed, the next heartbeat learns
      // the lease is gone.
      await tl.worker({ concurrency: 1, prefetch: 0 }).start();
      await h.waitFor(() => seen.started.length === 1, "the job to start");
      const rival = await h.adapter.lane(`${namespace}_work`, { maxStalls: 3, historyLimit: 20 });
      const stolen = await h.waitFor(
        async () => (await rival.reserve({ limit: 1, leaseMs: 30 * h.unit, waitMs: 0 })).jobs[0],
        "the rival to take the job",
      );
      expect(stolen.attempt).toBe(2);
      partition.cut = false;
      await h.waitFor(() => seen.lock_lost.length === 1, "lock_lost", 20 * leaseMs);
      expect(reason).toBeInstanceOf(LockLostError);
      expect(seen.succeeded).toEqual([]);
      expect(await rival.ack([stolen.lock])).toEqual(["ok"]);
    });

    it("aborts a running job that is canceled", async (ctx) => {
      const h = get();
      need(h.caps, ctx, "cancelActive");
      let reason: unknown;
      const task = defineTask({
        name: "cancelme",
        lane: "work",
        schema: z.object({}),
        run: (_p, c) =>
          new Promise<void>((_resolve, reject) => {
            c.signal.addEventListener("abort", () => {
              reason = c.signal.reason;
              reject(c.signal.reason);
            });
          }),
      });
      const { tl, seen } = setup(h, { tasks: [task] });
      const { id } = await tl.publish(task, {});
      await tl.worker().start();
      await h.waitFor(() => seen.started.length === 1, "the job to start");
      expect(await tl.lane("work").cancel([id])).toEqual(["canceled"]);
      await h.waitFor(() => seen.canceled.length === 1, "the canceled event");
      expect(reason).toBeInstanceOf(CanceledError);
      expect(seen.failed).toEqual([]);
      if (h.caps.get) expect((await tl.lane("work").get(id))?.state).toBe("canceled");
    });

    it("stops gracefully: every job runs to success exactly once, on its first attempt", async () => {
      const h = get();
      // Completions per job: a job run twice must show, so not a Set.
      const done = new Map<number, number>();
      const task = defineTask({
        name: "steady",
        lane: "work",
        schema: z.object({ n: z.number() }),
        run: async ({ n }, ctx) => {
          await sleep(tl.clock, h.unit / 4, ctx.signal);
          done.set(n, (done.get(n) ?? 0) + 1);
        },
      });
      // A lease longer than the whole test: a job that was not handed back at stop would
      // not come back by expiry in time, and nothing is delivered twice by a stall.
      const leaseMs = 200 * h.unit;
      const { tl, seen } = setup(h, {
        tasks: [task],
        lanes: [{ name: "work", leaseMs, longPollMs: h.unit, batchSize: 10 }],
      });
      const total = 40;
      await tl.publishMany(
        task,
        Array.from({ length: total }, (_, n) => ({ payload: { n } })),
      );
      const first = tl.worker({ concurrency: 8 });
      await first.start();
      await h.waitFor(() => seen.succeeded.length >= 5, "some progress");
      // No grace: running jobs are aborted and handed back at once.
      const stopping = first.stop({ graceMs: 0 });
      await h.waitFor(async () => {
        await h.pass(1);
        return !first.running;
      }, "the worker to stop");
      await stopping;
      expect(first.held).toBe(0);
      const second = tl.worker({ concurrency: 8 });
      await second.start();
      await h.waitFor(() => seen.succeeded.length >= total, "every job to succeed");
      await second.stop();
      expect(seen.succeeded.length).toBe(total);
      expect([...done.keys()].sort((a, b) => a - b)).toEqual(
        Array.from({ length: total }, (_, n) => n),
      );
      expect([...done.values()].filter((count) => count !== 1)).toEqual([]);
      // Handed back uncounted: no run of any job was a second attempt.
      expect(seen.started.filter((e) => e.attempt !== 1)).toEqual([]);
      expect(seen.succeeded.filter((e) => e.attempt !== 1)).toEqual([]);
    });

    it("stop hands back prefetched jobs at once, uncounted, while a running job finishes", async () => {
      const h = get();
      let openGate = () => {};
      const gate = new Promise<void>((resolve) => {
        openGate = resolve;
      });
      const runs = new Map<number, number>();
      const task = defineTask({
        name: "gated",
        lane: "work",
        schema: z.object({ n: z.number() }),
        run: async ({ n }) => {
          runs.set(n, (runs.get(n) ?? 0) + 1);
          if (n === 0) await gate;
        },
      });
      // Far longer than the wait for the hand-back: only a release brings the jobs back.
      const leaseMs = 100 * h.unit;
      const namespace = sanitize(h.uniqueName("ns"));
      const { tl, seen } = setup(h, {
        tasks: [task],
        namespace,
        lanes: [{ name: "work", leaseMs, longPollMs: h.unit, batchSize: 4 }],
      });
      await tl.publish(task, { n: 0 });
      const worker = tl.worker({ concurrency: 1, prefetch: 3 });
      await worker.start();
      try {
        await h.waitFor(() => seen.started.length === 1, "job 0 to start");
        const rest = await tl.publishMany(
          task,
          [1, 2, 3].map((n) => ({ payload: { n } })),
        );
        await h.waitFor(() => worker.held === 4, "the worker to prefetch three jobs");
        const stopping = worker.stop({ graceMs: 10 * leaseMs });
        const rival = await h.adapter.lane(`${namespace}_work`, {
          maxStalls: 3,
          historyLimit: 20,
        });
        const taken: ReservedJob[] = [];
        await h.waitFor(
          async () => {
            const { jobs } = await rival.reserve({
              limit: 3 - taken.length,
              leaseMs: 30 * h.unit,
              waitMs: 0,
            });
            taken.push(...jobs);
            return taken.length >= 3;
          },
          "the three prefetched jobs to be handed back",
          10 * h.unit,
        );
        expect(taken.map((j) => j.id).sort()).toEqual(rest.map((r) => r.id).sort());
        expect(taken.map((j) => j.attempt)).toEqual([1, 1, 1]);
        // The hand-back's own call may still be settling when the rival already has the
        // jobs (SQS releases by sending a copy, then deleting): wait for it, not for time.
        await h.waitFor(() => worker.held === 1, "the worker to hold job 0 only");
        // Job 0 still runs inside its grace period: stop has not finished.
        expect(worker.running).toBe(true);
        openGate();
        await stopping;
        expect(worker.held).toBe(0);
        expect(await rival.ack(taken.map((j) => j.lock))).toEqual(["ok", "ok", "ok"]);
        expect([...runs]).toEqual([[0, 1]]);
        expect(seen.succeeded.map((e) => e.attempt)).toEqual([1]);
      } finally {
        openGate();
      }
    });

    it("dead-letters unknown tasks and malformed payloads without stopping", async () => {
      const h = get();
      const task = defineTask({
        name: "known",
        lane: "work",
        schema: z.object({ ok: z.boolean() }),
        run: () => {},
      });
      const namespace = h.uniqueName("ns");
      const { tl, seen } = setup(h, { tasks: [task], namespace });
      const raw = await h.adapter.lane(`${namespace}_work`, { maxStalls: 3, historyLimit: 20 });
      await raw.put([
        h.job({ task: "nobody-knows-me", payload: "{}" }),
        h.job({ task: "known", payload: "{not json" }),
        h.job({ task: "known", payload: '{"ok":"not a boolean"}' }),
      ]);
      await tl.publish(task, { ok: true });
      await tl.worker().start();
      await h.waitFor(
        () => seen.failed.length === 3 && seen.succeeded.length === 1,
        "three dead jobs and one success",
      );
      expect(seen.failed.map((e) => e.error.reason).sort()).toEqual([
        "invalid_payload",
        "malformed",
        "unknown_task",
      ]);
    });

    it("refuses an invalid or oversized payload at publish, writing nothing", async () => {
      const h = get();
      const task = defineTask({
        name: "strict",
        lane: "work",
        schema: z.object({ email: z.email() }),
        run: () => {},
      });
      const { tl } = setup(h, { tasks: [task], maxPayloadBytes: 1_024 });
      // @ts-expect-error: the payload type comes from the schema
      await expect(tl.publish(task, { email: 42 })).rejects.toBeInstanceOf(ValidationError);
      await expect(tl.publish(task, { email: "not-an-email" })).rejects.toBeInstanceOf(
        ValidationError,
      );
      await expect(
        tl.publish(task, { email: `${"a".repeat(2_000)}@example.com` }),
      ).rejects.toBeInstanceOf(PayloadTooLargeError);
      await expect(
        tl.publishMany(task, [
          { payload: { email: "a@example.com" } },
          { payload: { email: "bad" } },
        ]),
      ).rejects.toBeInstanceOf(ValidationError);
      expect(await tl.lane("work").probe()).toBe(0);
      if (h.caps.count)
        expect(await tl.lane("work").counts()).toMatchObject({ waiting: 0, delayed: 0 });
    });
  });
}
