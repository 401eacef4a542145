/**
 * What telemetry must show on every backend, as functions each backend's test file runs:
 * one trace from publish to run with the handler's spans inside it, and metrics equal to
 * what the queue itself reports.
 */
import { context, propagation, SpanKind } from "@opentelemetry/api";
import {
  type Adapter,
  createTasklane,
  defineTask,
  type Tasklane,
  UnrecoverableError,
} from "@tasklane/core";
import { expect } from "vitest";
import { z } from "zod";
import { createTelemetry, METRICS } from "../src/index.ts";
import { type Otel, one, until } from "./helpers.ts";

export interface ScenarioOptions {
  /** Lane names on a shared backend must not collide between tests. */
  namespace?: string;
  /** Lease for the lane, ms (SQS: whole seconds). */
  leaseMs?: number;
}

/**
 * Publish inside an application's span (with baggage), run the job: the publish span is a
 * child of the application's, the process span a child of the publish span and linked to
 * it, in one trace, and the handler's own span a child of the process span; baggage set
 * by the publisher reaches the handler.
 */
export async function traceFromPublishToRun(
  adapter: Adapter,
  otel: Otel,
  options: ScenarioOptions = {},
): Promise<void> {
  const appTracer = otel.tracerProvider.getTracer("app");
  const seen: Array<{ tenant: string | undefined; jobId: string }> = [];
  const sendMail = defineTask({
    name: "send-mail",
    lane: "mail",
    schema: z.object({ to: z.string() }),
    run: async (_payload, ctx) => {
      const tenant = propagation.getActiveBaggage()?.getEntry("tenant")?.value;
      seen.push({ tenant, jobId: ctx.jobId });
      await appTracer.startActiveSpan("smtp send", async (span) => {
        await new Promise((r) => setImmediate(r));
        span.end();
      });
    },
  });
  const tl = createTasklane({
    adapter,
    lanes: [{ name: "mail", ...(options.leaseMs ? { leaseMs: options.leaseMs } : {}) }],
    tasks: [sendMail],
    instrumentation: createTelemetry({
      tracerProvider: otel.tracerProvider,
      meterProvider: otel.meterProvider,
    }),
    ...(options.namespace ? { namespace: options.namespace } : {}),
  });
  try {
    const baggage = propagation.createBaggage({ tenant: { value: "acme" } });
    const jobId = await appTracer.startActiveSpan("POST /signup", async (request) => {
      const ctx = propagation.setBaggage(context.active(), baggage);
      const r = await context.with(ctx, () => tl.publish(sendMail, { to: "ada@example.com" }));
      request.end();
      return r.id;
    });
    const worker = tl.worker({ concurrency: 4 });
    await worker.start();
    await until(() => otel.spans().some((s) => s.name === "process mail"), "the process span");
    await worker.stop();
    expect(seen).toEqual([{ tenant: "acme", jobId }]);

    const spans = otel.spans();
    const request = one(spans, "POST /signup");
    const publish = one(spans, "publish mail");
    const process = one(spans, "process mail");
    const smtp = one(spans, "smtp send");
    const traceId = request.spanContext().traceId;
    for (const s of [publish, process, smtp]) expect(s.spanContext().traceId).toBe(traceId);

    expect(publish.kind).toBe(SpanKind.PRODUCER);
    expect(publish.parentSpanContext?.spanId).toBe(request.spanContext().spanId);
    expect(publish.attributes).toEqual({
      "messaging.system": "tasklane",
      "messaging.operation.type": "send",
      "messaging.operation.name": "publish",
      "messaging.destination.name": "mail",
      "messaging.message.id": jobId,
      "tasklane.task": "send-mail",
    });

    expect(process.kind).toBe(SpanKind.CONSUMER);
    expect(process.parentSpanContext?.spanId).toBe(publish.spanContext().spanId);
    expect(process.links.map((l) => l.context.spanId)).toEqual([publish.spanContext().spanId]);
    expect(process.attributes).toEqual({
      "messaging.system": "tasklane",
      "messaging.operation.type": "process",
      "messaging.operation.name": "process",
      "messaging.destination.name": "mail",
      "messaging.message.id": jobId,
      "tasklane.task": "send-mail",
      "tasklane.job.attempt": 1,
      "tasklane.outcome": "succeeded",
    });
    expect(process.status.code).toBe(0); // UNSET: success is not an error
    expect(smtp.parentSpanContext?.spanId).toBe(process.spanContext().spanId);
    // the process span covers the run: it starts before the handler's span and ends after
    expect(hrMs(process.startTime)).toBeLessThanOrEqual(hrMs(smtp.startTime));
    expect(hrMs(process.endTime)).toBeGreaterThanOrEqual(hrMs(smtp.endTime));
  } finally {
    await tl.close({ graceMs: 0 });
  }
}

function hrMs([s, ns]: [number, number]): number {
  return s * 1_000 + ns / 1e6;
}

/**
 * 5 jobs that succeed, 3 that fail once and then succeed, 2 that throw
 * UnrecoverableError: the counters, histograms and gauges equal what the queue and the
 * worker report.
 */
