/**
 * Telemetry on the memory adapter: the trace and metrics scenarios, how retries, time
 * limits, stalls and cancels show on spans, the lane depth gauge's throttle, and what is
 * recorded when telemetry (or a part of it) is off.
 */
import { trace } from "@opentelemetry/api";
import type { ReadableSpan } from "@opentelemetry/sdk-trace";
import * as semconv from "@opentelemetry/semantic-conventions/incubating";
import { createMemoryAdapter } from "@tasklane/adapter-memory";
import { createTasklane, defineTask, type JobContext } from "@tasklane/core";
import { afterEach, describe, expect, it } from "vitest";
import { z } from "zod";
import * as names from "../src/index.ts";
import { createTelemetry, METRICS } from "../src/index.ts";
import { createOtel, type Otel, until } from "./helpers.ts";
import { metricsEqualTheQueue, traceFromPublishToRun } from "./scenarios.ts";

const otels: Otel[] = [];
afterEach(async () => {
  await Promise.all(otels.splice(0).map((o) => o.shutdown()));
});
const otel = () => {
  const o = createOtel();
  otels.push(o);
  return o;
};

/** The process spans of a job, in the order they ended. */
const processSpans = (spans: readonly ReadableSpan[], jobId: string) =>
  spans.filter(
    (s) => s.name.startsWith("process ") && s.attributes["messaging.message.id"] === jobId,
  );

