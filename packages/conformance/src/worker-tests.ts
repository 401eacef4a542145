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
import { sleep } from "@tasklane/core/adapter";
import { afterEach, describe, expect, it } from "vitest";
import { z } from "zod";
import type { Harness } from "./harness.ts";
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
export function registerWorkerTests(get: () => Harness, _options: ConformanceOptions): void {
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
        namespace: h.uniqueName("ns").replace(/[^A-Za-z0-9_-]/g, ""),
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
      if (!h.caps.dedup) return ctx.skip();
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

    it("retries a failing job with exponential backoff", async () => {
      const h = get();
      const base = 2 * h.unit;
      let calls = 0;
      const task = defineTask({
        name: "flaky",
        lane: "work",
        schema: z.object({}),
        retry: { maxAttempts: 3, baseMs: base, jitter: 0 },
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
      // Backoff baseMs · 2ⁿ: the second retry is scheduled at least base + 2·base after
      // the first one was.
      const [r1, r2] = seen.retrying;
      expect((r2?.runAt ?? 0) - (r1?.runAt ?? 0)).toBeGreaterThanOrEqual(
        2 * base - h.caps.timeResolutionMs,
      );
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
      if (!h.caps.cancelActive) return ctx.skip();
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

    it("stops gracefully without losing a job", async () => {
      const h = get();
      const done = new Set<number>();
      const task = defineTask({
        name: "steady",
        lane: "work",
        schema: z.object({ n: z.number() }),
        run: async ({ n }, ctx) => {
          await sleep(tl.clock, h.unit / 4, ctx.signal);
          done.add(n);
        },
      });
      const { tl, seen } = setup(h, { tasks: [task] });
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
      await h.waitFor(() => done.size === total, "every job to be done by someone");
      await second.stop();
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