export async function metricsEqualTheQueue(
  adapter: Adapter,
  otel: Otel,
  options: ScenarioOptions = {},
): Promise<void> {
  const failedOnce = new Set<string>();
  const work = defineTask({
    name: "work",
    lane: "jobs",
    schema: z.object({ kind: z.enum(["ok", "flaky", "broken"]) }),
    retry: { maxAttempts: 3, baseMs: 0, jitter: 0 },
    run: ({ kind }, ctx) => {
      if (kind === "broken") throw new UnrecoverableError("broken for good");
      if (kind === "flaky" && !failedOnce.has(ctx.jobId)) {
        failedOnce.add(ctx.jobId);
        throw new Error("flaky once");
      }
    },
  });
  const tl: Tasklane = createTasklane({
    adapter,
    lanes: [{ name: "jobs", ...(options.leaseMs ? { leaseMs: options.leaseMs } : {}) }],
    tasks: [work],
    instrumentation: createTelemetry({
      tracerProvider: otel.tracerProvider,
      meterProvider: otel.meterProvider,
      depthIntervalMs: 0,
    }),
    ...(options.namespace ? { namespace: options.namespace } : {}),
  });
  const ended = { succeeded: 0, failed: 0, retrying: 0 };
  tl.events.on("succeeded", () => void ended.succeeded++);
  tl.events.on("failed", () => void ended.failed++);
  tl.events.on("retrying", () => void ended.retrying++);
  try {
    await tl.publishMany(
      work,
      [1, 2, 3, 4, 5].map(() => ({ payload: { kind: "ok" as const } })),
    );
    for (let i = 0; i < 3; i++) await tl.publish(work, { kind: "flaky" });
    await tl.publishMany(work, [{ payload: { kind: "broken" } }, { payload: { kind: "broken" } }]);
    const worker = tl.worker({ concurrency: 3 });
    await worker.start();
    await until(() => ended.succeeded === 8 && ended.failed === 2, "every job to end");
    await until(() => worker.held === 0, "the worker to hold nothing");

    const m = await otel.collect();
    const lane = { "tasklane.lane": "jobs", "tasklane.task": "work" };
    expect(m.sum(METRICS.published, { ...lane, "tasklane.outcome": "created" })).toBe(10);
    expect(m.sum(METRICS.started, lane)).toBe(13);
    expect(m.sum(METRICS.succeeded, lane)).toBe(ended.succeeded);
    expect(m.sum(METRICS.retried, lane)).toBe(ended.retrying);
    expect(m.sum(METRICS.retried, lane)).toBe(3);
    expect(m.sum(METRICS.dead, { ...lane, "tasklane.fail.reason": "unrecoverable" })).toBe(2);
    expect(m.sum(METRICS.failed, { ...lane, "tasklane.fail.reason": "error" })).toBe(3);
    expect(m.sum(METRICS.failed, { ...lane, "tasklane.fail.reason": "unrecoverable" })).toBe(2);
    for (const name of [METRICS.stalled, METRICS.lockLost, METRICS.canceled]) {
      expect(m.sum(name, lane), name).toBe(0);
    }
    expect(m.histogram(METRICS.waitDuration, lane).count).toBe(13);
    expect(m.histogram(METRICS.runDuration, { "tasklane.outcome": "succeeded" }).count).toBe(8);
    expect(m.histogram(METRICS.runDuration, { "tasklane.outcome": "retried" }).count).toBe(3);
    expect(m.histogram(METRICS.runDuration, { "tasklane.outcome": "dead" }).count).toBe(2);

    // what the worker counted itself
    const wm = worker.metrics();
    const batches = m.histogram(METRICS.reserveBatchSize, { "tasklane.lane": "jobs" });
    expect(batches.sum).toBe(wm.jobs.jobs);
    expect(batches.count).toBe(wm.reserves.jobs);
    expect(m.sum(METRICS.selectorPicks, { "tasklane.lane": "jobs" })).toBe(wm.selected.jobs);
    expect(m.sum(METRICS.workerHeld)).toBe(0);
    expect(m.sum(METRICS.workerRunning)).toBe(0);
    expect(m.sum(METRICS.workerFreeSlots)).toBe(3);

    // every adapter call core made went through the count
    const calls = (call: string) =>
      m.sum(METRICS.adapterCalls, { "tasklane.lane": "jobs", "tasklane.call": call });
    expect(calls("put")).toBe(5);
    expect(calls("reserve")).toBe(wm.reserves.jobs);
    expect(calls("nack")).toBeGreaterThanOrEqual(1);
    expect(calls("ack")).toBeGreaterThanOrEqual(1);
    const settles = m.histogram(METRICS.settleDuration, { "tasklane.lane": "jobs" }).count;
    expect(settles).toBe(calls("ack") + calls("nack") + calls("release"));

    // the lane depth gauge is the backend's counts
    const counts = await tl.lane("jobs").counts();
    const depth = await otel.collect();
    for (const state of ["waiting", "delayed", "active", "failed", "succeeded", "canceled"]) {
      expect(
        depth.sum(METRICS.laneJobs, { "tasklane.lane": "jobs", "tasklane.state": state }),
        state,
      ).toBe(counts[state as keyof typeof counts]);
    }
    if (tl.adapter.capabilities.exactCounts) {
      expect(counts.succeeded).toBe(m.sum(METRICS.succeeded, lane));
      expect(counts.failed).toBe(m.sum(METRICS.dead, lane));
    }
    await worker.stop();
  } finally {
    await tl.close({ graceMs: 0 });
  }
}