describe("telemetry on the memory adapter", () => {
  it("makes one trace from publish to run, the handler's spans inside it", async () => {
    await traceFromPublishToRun(createMemoryAdapter(), otel());
  });

  it("records metrics equal to what the queue and the worker report", async () => {
    await metricsEqualTheQueue(createMemoryAdapter(), otel());
  });

  it("shows a retry, a time limit, a stall and a cancel on the process spans", {
    timeout: 30_000,
  }, async () => {
    const o = otel();
    const flakySeen = new Set<string>();
    const started = new Set<string>();
    /** Wait for the abort of a job's signal (the cancel's and the time limit's runs). */
    const untilAborted = (ctx: JobContext) =>
      new Promise<void>((resolve) => ctx.signal.addEventListener("abort", () => resolve()));
    const task = defineTask({
      name: "t",
      lane: "q",
      schema: z.object({ kind: z.enum(["flaky", "slow", "stall", "cancel"]) }),
      timeLimitMs: 300,
      retry: { maxAttempts: 2, baseMs: 0, jitter: 0 },
      run: async ({ kind }, ctx) => {
        started.add(ctx.jobId);
        if (kind === "flaky" && !flakySeen.has(ctx.jobId)) {
          flakySeen.add(ctx.jobId);
          throw new TypeError("first try fails");
        }
        if (kind === "slow") await untilAborted(ctx); // past timeLimitMs, both attempts
        if (kind === "cancel") await untilAborted(ctx);
        if (kind === "stall" && ctx.attempt === 1) {
          // A real event-loop stall: the process does nothing else for longer than the
          // lease, so the lease is gone when it comes back (the job runs again).
          const until = Date.now() + 1_500;
          while (Date.now() < until) {}
        }
      },
    });
    const tl = createTasklane({
      adapter: createMemoryAdapter(),
      lanes: [{ name: "q", leaseMs: 1_000 }],
      tasks: [task],
      instrumentation: createTelemetry({
        tracerProvider: o.tracerProvider,
        meterProvider: o.meterProvider,
      }),
    });
    const locks: string[] = [];
    tl.events.on("lock_lost", (e) => locks.push(e.jobId));
    try {
      const worker = tl.worker({ concurrency: 4 });
      await worker.start();
      const flaky = await tl.publish(task, { kind: "flaky" });
      const slow = await tl.publish(task, { kind: "slow" });
      const cancel = await tl.publish(task, { kind: "cancel" });
      await until(() => started.has(cancel.id), "the job to cancel to start");
      await tl.lane("q").cancel([cancel.id]);
      await until(
        () =>
          processSpans(o.spans(), flaky.id).length === 2 &&
          processSpans(o.spans(), slow.id).length === 2 &&
          processSpans(o.spans(), cancel.id).length === 1,
        "the flaky, slow and canceled jobs' spans",
      );
      // last, alone: the stall blocks every other job's timers too
      const stall = await tl.publish(task, { kind: "stall" });
      await until(() => locks.includes(stall.id), "the stalled job's lock loss");
      await until(() => processSpans(o.spans(), stall.id).length === 2, "the stalled job's spans");
      await worker.stop({ graceMs: 0 });
      const spans = o.spans();

      const [failedTry, retry] = processSpans(spans, flaky.id) as [ReadableSpan, ReadableSpan];
      expect(failedTry.attributes["tasklane.outcome"]).toBe("retried");
      expect(failedTry.attributes["tasklane.job.attempt"]).toBe(1);
      expect(failedTry.attributes["error.type"]).toBe("TypeError");
      expect(failedTry.attributes["tasklane.fail.reason"]).toBe("error");
      expect(failedTry.status).toEqual({ code: 2, message: "first try fails" });
      expect(failedTry.events.map((e) => e.name)).toEqual(["exception", "tasklane.job.retry"]);
      expect(failedTry.events[0]?.attributes?.["exception.type"]).toBe("TypeError");
      expect(typeof failedTry.events[1]?.attributes?.["tasklane.retry.run_at"]).toBe("number");
      expect(retry.attributes["tasklane.outcome"]).toBe("succeeded");
      expect(retry.attributes["tasklane.job.attempt"]).toBe(2);
      // both attempts are children of the one publish span
      expect(retry.parentSpanContext?.spanId).toBe(failedTry.parentSpanContext?.spanId);
      expect(retry.spanContext().traceId).toBe(failedTry.spanContext().traceId);

      const [timedOut, deadSlow] = processSpans(spans, slow.id) as [ReadableSpan, ReadableSpan];
      expect(timedOut.attributes["tasklane.outcome"]).toBe("retried");
      expect(deadSlow.attributes["tasklane.outcome"]).toBe("dead");
      for (const s of [timedOut, deadSlow]) {
        expect(s.attributes["error.type"]).toBe("TimeoutError");
        expect(s.attributes["tasklane.fail.reason"]).toBe("timeout");
        expect(s.status.code).toBe(2);
      }

      const [canceled] = processSpans(spans, cancel.id) as [ReadableSpan];
      expect(canceled.attributes["tasklane.outcome"]).toBe("canceled");
      expect(canceled.events.map((e) => e.name)).toEqual(["tasklane.job.canceled"]);

      const [stalled, rerun] = processSpans(spans, stall.id) as [ReadableSpan, ReadableSpan];
      expect(rerun.attributes["tasklane.outcome"]).toBe("succeeded");
      expect(stalled.attributes["tasklane.outcome"]).toBe("stalled");
      expect(stalled.events.map((e) => e.name)).toEqual(["tasklane.job.lock_lost"]);
      expect(stalled.status.code).toBe(2);

      const m = await o.collect();
      const lane = { "tasklane.lane": "q", "tasklane.task": "t" };
      expect(m.sum(METRICS.stalled, lane)).toBe(1);
      expect(m.sum(METRICS.lockLost, lane)).toBe(1);
      expect(m.sum(METRICS.canceled, lane)).toBe(1);
      expect(m.sum(METRICS.failed, { ...lane, "tasklane.fail.reason": "timeout" })).toBe(2);
      expect(m.sum(METRICS.dead, { ...lane, "tasklane.fail.reason": "timeout" })).toBe(1);
      expect(m.histogram(METRICS.runDuration, { "tasklane.outcome": "stalled" }).count).toBe(1);
    } finally {
      await tl.close({ graceMs: 0 });
    }
  });

  it("reads each lane's counts at most once per depthIntervalMs, however often it is scraped", async () => {
    for (const [depthIntervalMs, reads] of [
      [60_000, 1],
      [0, 4],
    ] as const) {
      const o = otel();
      const task = defineTask({ name: "t", lane: "a", schema: z.object({}), run: () => {} });
      const tl = createTasklane({
        adapter: createMemoryAdapter(),
        lanes: [{ name: "a" }, { name: "b" }],
        tasks: [task],
        instrumentation: createTelemetry({ meterProvider: o.meterProvider, depthIntervalMs }),
      });
      await tl.publish(task, {});
      // A collection counts the calls answered by then: the 5th sees the first 4 reads
      let m = await o.collect();
      for (let i = 0; i < 4; i++) m = await o.collect();
      for (const lane of ["a", "b"]) {
        expect(
          m.sum(METRICS.adapterCalls, { "tasklane.lane": lane, "tasklane.call": "counts" }),
          `${lane} at ${depthIntervalMs} ms`,
        ).toBe(reads);
      }
      expect(m.sum(METRICS.laneJobs, { "tasklane.lane": "a", "tasklane.state": "waiting" })).toBe(
        1,
      );
      await tl.close();
    }
  });

  it("counts every method of a lane store under its name, and a stopped worker has no free slots", async () => {
    const o = otel();
    const task = defineTask({ name: "t", lane: "q", schema: z.object({}), run: () => {} });
    const telemetry = createTelemetry({ meterProvider: o.meterProvider });
    const tl = createTasklane({
      adapter: createMemoryAdapter(),
      lanes: [{ name: "q" }],
      tasks: [task],
      instrumentation: telemetry,
    });
    const store = await tl.adapter.lane("q", { maxStalls: 3, historyLimit: 20 });
    // a method a later contract (or an adapter) adds is kept, bound to the store, and counted
    const extended = Object.assign(Object.create(store) as typeof store, {
      frobnicate: async () => store.name,
    });
    const wrapped = telemetry.wrapLane?.(extended, "q") as typeof store & {
      frobnicate(): Promise<string>;
    };
    expect(await wrapped.frobnicate()).toBe(store.name);
    expect(await wrapped.isPaused?.()).toBe(false);
    const worker = tl.worker({ concurrency: 7 });
    await worker.start();
    let m = await o.collect();
    expect(m.sum(METRICS.workerFreeSlots)).toBe(7);
    await worker.stop();
    m = await o.collect();
    expect(m.sum(METRICS.workerFreeSlots)).toBe(0);
    const calls = (call: string) =>
      m.sum(METRICS.adapterCalls, { "tasklane.lane": "q", "tasklane.call": call });
    expect([calls("frobnicate"), calls("isPaused")]).toEqual([1, 1]);
    await tl.close();
  });

  it("moves a job to another lane with its trace context, through the counted stores", async () => {
    const o = otel();
    const ran: string[] = [];
    const task = defineTask({
      name: "t",
      lane: "a",
      schema: z.object({}),
      run: (_p, ctx) => void ran.push(ctx.lane),
    });
    const tl = createTasklane({
      adapter: createMemoryAdapter(),
      lanes: [{ name: "a" }, { name: "b" }],
      tasks: [task],
      instrumentation: createTelemetry({
        tracerProvider: o.tracerProvider,
        meterProvider: o.meterProvider,
      }),
    });
    const { id } = await tl.publish(task, {});
    expect(await tl.lane("a").move([id], "b")).toEqual(["moved"]);
    const worker = tl.worker({ lanes: ["b"] });
    await worker.start();
    await until(() => o.spans().some((s) => s.name === "process b"), "the moved job's run");
    await tl.close();
    expect(ran).toEqual(["b"]);
    const publish = o.spans().find((s) => s.name === "publish a");
    const run = o.spans().find((s) => s.name === "process b");
    expect(run?.parentSpanContext?.spanId).toBe(publish?.spanContext().spanId);
    const m = await o.collect();
    expect(m.sum(METRICS.adapterCalls, { "tasklane.lane": "a", "tasklane.call": "move" })).toBe(1);
  });

  it("with processSpanParent link, starts each run's trace of its own, linked to the publish span", async () => {
    const o = otel();
    const handlerTracer = o.tracerProvider.getTracer("app");
    const task = defineTask({
      name: "t",
      lane: "q",
      schema: z.object({ i: z.number() }),
      run: ({ i }) => handlerTracer.startSpan(`handler ${i}`).end(),
    });
    const tl = createTasklane({
      adapter: createMemoryAdapter(),
      lanes: [{ name: "q" }],
      tasks: [task],
      instrumentation: createTelemetry({
        tracerProvider: o.tracerProvider,
        meterProvider: o.meterProvider,
        processSpanParent: "link",
      }),
    });
    // one publish call: its three jobs carry one trace context
    await tl.publishMany(task, [
      { payload: { i: 0 } },
      { payload: { i: 1 } },
      { payload: { i: 2 } },
    ]);
    const worker = tl.worker({ concurrency: 3 });
    await worker.start();
    await until(() => o.spans().filter((s) => s.name === "process q").length === 3, "the runs");
    await worker.stop();
    await tl.close();

    const spans = o.spans();
    const publish = spans.filter((s) => s.name === "publish q");
    expect(publish).toHaveLength(1);
    const producer = (publish[0] as ReadableSpan).spanContext();
    const runs = spans.filter((s) => s.name === "process q");
    for (const run of runs) {
      expect(run.parentSpanContext).toBeUndefined();
      expect(run.spanContext().traceId).not.toBe(producer.traceId);
      expect(run.links.map((l) => [l.context.traceId, l.context.spanId])).toEqual([
        [producer.traceId, producer.spanId],
      ]);
    }
    expect(new Set(runs.map((r) => r.spanContext().traceId)).size).toBe(3);
    // each handler's span is inside its own run
    for (let i = 0; i < 3; i++) {
      const handler = spans.find((s) => s.name === `handler ${i}`);
      const run = runs.find((r) => r.spanContext().spanId === handler?.parentSpanContext?.spanId);
      expect(run?.spanContext().traceId).toBe(handler?.spanContext().traceId);
    }
  });

  it("makes no span with traces off, records no metric with metrics off", async () => {
    for (const off of ["traces", "metrics"] as const) {
      const o = otel();
      const seen: unknown[] = [];
      const task = defineTask({
        name: "t",
        lane: "q",
        schema: z.object({}),
        // the handler runs in no tasklane span
        run: () => void seen.push(trace.getActiveSpan()),
      });
      const telemetry = createTelemetry({
        tracerProvider: o.tracerProvider,
        meterProvider: o.meterProvider,
        [off]: false,
      });
      const tl = createTasklane({
        adapter: createMemoryAdapter(),
        lanes: [{ name: "q" }],
        tasks: [task],
        instrumentation: telemetry,
      });
      const r = await tl.publish(task, {});
      const worker = tl.worker();
      await worker.start();
      await until(() => seen.length === 1, "the job to run");
      await until(async () => (await tl.lane("q").counts()).succeeded === 1, "its ack");
      await worker.stop();
      const m = await o.collect();
      const lane = { "tasklane.lane": "q", "tasklane.task": "t" };
      if (off === "traces") {
        expect(o.spans()).toEqual([]);
        expect(seen).toEqual([undefined]);
        expect(m.sum(METRICS.succeeded, lane)).toBe(1);
      } else {
        expect(m.all).toEqual([]);
        expect(telemetry.wrapLane).toBeUndefined();
        expect(o.spans().map((s) => s.name)).toEqual(["publish q", "process q"]);
        expect(seen).toHaveLength(1);
      }
      const store = await tl.adapter.lane("q", { maxStalls: 3, historyLimit: 20 });
      expect((await store.get?.(r.id))?.state).toBe("succeeded");
      await tl.close();
    }
  });

  it("records nothing, and runs every job, with no OpenTelemetry SDK registered", async () => {
    const ran: string[] = [];
    const task = defineTask({
      name: "t",
      lane: "q",
      schema: z.object({}),
      run: (_p, ctx) => void ran.push(ctx.jobId),
    });
    // the global providers: no SDK registered, so the API's no-op tracer and meter
    const tl = createTasklane({
      adapter: createMemoryAdapter(),
      lanes: [{ name: "q" }],
      tasks: [task],
      instrumentation: createTelemetry(),
    });
    const r = await tl.publishMany(task, [{ payload: {} }, { payload: {} }]);
    const worker = tl.worker();
    await worker.start();
    await until(() => ran.length === 2, "both jobs");
    expect(ran.sort()).toEqual(r.map((x) => x.id).sort());
    await tl.close();
  });

  it("names its attributes, operations and metrics as the semantic conventions do", () => {
    expect(names.ATTR_MESSAGING_SYSTEM).toBe(semconv.ATTR_MESSAGING_SYSTEM);
    expect(names.ATTR_MESSAGING_OPERATION_TYPE).toBe(semconv.ATTR_MESSAGING_OPERATION_TYPE);
    expect(names.ATTR_MESSAGING_OPERATION_NAME).toBe(semconv.ATTR_MESSAGING_OPERATION_NAME);
    expect(names.ATTR_MESSAGING_DESTINATION_NAME).toBe(semconv.ATTR_MESSAGING_DESTINATION_NAME);
    expect(names.ATTR_MESSAGING_MESSAGE_ID).toBe(semconv.ATTR_MESSAGING_MESSAGE_ID);
    expect(names.ATTR_MESSAGING_BATCH_MESSAGE_COUNT).toBe(
      semconv.ATTR_MESSAGING_BATCH_MESSAGE_COUNT,
    );
    expect(names.ATTR_ERROR_TYPE).toBe(semconv.ATTR_ERROR_TYPE);
    expect(semconv.MESSAGING_OPERATION_TYPE_VALUE_SEND).toBe("send");
    expect(semconv.MESSAGING_OPERATION_TYPE_VALUE_PROCESS).toBe("process");
  });
});
