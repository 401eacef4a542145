/**
 * No glue: a service that starts the OpenTelemetry Node SDK as its README says and passes
 * `createTelemetry()` with no options gets tasklane's spans in its traces and tasklane's
 * metrics at its Prometheus endpoint. (Its own test file: the SDK registers the process's
 * global providers.)
 */
import { trace } from "@opentelemetry/api";
import { NodeSDK } from "@opentelemetry/sdk-node";
import { InMemorySpanExporter, SimpleSpanProcessor } from "@opentelemetry/sdk-trace";
import { createMemoryAdapter } from "@tasklane/adapter-memory";
import { createTasklane, defineTask } from "@tasklane/core";
import { expect, it } from "vitest";
import { z } from "zod";
import { createTelemetry } from "../src/index.ts";
import { createPrometheusEndpoint } from "../src/prometheus.ts";
import { one, until } from "./helpers.ts";

it("puts tasklane in the traces and metrics of a service that starts the Node SDK", async () => {
  const spans = new InMemorySpanExporter();
  const prometheus = createPrometheusEndpoint();
  const sdk = new NodeSDK({
    serviceName: "signup-service",
    autoDetectResources: false,
    spanProcessors: [new SimpleSpanProcessor({ exporter: spans })],
    metricReaders: [prometheus.reader],
  });
  sdk.start();
  try {
    const ran: string[] = [];
    const welcome = defineTask({
      name: "send-welcome",
      lane: "mail",
      schema: z.object({ to: z.string() }),
      run: async (_payload, ctx) => {
        ran.push(ctx.jobId);
        trace.getTracer("app").startSpan("render template").end();
      },
    });
    const tl = createTasklane({
      adapter: createMemoryAdapter(),
      lanes: [{ name: "mail" }],
      tasks: [welcome],
      instrumentation: createTelemetry(),
    });
    const worker = tl.worker();
    await worker.start();
    const { id } = await trace.getTracer("app").startActiveSpan("POST /signup", async (span) => {
      const r = await tl.publish(welcome, { to: "ada@example.com" });
      span.end();
      return r;
    });
    await until(() => spans.getFinishedSpans().some((s) => s.name === "process mail"), "the run");
    await tl.close();

    const all = spans.getFinishedSpans();
    const request = one(all, "POST /signup");
    const publish = one(all, "publish mail");
    const process = one(all, "process mail");
    const render = one(all, "render template");
    expect(ran).toEqual([id]);
    expect(publish.parentSpanContext?.spanId).toBe(request.spanContext().spanId);
    expect(process.parentSpanContext?.spanId).toBe(publish.spanContext().spanId);
    expect(render.parentSpanContext?.spanId).toBe(process.spanContext().spanId);
    for (const s of [publish, process, render]) {
      expect(s.spanContext().traceId).toBe(request.spanContext().traceId);
    }
    expect(process.resource.attributes["service.name"]).toBe("signup-service");

    const text = await prometheus.text();
    expect(text).toMatch(
      /^tasklane_jobs_succeeded_total\{[^}]*tasklane_task="send-welcome"[^}]*\} 1$/m,
    );
    expect(text).toMatch(/^tasklane_job_run_duration_count\{[^}]*\} 1$/m);
  } finally {
    await sdk.shutdown();
  }
});
