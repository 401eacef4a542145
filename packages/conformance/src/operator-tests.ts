/**
 * What operators need to know (issue 24): results, waiting for a job, stored progress and
 * logs, tags and search, failure groups, the worker registry, changing a job's priority,
 * promoting, moving and expiring jobs. One describe block per feature, each test gated by
 * the capability it needs: an adapter that declares one false skips its tests, naming it.
 */
import {
  type Adapter,
  ConfigError,
  createTasklane,
  defineTask,
  JobFailedError,
  JobNotFoundError,
  MAX_LOG_LINE_LENGTH,
  MAX_PROGRESS_BYTES,
  MovedError,
  PayloadTooLargeError,
  ResultTooLargeError,
  type Tasklane,
  type TasklaneEvents,
  type TasklaneOptions,
  WAIT_POLL_MS,
  WaitTimeoutError,
} from "@tasklane/core";
import type {
  AdapterEvent,
  Capabilities,
  JobError,
  JobFinishedEvent,
  LaneStore,
  ReservedJob,
  WorkerRegistration,
} from "@tasklane/core/adapter";
import { afterEach, describe, expect, it, type TestContext } from "vitest";
import { z } from "zod";
import type { Harness } from "./harness.ts";
import type { ConformanceOptions } from "./options.ts";

type Capability = keyof Capabilities;

/** Skip the test, naming the capabilities the adapter lacks, unless it has them all. */
function needs(h: Harness, ctx: TestContext, ...caps: Capability[]): void {
  const missing = caps.filter((c) => !h.caps[c]);
  if (missing.length > 0) ctx.skip(`${h.adapter.name} lacks capability ${missing.join(", ")}`);
}

const boom = (name = "TypeError", message = "boom"): JobError => ({
  name,
  message,
  stack: `${name}: ${message}\n    at test`,
  reason: "error",
});

/** Calls of one LaneStore method through an adapter, with the size of each call's batch. */
type CallLog = Map<string, number[]>;

/** `adapter`, noting every call of the named lane methods and its first argument's length. */
function counting(adapter: Adapter, methods: string[], calls: CallLog): Adapter {
  return {
    name: adapter.name,
    capabilities: adapter.capabilities,
    close: () => adapter.close(),
    ...(adapter.subscribe ? { subscribe: adapter.subscribe.bind(adapter) } : {}),
    ...(adapter.watch ? { watch: adapter.watch.bind(adapter) } : {}),
    lane: async (name, options) => {
      const lane = await adapter.lane(name, options);
      return new Proxy(lane, {
        get(target, prop, receiver) {
          const value = Reflect.get(target, prop, receiver);
          if (typeof value !== "function") return value;
          if (typeof prop === "string" && methods.includes(prop)) {
            return (...args: unknown[]) => {
              const list = calls.get(prop) ?? [];
              calls.set(prop, list);
              list.push(Array.isArray(args[0]) ? args[0].length : 0);
              return value.apply(target, args);
            };
          }
          return value.bind(target);
        },
      });
    },
  };
}

