/**
 * The least instrumentation that gives what `createTelemetry()` gives a delivery on the
 * OpenTelemetry SDK, to tell tasklane's share of telemetry's cost from the SDK's: per
 * publish call a producer span whose context the jobs carry; per delivery a consumer span
 * (same name, kind, attributes, parent and link), the handler run in its context, an
 * outcome attribute, and the wait and run time histograms. Nothing else: no counters, no
 * adapter calls, no events or status for failures (the benchmarks' jobs succeed). Not a
 * replacement for `@tasklane/opentelemetry`.
 */
import {
  type Attributes,
  type Context,
  context,
  type Histogram,
  type Meter,
  propagation,
  ROOT_CONTEXT,
  type Span,
  SpanKind,
  type Tracer,
  trace,
} from "@opentelemetry/api";
import type { Instrumentation, JobEnd, JobTelemetry, PublishTelemetry } from "@tasklane/core";
import type { NewJob, ReservedJob } from "@tasklane/core/adapter";

interface Bare {
  tracer: Tracer | undefined;
  wait: Histogram;
  run: Histogram;
  series: Attributes;
  succeeded: Attributes;
  /** The last trace context read, and its context: the jobs of one publishMany share it. */
  lastText: string | undefined;
  lastContext: Context;
}

export function createBareTelemetry(tracer: Tracer | undefined, meter: Meter): Instrumentation {
  const b: Bare = {
    tracer,
    wait: meter.createHistogram("bare.job.wait.duration", { unit: "s" }),
    run: meter.createHistogram("bare.job.run.duration", { unit: "s" }),
    // one lane, one task in the benchmarks
    series: { "tasklane.lane": "q", "tasklane.task": "noop" },
    succeeded: { "tasklane.lane": "q", "tasklane.task": "noop", "tasklane.outcome": "succeeded" },
    lastText: undefined,
    lastContext: ROOT_CONTEXT,
  };
  return {
    publish(lane: string, _task: string, jobs: readonly NewJob[]): PublishTelemetry {
      const span = tracer?.startSpan(`publish ${lane}`, {
        kind: SpanKind.PRODUCER,
        attributes: { "messaging.batch.message_count": jobs.length },
      });
      const carrier: Record<string, string> = {};
      if (span !== undefined) propagation.inject(trace.setSpan(ROOT_CONTEXT, span), carrier);
      return { traceContext: carrier.traceparent, end: () => span?.end() };
    },
    job: (lane, job) => new BareRun(b, lane, job),
  };
}

class BareRun implements JobTelemetry {
  readonly #b: Bare;
  readonly #job: ReservedJob;
  readonly #span: Span | undefined;
  readonly #context: Context | undefined;
  #startedAt = 0;
  #settledAt = 0;

  constructor(b: Bare, lane: string, job: ReservedJob) {
    this.#b = b;
    this.#job = job;
    if (b.tracer === undefined) return;
    if (job.traceContext !== b.lastText) {
      b.lastText = job.traceContext;
      b.lastContext =
        job.traceContext === undefined
          ? ROOT_CONTEXT
          : propagation.extract(ROOT_CONTEXT, { traceparent: job.traceContext });
    }
    const parent = b.lastContext;
    const producer = trace.getSpanContext(parent);
    const span = b.tracer.startSpan(
      `process ${lane}`,
      {
        kind: SpanKind.CONSUMER,
        attributes: {
          "messaging.system": "tasklane",
          "messaging.operation.type": "process",
          "messaging.operation.name": "process",
          "messaging.destination.name": lane,
          "messaging.message.id": job.id,
          "tasklane.task": job.task,
          "tasklane.job.attempt": job.attempt,
        },
        ...(producer === undefined ? {} : { links: [{ context: producer }] }),
      },
      parent,
    );
    this.#span = span;
    this.#context = trace.setSpan(parent, span);
  }

  run<T>(handler: () => T): T {
    this.#startedAt = Date.now();
    this.#b.wait.record((this.#startedAt - this.#job.readyAt) / 1000, this.#b.series);
    const ctx = this.#context;
    return ctx === undefined ? handler() : context.with(ctx, handler);
  }

  settling(): void {
    this.#settledAt = Date.now();
  }

  end(_status: JobEnd): void {
    this.#b.run.record((this.#settledAt - this.#startedAt) / 1000, this.#b.succeeded);
    this.#span?.setAttribute("tasklane.outcome", "succeeded");
    this.#span?.end();
  }
}
