/**
 * Test support: the real OpenTelemetry SDK with in-memory span and metric exporters, the
 * context manager and propagators a Node SDK registers, and readers for what they hold.
 */
import { context, propagation } from "@opentelemetry/api";
import { AsyncLocalStorageContextManager } from "@opentelemetry/context-async-hooks";
import {
  CompositePropagator,
  W3CBaggagePropagator,
  W3CTraceContextPropagator,
} from "@opentelemetry/core";
import {
  AggregationTemporality,
  DataPointType,
  InMemoryMetricExporter,
  MeterProvider,
  type MetricData,
  PeriodicExportingMetricReader,
} from "@opentelemetry/sdk-metrics";
import {
  InMemorySpanExporter,
  type ReadableSpan,
  SimpleSpanProcessor,
  TracerProvider,
} from "@opentelemetry/sdk-trace";

let registered = false;

/** What the Node SDK registers globally: async context, W3C trace context and baggage. */
export function registerGlobals(): void {
  if (registered) return;
  registered = true;
  context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
  propagation.setGlobalPropagator(
    new CompositePropagator({
      propagators: [new W3CTraceContextPropagator(), new W3CBaggagePropagator()],
    }),
  );
}

export interface Otel {
  tracerProvider: TracerProvider;
  meterProvider: MeterProvider;
  /** Every span ended so far. */
  spans(): ReadableSpan[];
  /** Collect the metrics now (cumulative) and return them. */
  collect(): Promise<Metrics>;
  shutdown(): Promise<void>;
}

/** A tracer provider and a meter provider of the SDK, each with an in-memory exporter. */
export function createOtel(): Otel {
  registerGlobals();
  const spanExporter = new InMemorySpanExporter();
  const tracerProvider = new TracerProvider({
    spanProcessors: [new SimpleSpanProcessor({ exporter: spanExporter })],
  });
  const metricExporter = new InMemoryMetricExporter(AggregationTemporality.CUMULATIVE);
  // Exports only when asked (forceFlush): a day is longer than any test.
  const reader = new PeriodicExportingMetricReader({
    exporter: metricExporter,
    exportIntervalMillis: 86_400_000,
  });
  const meterProvider = new MeterProvider({ readers: [reader] });
  return {
    tracerProvider,
    meterProvider,
    spans: () => spanExporter.getFinishedSpans(),
    async collect() {
      metricExporter.reset();
      await reader.forceFlush();
      const exported = metricExporter.getMetrics();
      const last = exported[exported.length - 1];
      return new Metrics(last?.scopeMetrics.flatMap((s) => s.metrics) ?? []);
    },
    async shutdown() {
      await tracerProvider.shutdown();
      await meterProvider.shutdown();
    },
  };
}

/** One collection's metrics, read by name and attributes. */
export class Metrics {
  readonly all: MetricData[];
  constructor(all: MetricData[]) {
    this.all = all;
  }

  metric(name: string): MetricData | undefined {
    return this.all.find((m) => m.descriptor.name === name);
  }

  /** The points of `name` whose attributes include `where`. */
  points(name: string, where: Record<string, unknown> = {}) {
    const m = this.metric(name);
    if (m === undefined) return [];
    return (m.dataPoints as Array<{ attributes: Record<string, unknown>; value: unknown }>).filter(
      (p) => Object.entries(where).every(([k, v]) => p.attributes[k] === v),
    );
  }

  /** The sum (counter) or value (gauge) of `name` over the points matching `where`. */
  sum(name: string, where: Record<string, unknown> = {}): number {
    const m = this.metric(name);
    if (m === undefined) return 0;
    if (m.dataPointType === DataPointType.HISTOGRAM) {
      throw new Error(`${name} is a histogram: use histogram()`);
    }
    return this.points(name, where).reduce((n, p) => n + (p.value as number), 0);
  }

  /** Count and sum of the histogram `name` over the points matching `where`. */
  histogram(name: string, where: Record<string, unknown> = {}): { count: number; sum: number } {
    let count = 0;
    let sum = 0;
    for (const p of this.points(name, where)) {
      const h = p.value as { count: number; sum?: number };
      count += h.count;
      sum += h.sum ?? 0;
    }
    return { count, sum };
  }
}

/** Poll `check` until it holds (no fixed sleeps). */
export async function until<T>(
  check: () => Promise<T | undefined | false> | T | undefined | false,
  what: string,
  timeoutMs = 15_000,
): Promise<T> {
  const started = Date.now();
  for (;;) {
    const value = await check();
    if (value) return value;
    if (Date.now() - started > timeoutMs) throw new Error(`Timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

/** The one span named `name` (throws when there is none or several). */
export function one(spans: readonly ReadableSpan[], name: string): ReadableSpan {
  const found = spans.filter((s) => s.name === name);
  if (found.length !== 1) {
    throw new Error(
      `expected one span "${name}", found ${found.length}: ${spans.map((s) => s.name)}`,
    );
  }
  return found[0] as ReadableSpan;
}