export function registerOperatorTests(get: () => Harness, _options: ConformanceOptions): void {
  describe("operator", () => {
    const open: Tasklane[] = [];
    afterEach(async () => {
      await Promise.all(open.splice(0).map((tl) => tl.close({ graceMs: 0 })));
    });

    /** A client on fresh lanes "work" and "other", recording the worker's events. */
    const setup = (
      h: Harness,
      overrides: Partial<TasklaneOptions> & Pick<TasklaneOptions, "tasks">,
    ) => {
      const namespace = h.uniqueName("ns").replace(/[^A-Za-z0-9_-]/g, "");
      const lane = { leaseMs: 20 * h.unit, longPollMs: h.unit, batchSize: 10 };
      const tl = createTasklane({
        adapter: h.adapter,
        closeAdapter: false,
        clock: h.clock,
        namespace,
        lanes: [
          { name: "work", ...lane },
          { name: "other", ...lane },
        ],
        ...overrides,
      });
      open.push(tl);
      const seen = {
        succeeded: [] as TasklaneEvents["succeeded"][],
        failed: [] as TasklaneEvents["failed"][],
        started: [] as TasklaneEvents["started"][],
        put: [] as TasklaneEvents["put"][],
        error: [] as TasklaneEvents["error"][],
      };
      tl.events.on("succeeded", (e) => seen.succeeded.push(e));
      tl.events.on("failed", (e) => seen.failed.push(e));
      tl.events.on("started", (e) => seen.started.push(e));
      tl.events.on("put", (e) => seen.put.push(e));
      tl.events.on("error", (e) => seen.error.push(e));
      return { tl, seen, namespace };
    };

    /** Put `n` jobs, reserve them and nack each dead with `error(i)`. */
    const failJobs = async (
      h: Harness,
      q: LaneStore,
      n: number,
      error: (i: number) => JobError,
    ): Promise<string[]> => {
      const jobs = Array.from({ length: n }, () => h.job());
      for (let i = 0; i < n; i += h.caps.maxBatch) await q.put(jobs.slice(i, i + h.caps.maxBatch));
      const taken = await h.reserveAll(q, n, 60 * h.unit);
      const byId = new Map(jobs.map((j, i) => [j.id, i]));
      const items = taken.map((j) => ({
        lock: j.lock,
        dead: true as const,
        error: error(byId.get(j.id) ?? 0),
      }));
      for (let i = 0; i < items.length; i += h.caps.maxBatch) {
        const statuses = await q.nack(items.slice(i, i + h.caps.maxBatch));
        expect(statuses.every((s) => s === "ok")).toBe(true);
      }
      return jobs.map((j) => j.id);
    };

    describe("results", () => {
      it("ack stores an item's result; a plain lock's ack stores none", async (ctx) => {
        const h = get();
        needs(h, ctx, "results", "get");
        const q = await h.freshLane();
        const [a, b] = [h.job(), h.job()];
        await q.put([a, b]);
        const taken = await h.reserveAll(q, 2, 10 * h.unit);
        const lockOf = (id: string) => (taken.find((j) => j.id === id) as ReservedJob).lock;
        const result = '{"sent":true,"n":"ü€"}';
        expect(await q.ack([{ ...lockOf(a.id), result }, lockOf(b.id)])).toEqual(["ok", "ok"]);
        expect((await q.get?.(a.id))?.result).toBe(result);
        expect((await q.get?.(a.id))?.state).toBe("succeeded");
        expect((await q.get?.(b.id))?.result).toBeUndefined();
        // A refused ack stores nothing.
        await q.put([h.job({ id: `${a.id}-2` })]);
        const [c] = await h.reserveAll(q, 1, 10 * h.unit);
        const stale = { ...(c as ReservedJob).lock, token: `${(c as ReservedJob).lock.token}x` };
        expect(await q.ack([{ ...stale, result: '"no"' }])).toEqual(["lost"]);
        expect((await q.get?.(`${a.id}-2`))?.result).toBeUndefined();
      });

      it("stores a handler's return value; getJob shows it decoded", async (ctx) => {
        const h = get();
        needs(h, ctx, "results", "get");
        const task = defineTask({
          name: "sum",
          lane: "work",
          schema: z.object({ a: z.number(), b: z.number() }),
          result: z.object({ sum: z.number() }),
          run: ({ a, b }) => ({ sum: a + b }),
        });
        const plain = defineTask({
          name: "plain",
          lane: "work",
          schema: z.object({}),
          run: () => {},
        });
        const { tl, seen } = setup(h, { tasks: [task, plain] });
        const { id } = await tl.publish(task, { a: 2, b: 3 });
        const { id: none } = await tl.publish(plain, {});
        await tl.worker().start();
        await h.waitFor(() => seen.succeeded.length === 2, "both jobs to succeed");
        const job = await tl.getJob<{ sum: number }>(id);
        expect(job).toMatchObject({ id, lane: "work", state: "succeeded", result: { sum: 5 } });
        expect(job?.payload).toEqual({ a: 2, b: 3 });
        expect((await tl.getJob(none))?.result).toBeUndefined();
        expect(await tl.getJob("no-such-job")).toBeUndefined();
      });

      it("a result failing its schema or over maxResultBytes fails the job as invalid_result", async (ctx) => {
        const h = get();
        needs(h, ctx, "results", "get");
        const wrong = defineTask({
          name: "wrong",
          lane: "work",
          schema: z.object({}),
          retry: { maxAttempts: 3 },
          result: z.object({ ok: z.boolean() }),
          // @ts-expect-error: run must return the result schema's input
          run: () => ({ ok: "yes" }),
        });
        const huge = defineTask({
          name: "huge",
          lane: "work",
          schema: z.object({}),
          retry: { maxAttempts: 3 },
          run: () => "x".repeat(2_000),
        });
        const cyclic = defineTask({
          name: "cyclic",
          lane: "work",
          schema: z.object({}),
          run: () => {
            const o: Record<string, unknown> = {};
            o.self = o;
            return o;
          },
        });
        const { tl, seen } = setup(h, { tasks: [wrong, huge, cyclic], maxResultBytes: 1_024 });
        const a = await tl.publish(wrong, {});
        const b = await tl.publish(huge, {});
        const c = await tl.publish(cyclic, {});
        await tl.worker().start();
        await h.waitFor(() => seen.failed.length === 3, "three dead jobs");
        expect(seen.succeeded).toEqual([]);
        const errorOf = async (id: string) => (await tl.lane("work").get(id))?.error;
        // Unrecoverable: one attempt each, though the tasks allow three.
        expect(seen.failed.map((e) => e.attempt)).toEqual([1, 1, 1]);
        expect(await errorOf(a.id)).toMatchObject({
          name: "ValidationError",
          reason: "invalid_result",
        });
        expect(await errorOf(b.id)).toMatchObject({
          name: "ResultTooLargeError",
          reason: "invalid_result",
        });
        expect((await errorOf(b.id))?.message).toContain("1024");
        expect(await errorOf(c.id)).toMatchObject({
          name: "ValidationError",
          reason: "invalid_result",
        });
        expect(new ResultTooLargeError("t", 2, 1).code).toBe("RESULT_TOO_LARGE");
      });
    });

    describe("waitFor", () => {
      it("watch reports a watched job's finish, and only a watched one's", async (ctx) => {
        const h = get();
        needs(h, ctx, "waitFor");
        const q = await h.freshLane();
        const [a, b] = [h.job(), h.job()];
        await q.put([a, b]);
        const events: JobFinishedEvent[] = [];
        const stop = await h.adapter.watch?.([{ lane: q.name, jobId: a.id }], (e) =>
          events.push(e),
        );
        try {
          const taken = await h.reserveAll(q, 2, 10 * h.unit);
          expect(await q.ack(taken.map((j) => j.lock))).toEqual(["ok", "ok"]);
          await h.waitFor(() => events.length > 0, "the finished event");
          expect(events).toEqual([{ lane: q.name, jobId: a.id, state: "succeeded" }]);
        } finally {
          await stop?.();
        }
      });

      it("watch reports a watched job deleted or moved out of its lane", async (ctx) => {
        const h = get();
        needs(h, ctx, "waitFor");
        if (!h.caps.delete && !h.caps.move)
          ctx.skip(`${h.adapter.name} lacks capability delete, move`);
        const q = await h.freshLane();
        const other = await h.freshLane();
        const [a, b] = [h.job(), h.job()];
        await q.put([a, b]);
        const events: JobFinishedEvent[] = [];
        const stop = await h.adapter.watch?.(
          [
            { lane: q.name, jobId: a.id },
            { lane: q.name, jobId: b.id },
          ],
          (e) => events.push(e),
        );
        try {
          const want: JobFinishedEvent[] = [];
          if (h.caps.delete) {
            expect(await q.delete?.([a.id])).toBe(1);
            want.push({ lane: q.name, jobId: a.id, state: "deleted" });
          }
          if (h.caps.move) {
            expect(await q.move?.([b.id], other)).toEqual(["moved"]);
            want.push({ lane: q.name, jobId: b.id, state: "moved" });
          }
          await h.waitFor(() => events.length >= want.length, "the events");
          expect(events).toEqual(want);
        } finally {
          await stop?.();
        }
      });

      it("sees a job that finished before the waiter subscribed", async (ctx) => {
        const h = get();
        needs(h, ctx, "waitFor", "results", "get");
        const task = defineTask({
          name: "quick",
          lane: "work",
          schema: z.object({ n: z.number() }),
          result: z.number(),
          run: ({ n }) => n * 2,
        });
        const { tl, seen } = setup(h, { tasks: [task] });
        const { id } = await tl.publish(task, { n: 21 });
        const worker = tl.worker();
        await worker.start();
        await h.waitFor(() => seen.succeeded.length === 1, "the job to finish");
        await worker.stop();
        // Finished and stored before anyone waits: the read after subscribing sees it, at
        // once (not from the poll; the manual clock does not even move here).
        const started = performance.now();
        expect(await tl.waitFor<number>(id)).toBe(42);
        expect(performance.now() - started).toBeLessThan(WAIT_POLL_MS);
      });

      it("sees a finish after it subscribed, from its event (before the poll)", async (ctx) => {
        const h = get();
        needs(h, ctx, "waitFor", "results", "get");
        let release: () => void = () => {};
        const gate = new Promise<void>((resolve) => {
          release = resolve;
        });
        const task = defineTask({
          name: "gated",
          lane: "work",
          schema: z.object({}),
          result: z.string(),
          run: async () => {
            await gate;
            return "done";
          },
        });
        const { tl, seen } = setup(h, { tasks: [task] });
        const { id } = await tl.publish(task, {});
        await tl.worker().start();
        await h.waitFor(() => seen.started.length === 1, "the job to start");
        let settled: unknown;
        const waiting = tl.waitFor(id).then((v) => {
          settled = v;
        });
        // Subscribed and read (the job runs): now let it finish.
        await h.waitFor(async () => (await tl.getJob(id))?.state === "active", "active");
        const started = performance.now();
        release();
        // The manual clock moves only as the harness passes time, in steps far below the
        // poll: only the event can end the wait this early.
        await h.waitFor(() => settled !== undefined, "the waiter", WAIT_POLL_MS / 2);
        await waiting;
        expect(settled).toBe("done");
        expect(performance.now() - started).toBeLessThan(WAIT_POLL_MS);
      });

      it("publishAndWait resolves with the typed result", async (ctx) => {
        const h = get();
        needs(h, ctx, "waitFor", "results", "get");
        const task = defineTask({
          name: "greet",
          lane: "work",
          schema: z.object({ name: z.string() }),
          result: z.object({ greeting: z.string() }),
          run: ({ name }) => ({ greeting: `hello ${name}` }),
        });
        const { tl } = setup(h, { tasks: [task] });
        await tl.worker().start();
        const pending = tl.publishAndWait(task, { name: "ada" }, { timeoutMs: 60 * h.unit });
        const result = await passUntil(h, pending);
        const greeting: string = result.greeting;
        expect(greeting).toBe("hello ada");
      });

      it("rejects with JobFailedError carrying the stored error, also for canceled and expired", async (ctx) => {
        const h = get();
        needs(h, ctx, "waitFor", "get");
        const task = defineTask({
          name: "fails",
          lane: "work",
          schema: z.object({}),
          retry: { maxAttempts: 1 },
          run: () => {
            throw new RangeError("out of range");
          },
        });
        const { tl } = setup(h, { tasks: [task] });
        const { id } = await tl.publish(task, {});
        await tl.worker({ lanes: ["work"] }).start();
        const error = await passUntil(
          h,
          tl.waitFor(id).catch((e: unknown) => e),
        );
        expect(error).toBeInstanceOf(JobFailedError);
        expect(error).toMatchObject({
          code: "JOB_FAILED",
          jobId: id,
          lane: "work",
          state: "failed",
          error: { name: "RangeError", message: "out of range", reason: "error" },
        });
        expect((error as JobFailedError).error?.stack).toContain("out of range");
        if (h.caps.cancel) {
          const other = defineTask({
            name: "never",
            lane: "other",
            schema: z.object({}),
            run: () => {},
          });
          const { tl: tl2 } = setup(h, { tasks: [other] });
          const { id: canceled } = await tl2.publish(other, {});
          const waiting = tl2.waitFor(canceled).catch((e: unknown) => e);
          expect(await tl2.lane("other").cancel([canceled])).toEqual(["canceled"]);
          expect(await passUntil(h, waiting)).toMatchObject({ state: "canceled", jobId: canceled });
        }
      });

      it("rejects with WaitTimeoutError, JobNotFoundError or the signal's reason", async (ctx) => {
        const h = get();
        needs(h, ctx, "waitFor", "get");
        const task = defineTask({
          name: "idle",
          lane: "other",
          schema: z.object({}),
          run: () => {},
        });
        const { tl } = setup(h, { tasks: [task] });
        const { id } = await tl.publish(task, {});
        // Nobody runs lane "other": the job stays waiting.
        const timedOut = tl.waitFor(id, { timeoutMs: 2 * h.unit }).catch((e: unknown) => e);
        expect(await passUntil(h, timedOut)).toMatchObject({
          code: "WAIT_TIMEOUT",
          jobId: id,
          timeoutMs: 2 * h.unit,
        });
        expect(await timedOut).toBeInstanceOf(WaitTimeoutError);
        await expect(tl.waitFor("no-such-job")).rejects.toBeInstanceOf(JobNotFoundError);
        const controller = new AbortController();
        const aborted = tl.waitFor(id, { signal: controller.signal });
        controller.abort(new Error("enough"));
        await expect(aborted).rejects.toThrow("enough");
        await expect(tl.waitFor(id, { timeoutMs: -1 })).rejects.toBeInstanceOf(ConfigError);
        expect((await tl.getJob(id))?.state).toBe("waiting");
      });
    });

    describe("reports", () => {
      it("report stores progress and log lines of a held job, fenced by its lock", async (ctx) => {
        const h = get();
        needs(h, ctx, "reports", "get");
        const q = await h.freshLane({ logLimit: 3 });
        const put = h.job();
        await q.put([put]);
        const [job] = await h.reserveAll(q, 1, 30 * h.unit);
        const lock = (job as ReservedJob).lock;
        const line = (n: number) => ({ at: 1_000 + n, attempt: 1, message: `line ${n}` });
        expect(
          await q.report?.([{ lock, progress: '{"done":1}', logs: [line(1), line(2)] }]),
        ).toEqual(["ok"]);
        let info = await q.get?.(put.id);
        expect(info?.progress).toBe('{"done":1}');
        expect(info?.logs).toEqual([line(1), line(2)]);
        expect(info?.logsDropped ?? 0).toBe(0);
        // Three more lines (and two the worker dropped): the log keeps its last three.
        expect(
          await q.report?.([{ lock, logs: [line(3), line(4), line(5)], logsDropped: 2 }]),
        ).toEqual(["ok"]);
        info = await q.get?.(put.id);
        expect(info?.progress).toBe('{"done":1}');
        expect(info?.logs).toEqual([line(3), line(4), line(5)]);
        expect(info?.logsDropped).toBe(4);
        // A stale lock stores nothing.
        const stale = { ...lock, token: `${lock.token}x` };
        expect(await q.report?.([{ lock: stale, progress: '"stale"' }])).toEqual(["lost"]);
        // The last report rides on the ack, stored with the outcome.
        expect(
          await q.ack([{ ...lock, report: { progress: '{"done":2}', logs: [line(6)] } }]),
        ).toEqual(["ok"]);
        info = await q.get?.(put.id);
        expect(info?.state).toBe("succeeded");
        expect(info?.progress).toBe('{"done":2}');
        expect(info?.logs).toEqual([line(4), line(5), line(6)]);
        expect(await q.report?.([{ lock, progress: '"late"' }])).toEqual(["lost"]);
        expect((await q.get?.(put.id))?.progress).toBe('{"done":2}');
      });

      it("nack and release carry the job's last report", async (ctx) => {
        const h = get();
        needs(h, ctx, "reports", "get");
        const q = await h.freshLane();
        const [a, b] = [h.job(), h.job()];
        await q.put([a, b]);
        const taken = await h.reserveAll(q, 2, 30 * h.unit);
        const lockOf = (id: string) => (taken.find((j) => j.id === id) as ReservedJob).lock;
        const log = (message: string) => ({ at: 1, attempt: 1, message });
        expect(
          await q.nack([
            { lock: lockOf(a.id), dead: true, error: boom(), report: { logs: [log("why")] } },
          ]),
        ).toEqual(["ok"]);
        expect(
          await q.release([
            { lock: lockOf(b.id), uncounted: true, report: { progress: "0.5", logs: [log("x")] } },
          ]),
        ).toEqual(["ok"]);
        expect((await q.get?.(a.id))?.logs).toEqual([log("why")]);
        expect(await q.get?.(b.id)).toMatchObject({ progress: "0.5", logs: [log("x")] });
      });

      it("stores a handler's progress and log, batched: a chatty handler costs no call per line", async (ctx) => {
        const h = get();
        needs(h, ctx, "reports", "get");
        const calls: CallLog = new Map();
        let release: () => void = () => {};
        const gate = new Promise<void>((resolve) => {
          release = resolve;
        });
        const task = defineTask({
          name: "chatty",
          lane: "work",
          schema: z.object({}),
          run: async (_p, c) => {
            for (let i = 1; i <= 500; i++) {
              c.progress({ done: i, of: 1000 });
              c.log(`step ${i}`);
            }
            await gate;
            c.progress({ done: 1000, of: 1000 });
            c.log("finished");
          },
        });
        const { tl, seen } = setup(h, {
          tasks: [task],
          adapter: counting(h.adapter, ["report"], calls),
          lanes: [
            { name: "work", leaseMs: 20 * h.unit, longPollMs: h.unit, logLimit: 50 },
            { name: "other" },
          ],
        });
        const { id } = await tl.publish(task, {});
        await tl.worker({ reportMs: h.unit }).start();
        // While it runs, the reports of a period arrive in one call.
        const running = await h.waitFor(async () => {
          const j = await tl.getJob(id);
          return j?.state === "active" && j.logs?.length ? j : undefined;
        }, "the running job's stored log");
        expect(running.progress).toEqual({ done: 500, of: 1000 });
        expect(running.logs?.at(-1)).toMatchObject({ message: "step 500", attempt: 1 });
        expect(running.logs).toHaveLength(50);
        expect(running.logsDropped).toBe(450);
        expect(calls.get("report")?.length).toBe(1);
        release();
        await h.waitFor(() => seen.succeeded.length === 1, "the job to succeed");
        const done = await tl.getJob(id);
        expect(done?.progress).toEqual({ done: 1000, of: 1000 });
        expect(done?.logs?.at(-1)?.message).toBe("finished");
        expect(done?.logsDropped).toBe(451);
        // The last report rode on the ack: still one report call.
        expect(calls.get("report")?.length).toBe(1);
      });

      it("reports progress, expired and moved to lifecycle subscribers", async (ctx) => {
        const h = get();
        needs(h, ctx, "subscribe", "lifecycleEvents");
        if (!h.caps.reports && !h.caps.expiry && !h.caps.move) {
          ctx.skip(`${h.adapter.name} lacks capability reports, expiry, move`);
        }
        const q = await h.freshLane();
        const target = await h.freshLane();
        const seen: AdapterEvent[] = [];
        const stop = await h.adapter.subscribe?.((e) => {
          if (
            (e.lane === q.name || e.lane === target.name) &&
            ["progress", "expired", "moved"].includes(e.type)
          ) {
            seen.push(e);
          }
        });
        try {
          const want: AdapterEvent[] = [];
          if (h.caps.reports) {
            const job = h.job();
            await q.put([job]);
            const [held] = await h.reserveAll(q, 1, 30 * h.unit);
            expect(await q.report?.([{ lock: (held as ReservedJob).lock, progress: "1" }])).toEqual(
              ["ok"],
            );
            want.push({ type: "progress", lane: q.name, jobId: job.id });
          }
          if (h.caps.expiry) {
            const job = h.job({ expiresAt: h.now() + h.unit });
            await q.put([job]);
            await h.pass(2 * h.unit);
            // Swept before anything is handed out.
            expect((await q.reserve({ limit: 1, leaseMs: h.unit, waitMs: 0 })).jobs).toEqual([]);
            want.push({ type: "expired", lane: q.name, jobId: job.id });
          }
          if (h.caps.move) {
            const job = h.job();
            await q.put([job]);
            expect(await q.move?.([job.id], target)).toEqual(["moved"]);
            want.push({ type: "moved", lane: target.name, jobId: job.id });
          }
          await h.waitFor(() => seen.length >= want.length, "the lifecycle events");
          expect(seen).toEqual(want);
        } finally {
          await stop?.();
        }
      });

      it("bounds progress (typed error) and cuts a long log line with a marker", async (ctx) => {
        const h = get();
        needs(h, ctx, "reports", "get");
        let thrown: unknown;
        const task = defineTask({
          name: "big",
          lane: "work",
          schema: z.object({}),
          run: (_p, c) => {
            try {
              c.progress("x".repeat(MAX_PROGRESS_BYTES));
            } catch (e) {
              thrown = e;
            }
            c.progress("small");
            c.log("y".repeat(3 * MAX_LOG_LINE_LENGTH));
          },
        });
        const { tl, seen } = setup(h, { tasks: [task] });
        const { id } = await tl.publish(task, {});
        await tl.worker().start();
        await h.waitFor(() => seen.succeeded.length === 1, "the job to succeed");
        expect(thrown).toBeInstanceOf(PayloadTooLargeError);
        const job = await tl.getJob(id);
        expect(job?.progress).toBe("small");
        const line = job?.logs?.[0]?.message ?? "";
        expect(line.length).toBe(MAX_LOG_LINE_LENGTH);
        const [, kept, cut] = /^(y+) …\[cut (\d+) chars\]$/.exec(line) ?? [];
        expect((kept?.length ?? 0) + Number(cut)).toBe(3 * MAX_LOG_LINE_LENGTH);
      });
    });

    describe("tags and search", () => {
      it("lists and counts by state, task, tag and error name; summaries leave out payloads", async (ctx) => {
        const h = get();
        needs(h, ctx, "search", "tags");
        const q = await h.freshLane();
        const a = h.job({ task: "email", tags: ["customer:7", "vip"] });
        const b = h.job({ task: "email", tags: ["customer:8"] });
        const c = h.job({ task: "sms", tags: ["customer:7"] });
        const d = h.job({ task: "sms", runAt: h.now() + 100 * h.unit, tags: ["customer:7"] });
        await q.put([a, b, c, d]);
        const ids = async (filter: Parameters<NonNullable<LaneStore["listPage"]>>[0]) => {
          const out: string[] = [];
          let cursor: string | undefined;
          do {
            const page = await (q.listPage as NonNullable<LaneStore["listPage"]>)(filter, cursor);
            out.push(...page.jobs.map((j) => j.id));
            cursor = page.cursor;
          } while (cursor !== undefined);
          return out.sort();
        };
        const sorted = (...xs: string[]) => xs.sort();
        expect(await ids({ tag: "customer:7" })).toEqual(sorted(a.id, c.id, d.id));
        expect(await ids({ tag: "customer:7", state: "waiting" })).toEqual(sorted(a.id, c.id));
        expect(await ids({ task: "email" })).toEqual(sorted(a.id, b.id));
        expect(await ids({ task: "sms", state: "delayed" })).toEqual([d.id]);
        expect(await ids({ tag: "nobody" })).toEqual([]);
        expect(await ids({})).toEqual(sorted(a.id, b.id, c.id, d.id));
        expect(await q.count?.({ tag: "customer:7" })).toBe(3);
        expect(await q.count?.({ task: "sms" })).toBe(2);
        expect(await q.count?.({ state: "waiting" })).toBe(3);
        expect(await q.count?.({})).toBe(4);
        const full = await q.listPage?.({ tag: "vip" });
        expect(full?.jobs).toMatchObject([
          { id: a.id, payload: a.payload, tags: ["customer:7", "vip"] },
        ]);
        const summary = await q.listPage?.({ tag: "vip", fields: "summary" });
        expect(summary?.jobs).toMatchObject([
          { id: a.id, task: "email", state: "waiting", tags: ["customer:7", "vip"] },
        ]);
        expect(summary?.jobs[0]).not.toHaveProperty("payload");
        expect(summary?.jobs[0]).not.toHaveProperty("history");
        expect((await q.get?.(a.id))?.tags).toEqual(["customer:7", "vip"]);
        // Failed jobs by error name; a summary's error keeps no stack.
        const taken = await h.reserveAll(q, 3, 30 * h.unit);
        const items = taken.map((j, i) => ({
          lock: j.lock,
          dead: true as const,
          error: boom(i === 0 ? "RangeError" : "TypeError"),
        }));
        await q.nack(items);
        expect(await q.count?.({ state: "failed", errorName: "TypeError" })).toBe(2);
        const range = await q.listPage?.({ errorName: "RangeError", fields: "summary" });
        expect(range?.jobs.map((j) => j.id)).toEqual([taken[0]?.id]);
        expect(range?.jobs[0]?.error).toEqual({
          name: "RangeError",
          message: "boom",
          reason: "error",
        });
      });

      it("filters by the time a job entered its state (since, until)", async (ctx) => {
        const h = get();
        needs(h, ctx, "search");
        const q = await h.freshLane();
        const early = h.job();
        await q.put([early]);
        await h.pass(3 * h.unit);
        const mid = h.now() - h.unit;
        const late = h.job();
        await q.put([late]);
        const list = async (filter: { since?: number; until?: number }) =>
          ((await q.listPage?.({ ...filter, state: "waiting" }))?.jobs ?? []).map((j) => j.id);
        expect(await list({ since: mid })).toEqual([late.id]);
        expect(await list({ until: mid })).toEqual([early.id]);
        expect(await q.count?.({ until: mid })).toBe(1);
        const info = await q.get?.(late.id);
        expect(info?.changedAt).toBeGreaterThanOrEqual(mid);
      });

      it("pages with a stable cursor while jobs are added and removed", async (ctx) => {
        const h = get();
        needs(h, ctx, "search");
        const q = await h.freshLane();
        const first = Array.from({ length: 40 }, () => h.job());
        await q.put(first.slice(0, 20));
        await q.put(first.slice(20));
        const listed: string[] = [];
        let cursor: string | undefined;
        let pages = 0;
        const removed = new Set<string>();
        do {
          const page = await (q.listPage as NonNullable<LaneStore["listPage"]>)(
            { state: "waiting", pageSize: 7, fields: "summary" },
            cursor,
          );
          expect(page.jobs.length).toBeLessThanOrEqual(7);
          listed.push(...page.jobs.map((j) => j.id));
          cursor = page.cursor;
          pages++;
          // Between pages: new jobs arrive, and one job not yet listed leaves the state.
          await q.put([h.job(), h.job()]);
          const notYet = first.find((j) => !listed.includes(j.id) && !removed.has(j.id));
          if (notYet && pages === 2 && h.caps.delete) {
            expect(await q.delete?.([notYet.id])).toBe(1);
            removed.add(notYet.id);
          }
        } while (cursor !== undefined && pages < 100);
        const originals = new Set(first.map((j) => j.id));
        // Every job that stayed is listed exactly once; nothing twice; the removed one never.
        expect(listed.length).toBe(new Set(listed).size);
        const stayed = [...originals].filter((id) => !removed.has(id));
        expect(listed.filter((id) => originals.has(id)).sort()).toEqual(stayed.sort());
        await expect(q.listPage?.({}, "not-a-cursor")).rejects.toBeInstanceOf(ConfigError);
        await expect(q.listPage?.({ state: "lost" as "waiting" })).rejects.toBeInstanceOf(
          ConfigError,
        );
        await expect(q.count?.({ state: "lost" as "waiting" })).rejects.toBeInstanceOf(ConfigError);
      });

      it("lists from the same place when a cursor is passed again (a retry, a page seen twice)", async (ctx) => {
        const h = get();
        needs(h, ctx, "search");
        const q = await h.freshLane();
        const jobs = Array.from({ length: 12 }, () => h.job());
        await q.put(jobs);
        const page = (cursor?: string) =>
          (q.listPage as NonNullable<LaneStore["listPage"]>)(
            { state: "waiting", pageSize: 4, fields: "summary" },
            cursor,
          );
        const ids = (p: { jobs: Array<{ id: string }> }) => p.jobs.map((j) => j.id);
        const first = await page();
        const second = await page(first.cursor);
        // The first page's cursor again, once the listing has gone on: the second page again.
        const again = await page(first.cursor);
        expect(ids(again)).toEqual(ids(second));
        const third = await page(second.cursor);
        expect([...ids(first), ...ids(second), ...ids(third)]).toEqual(jobs.map((j) => j.id));
        expect(ids(await page(again.cursor))).toEqual(ids(third));
        // And the second's, after it was used: the third page again.
        expect(ids(await page(second.cursor))).toEqual(ids(third));
      });

      it("client: tags at publish, list and count by filter, refusing bad filters", async (ctx) => {
        const h = get();
        needs(h, ctx, "search", "tags");
        const task = defineTask({
          name: "t",
          lane: "other",
          schema: z.object({ n: z.number() }),
          run: () => {},
        });
        const { tl } = setup(h, { tasks: [task] });
        const lane = tl.lane("other");
        await tl.publish(task, { n: 1 }, { tags: ["a", "b"] });
        await tl.publishMany(task, [{ payload: { n: 2 }, tags: ["b"] }, { payload: { n: 3 } }]);
        const listed: number[] = [];
        for await (const job of lane.list({ tag: "b", pageSize: 1 })) {
          listed.push((JSON.parse(job.payload) as { n: number }).n);
        }
        expect(listed.sort()).toEqual([1, 2]);
        const summaries = [];
        for await (const job of lane.list({ state: "waiting", fields: "summary" }))
          summaries.push(job);
        expect(summaries).toHaveLength(3);
        expect(summaries[0]).not.toHaveProperty("payload");
        expect(await lane.count({ tag: "a" })).toBe(1);
        expect(await lane.count({ state: "waiting" })).toBe(3);
        expect(await lane.count()).toBe(3);
        await expect(tl.publish(task, { n: 4 }, { tags: ["dup", "dup"] })).rejects.toBeInstanceOf(
          ConfigError,
        );
        await expect(tl.publish(task, { n: 4 }, { tags: [""] })).rejects.toBeInstanceOf(
          ConfigError,
        );
        await expect(
          tl.publish(task, { n: 4 }, { tags: Array.from({ length: 17 }, (_, i) => `t${i}`) }),
        ).rejects.toBeInstanceOf(ConfigError);
        await expect(lane.count({ state: "nope" as "waiting" })).rejects.toBeInstanceOf(
          ConfigError,
        );
        expect(() => lane.list({ colour: "red" } as never)).toThrow(ConfigError);
        expect(await lane.count()).toBe(3);
      });
    });

    describe("failure groups", () => {
      it("groups failed jobs by error name with counts and the newest as the sample", async (ctx) => {
        const h = get();
        needs(h, ctx, "failureGroups");
        const q = await h.freshLane();
        await failJobs(h, q, 3, () => boom("TypeError", "old"));
        await h.pass(h.unit);
        const [newest] = await failJobs(h, q, 1, () => boom("TypeError", "newest"));
        await failJobs(h, q, 2, () => boom("RangeError", "range"));
        const groups = await q.failures?.();
        expect(groups?.map((g) => [g.group, g.count])).toEqual([
          ["TypeError", 4],
          ["RangeError", 2],
        ]);
        expect(groups?.[0]).toMatchObject({
          lane: q.name,
          sample: { jobId: newest, message: "newest", stack: "TypeError: newest\n    at test" },
        });
        expect(groups?.[0]?.sample.failedAt).toBeGreaterThan(0);
        // Retried jobs leave their group; an empty group is gone.
        const ranges =
          (await q.listPage?.({ errorName: "RangeError" }))?.jobs.map((j) => j.id) ?? [];
        expect(await q.retryFailed?.(ranges)).toBe(2);
        expect((await q.failures?.())?.map((g) => g.group)).toEqual(["TypeError"]);
      });

      it("retries and deletes a group in bounded batches", async (ctx) => {
        const h = get();
        needs(h, ctx, "failureGroups", "search", "retryFailed", "delete");
        const calls: CallLog = new Map();
        const task = defineTask({ name: "t", lane: "other", schema: z.object({}), run: () => {} });
        const { tl, namespace } = setup(h, {
          tasks: [task],
          adapter: counting(h.adapter, ["retryFailed", "delete"], calls),
        });
        const q = await h.adapter.lane(`${namespace}_other`, { maxStalls: 3, historyLimit: 20 });
        await failJobs(h, q, 2_100, (i) => boom(i % 3 === 0 ? "RangeError" : "TypeError"));
        const lane = tl.lane("other");
        expect((await lane.failures()).map((g) => [g.lane, g.group, g.count])).toEqual([
          ["other", "TypeError", 1_400],
          ["other", "RangeError", 700],
        ]);
        expect((await tl.failures()).map((g) => g.count)).toEqual([1_400, 700]);
        expect(await lane.retryFailed({ group: "TypeError", limit: 1_100 })).toBe(1_100);
        expect(await lane.retryFailed({ group: "TypeError" })).toBe(300);
        expect(calls.get("retryFailed")?.every((n) => n > 0 && n <= 1_000)).toBe(true);
        expect(calls.get("retryFailed")?.length).toBe(3);
        expect(await lane.count({ state: "waiting" })).toBe(1_400);
        expect(await lane.deleteJobs({ state: "failed", group: "RangeError" })).toBe(700);
        expect(calls.get("delete")?.every((n) => n > 0 && n <= 1_000)).toBe(true);
        expect(await lane.failures()).toEqual([]);
        expect(await lane.count({ state: "waiting" })).toBe(1_400);
        await expect(lane.deleteJobs({ state: "active" })).rejects.toBeInstanceOf(ConfigError);
        await expect(
          lane.deleteJobs({ state: "waiting", group: "TypeError" }),
        ).rejects.toBeInstanceOf(ConfigError);
        expect(await lane.deleteJobs({ state: "waiting", limit: 10 })).toBe(10);
        expect(await lane.count({ state: "waiting" })).toBe(1_390);
      });
    });

    describe("worker registry", () => {
      const registration = (id: string, lanes: string[]): WorkerRegistration => ({
        id,
        host: "host-a",
        pid: 4242,
        lanes,
        concurrency: 8,
        held: 1,
        running: 1,
        jobs: [{ lane: lanes[0] ?? "", jobId: "j1" }],
        startedAt: 1_000,
        version: "0.0.0-test",
      });

      it("lists registered workers until their entry lapses or they deregister", async (ctx) => {
        const h = get();
        needs(h, ctx, "workers");
        const lane = h.uniqueName();
        const a = registration(h.uniqueName("w"), [lane]);
        const b = { ...registration(h.uniqueName("w"), [lane]), startedAt: 2_000 };
        const mine = async () =>
          ((await h.adapter.workers?.()) ?? []).filter((w) => w.lanes.includes(lane));
        const before = h.now();
        await h.adapter.registerWorker?.(a, 3 * h.unit);
        await h.adapter.registerWorker?.(b, 30 * h.unit);
        const listed = await mine();
        expect(listed.map((w) => w.id)).toEqual([a.id, b.id]);
        expect(listed[0]).toMatchObject(a);
        expect(listed[0]?.lastHeartbeatAt).toBeGreaterThanOrEqual(before - h.caps.timeResolutionMs);
        expect(listed[0]?.expiresAt).toBe((listed[0]?.lastHeartbeatAt ?? 0) + 3 * h.unit);
        // a is not renewed: it lapses; b is renewed and stays.
        await h.pass(2 * h.unit);
        await h.adapter.registerWorker?.({ ...b, held: 0 }, 30 * h.unit);
        await h.waitFor(async () => (await mine()).length === 1, "a's entry to lapse");
        expect(await mine()).toMatchObject([{ id: b.id, held: 0 }]);
        await h.adapter.deregisterWorker?.(b.id);
        expect(await mine()).toEqual([]);
      });

      it("a running worker registers, renews on its heartbeat and deregisters at stop", async (ctx) => {
        const h = get();
        needs(h, ctx, "workers");
        let release: () => void = () => {};
        const gate = new Promise<void>((resolve) => {
          release = resolve;
        });
        const task = defineTask({
          name: "slow",
          lane: "work",
          schema: z.object({}),
          run: () => gate,
        });
        const { tl, seen } = setup(h, { tasks: [task] });
        const heartbeatMs = 2 * h.unit;
        const worker = tl.worker({ concurrency: 3, lanes: ["work"], heartbeatMs });
        await worker.start();
        const [me] = await tl.workers();
        expect(me).toMatchObject({
          id: worker.id,
          lanes: ["work"],
          concurrency: 3,
          held: 0,
          running: 0,
          pid: expect.any(Number),
          host: expect.any(String),
          version: expect.stringMatching(/^\d+\.\d+\.\d+/),
        });
        const { id } = await tl.publish(task, {});
        await h.waitFor(() => seen.started.length === 1, "the job to start");
        // Past three heartbeat periods (the entry's lapse) it is still there, renewed, and
        // shows the job it holds.
        const first = me?.lastHeartbeatAt ?? 0;
        await h.waitFor(async () => {
          const [w] = await tl.workers();
          return w !== undefined && w.lastHeartbeatAt > first + 3 * heartbeatMs && w.held === 1;
        }, "renewals past the lapse time");
        expect((await tl.workers())[0]).toMatchObject({
          held: 1,
          running: 1,
          jobs: [{ lane: "work", jobId: id }],
        });
        release();
        await worker.stop();
        expect(await tl.workers()).toEqual([]);
      });
    });

    describe("priority and promote", () => {
      it("setPriority re-orders waiting jobs and reports per id", async (ctx) => {
        const h = get();
        needs(h, ctx, "changePriority", "priorities");
        const q = await h.freshLane();
        const [a, b, c] = [h.job(), h.job(), h.job()];
        const d = h.job({ runAt: h.now() + 3 * h.unit });
        await q.put([a, b, c, d]);
        expect(await q.setPriority?.([c.id, d.id, "no-such-job"], 10)).toEqual([
          "ok",
          "ok",
          "not_found",
        ]);
        const [first] = await h.reserveAll(q, 1, 30 * h.unit);
        expect(first?.id).toBe(c.id);
        expect(first?.priority).toBe(10);
        expect(await q.setPriority?.([c.id], 5)).toEqual(["wrong_state"]);
        expect(await q.setPriority?.([b.id], -5)).toEqual(["ok"]);
        // The delayed job keeps its new priority when it falls due: it goes first.
        await h.pass(4 * h.unit);
        const rest = await h.reserveAll(q, 3, 30 * h.unit);
        expect(rest.map((j) => j.id)).toEqual([d.id, a.id, b.id]);
        if (h.caps.history) {
          expect((await q.get?.(b.id))?.history.map((e) => e.event)).toContain("prioritized");
        }
      });

      it("promote makes a delayed job due now", async (ctx) => {
        const h = get();
        needs(h, ctx, "promote");
        const q = await h.freshLane();
        const later = h.job({ runAt: h.now() + 1_000 * h.unit });
        const now = h.job();
        await q.put([later, now]);
        const [running] = await h.reserveAll(q, 1, 30 * h.unit);
        expect(running?.id).toBe(now.id);
        expect(await q.promote?.([later.id, now.id, "no-such-job"])).toEqual([
          "ok",
          "wrong_state",
          "not_found",
        ]);
        const [promoted] = await h.reserveAll(q, 1, 30 * h.unit);
        expect(promoted?.id).toBe(later.id);
        expect(promoted?.payload).toBe(later.payload);
        expect(await q.ack([promoted?.lock as ReservedJob["lock"]])).toEqual(["ok"]);
      });
    });

    describe("move", () => {
      it("moves waiting, delayed and failed jobs to another lane, keeping their ids", async (ctx) => {
        const h = get();
        needs(h, ctx, "move", "get");
        const from = await h.freshLane();
        const to = await h.freshLane();
        const waiting = h.job(h.caps.tags ? { tags: ["keep"] } : {});
        const delayed = h.job({ runAt: h.now() + 1_000 * h.unit });
        const taken = h.job({ id: h.uniqueName("taken") });
        await from.put([waiting, delayed]);
        const [failedId] = await failJobs(h, from, 1, () => boom());
        await to.put([{ ...taken }]);
        await from.put([{ ...taken, payload: '"other"' }]);
        expect(
          await from.move?.([waiting.id, delayed.id, failedId as string, taken.id, "nope"], to),
        ).toEqual(["moved", "moved", "moved", "duplicate", "not_found"]);
        for (const id of [waiting.id, delayed.id, failedId as string]) {
          expect(await from.get?.(id)).toBeUndefined();
        }
        expect(await to.get?.(waiting.id)).toMatchObject({
          lane: to.name,
          state: "waiting",
          payload: waiting.payload,
          ...(h.caps.tags ? { tags: ["keep"] } : {}),
        });
        expect(await to.get?.(delayed.id)).toMatchObject({
          state: "delayed",
          runAt: delayed.runAt,
        });
        // Out of the dead letter set, as a retry: waiting, attempts reset.
        expect(await to.get?.(failedId as string)).toMatchObject({ state: "waiting", attempt: 0 });
        expect((await from.get?.(taken.id))?.payload).toBe('"other"');
        if (h.caps.history) {
          const moved = (await to.get?.(waiting.id))?.history.find((e) => e.event === "moved");
          expect(moved?.detail).toBe(from.name);
        }
        const got = await h.reserveAll(to, 3, 30 * h.unit);
        expect(got.map((j) => j.id).sort()).toEqual([waiting.id, failedId, taken.id].sort());
        // Succeeded jobs stay where they finished.
        expect(await to.ack(got.map((j) => j.lock))).toEqual(["ok", "ok", "ok"]);
        expect(await to.move?.([waiting.id], from)).toEqual(["finished"]);
      });

      it("moves a held job: a put event names it, its late ack is refused, it runs in the target", async (ctx) => {
        const h = get();
        needs(h, ctx, "move", "subscribe");
        const from = await h.freshLane();
        const to = await h.freshLane();
        const put = h.job();
        await from.put([put]);
        const events: AdapterEvent[] = [];
        const stop = await h.adapter.subscribe?.((e) => events.push(e), { lifecycle: false });
        try {
          const [held] = await h.reserveAll(from, 1, 30 * h.unit);
          expect(await from.move?.([put.id], to)).toEqual(["moved"]);
          await h.waitFor(
            () => events.some((e) => e.type === "put" && e.jobId === put.id),
            "the put event",
          );
          expect(events.find((e) => e.type === "put")).toEqual({
            type: "put",
            lane: from.name,
            jobId: put.id,
            toLane: to.name,
          });
          const lock = (held as ReservedJob).lock;
          expect(await from.extend([lock], h.unit)).toEqual(["lost"]);
          expect(await from.ack([lock])).toEqual(["lost"]);
          const [again] = await h.reserveAll(to, 1, 30 * h.unit);
          expect(again?.id).toBe(put.id);
          // The interrupted delivery does not count.
          expect(again?.attempt).toBe(1);
          expect(await to.ack([(again as ReservedJob).lock])).toEqual(["ok"]);
        } finally {
          await stop?.();
        }
      });

      it("a worker's handler aborts with the put event and the job runs again in the target lane", async (ctx) => {
        const h = get();
        needs(h, ctx, "move", "subscribe", "get");
        const runs: Array<{ lane: string; reason?: unknown }> = [];
        const task = defineTask({
          name: "movable",
          lane: "work",
          schema: z.object({}),
          run: (_p, c) =>
            c.lane === "other"
              ? void runs.push({ lane: c.lane })
              : new Promise<void>((_resolve, reject) => {
                  c.signal.addEventListener("abort", () => {
                    runs.push({ lane: c.lane, reason: c.signal.reason });
                    reject(c.signal.reason);
                  });
                }),
        });
        const { tl, seen } = setup(h, { tasks: [task] });
        const { id } = await tl.publish(task, {});
        await tl.worker().start();
        await h.waitFor(() => seen.started.length === 1, "the job to start");
        expect(await tl.lane("work").move([id], "other")).toEqual(["moved"]);
        await h.waitFor(() => seen.succeeded.length === 1, "the job to succeed in lane other");
        expect(seen.put).toMatchObject([{ lane: "work", jobId: id }]);
        expect(runs[0]?.lane).toBe("work");
        expect(runs[0]?.reason).toBeInstanceOf(MovedError);
        expect(runs[1]).toEqual({ lane: "other" });
        expect(seen.succeeded).toMatchObject([{ lane: "other", jobId: id }]);
        expect(seen.failed).toEqual([]);
        expect(await tl.getJob(id)).toMatchObject({ lane: "other", state: "succeeded" });
        expect(await tl.lane("work").get(id)).toBeUndefined();
        await expect(tl.lane("work").move([id], "nowhere")).rejects.toBeInstanceOf(ConfigError);
      });
    });

    describe("expiry", () => {
      it("a job not started by its expiry ends expired: never handed out, counted, listed", async (ctx) => {
        const h = get();
        needs(h, ctx, "expiry", "get");
        const q = await h.freshLane();
        const expiring = h.job({ expiresAt: h.now() + 2 * h.unit });
        const delayed = h.job({ runAt: h.now() + h.unit, expiresAt: h.now() + 2 * h.unit });
        const kept = h.job({ expiresAt: h.now() + 1_000 * h.unit });
        await q.put([expiring, delayed]);
        expect((await q.get?.(expiring.id))?.expiresAt).toBe(expiring.expiresAt);
        await h.pass(3 * h.unit);
        await q.put([kept]);
        const got = await h.reserveAll(q, 1, 30 * h.unit);
        expect(got.map((j) => j.id)).toEqual([kept.id]);
        expect((await q.reserve({ limit: 10, leaseMs: h.unit, waitMs: 0 })).jobs).toEqual([]);
        for (const id of [expiring.id, delayed.id]) {
          const info = await q.get?.(id);
          expect(info).toMatchObject({ state: "expired", attempt: 0 });
          expect(info?.finishedAt).toBeGreaterThanOrEqual(expiring.expiresAt as number);
          if (h.caps.history) expect(info?.history.map((e) => e.event)).toContain("expired");
        }
        if (h.caps.exactCounts) expect((await q.counts()).expired).toBe(2);
        if (h.caps.list) {
          const listed: string[] = [];
          for await (const info of q.list?.({ state: "expired" }) ?? []) listed.push(info.id);
          expect(listed.sort()).toEqual([expiring.id, delayed.id].sort());
        }
        if (h.caps.search) expect(await q.count?.({ state: "expired" })).toBe(2);
      });

      it("a job that started in time runs; a retry due past its expiry expires", async (ctx) => {
        const h = get();
        needs(h, ctx, "expiry", "get");
        const q = await h.freshLane();
        const job = h.job({ expiresAt: h.now() + 3 * h.unit });
        await q.put([job]);
        const [first] = await h.reserveAll(q, 1, 30 * h.unit);
        await h.pass(4 * h.unit);
        // Running past its expiry is fine: it started in time.
        expect(
          await q.nack([
            { lock: (first as ReservedJob).lock, runAt: h.now() + h.unit, error: boom() },
          ]),
        ).toEqual(["ok"]);
        await h.pass(2 * h.unit);
        expect((await q.reserve({ limit: 1, leaseMs: h.unit, waitMs: 0 })).jobs).toEqual([]);
        expect(await q.get?.(job.id)).toMatchObject({
          state: "expired",
          error: { message: "boom" },
        });
      });

      it("client: publish with expiresInMs; bad expiries are refused; waitFor rejects as expired", async (ctx) => {
        const h = get();
        needs(h, ctx, "expiry", "get");
        const task = defineTask({
          name: "ttl",
          lane: "other",
          schema: z.object({}),
          run: () => {},
        });
        const { tl } = setup(h, { tasks: [task] });
        const { id } = await tl.publish(task, {}, { expiresInMs: 2 * h.unit });
        await expect(tl.publish(task, {}, { expiresInMs: 0 })).rejects.toBeInstanceOf(ConfigError);
        await expect(
          tl.publish(task, {}, { delayMs: 5 * h.unit, expiresInMs: 5 * h.unit }),
        ).rejects.toBeInstanceOf(ConfigError);
        await expect(
          tl.publish(task, {}, { expiresAt: h.now() + h.unit, expiresInMs: h.unit }),
        ).rejects.toBeInstanceOf(ConfigError);
        await expect(tl.publish(task, {}, { expiresAt: h.now() - 1 })).rejects.toBeInstanceOf(
          ConfigError,
        );
        if (h.caps.waitFor) {
          const waiting = tl.waitFor(id).catch((e: unknown) => e);
          expect(await passUntil(h, waiting)).toMatchObject({ state: "expired", jobId: id });
        } else {
          await h.pass(3 * h.unit);
          expect((await tl.getJob(id))?.state).toBe("expired");
        }
      });
    });
  });
}

/**
 * Await `promise`, letting the harness's time pass meanwhile (a manual clock only moves
 * when told to; on real backends this just waits).
 */
async function passUntil<T>(h: Harness, promise: Promise<T>): Promise<T> {
  let done = false;
  const tracked = promise.finally(() => {
    done = true;
  });
  await h.waitFor(() => done, "the promise to settle");
  return tracked;
}
