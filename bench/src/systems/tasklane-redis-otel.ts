/**
 * tasklane-redis with telemetry on: `@tasklane/opentelemetry` as the client's
 * instrumentation, over the OpenTelemetry SDK as a service registers it (async context,
 * W3C propagation, a tracer provider, a meter provider) with nothing exporting: spans are
 * made, recorded and dropped at their end (no span processor); metrics are aggregated for
 * a Prometheus reader that is never scraped during the run. What is left is the cost of
 * the instrumentation itself, compared with tasklane-redis in the same run.
 */
import { context, propagation } from "@opentelemetry/api";
import { AsyncLocalStorageContextManager } from "@opentelemetry/context-async-hooks";
import {
  CompositePropagator,
  W3CBaggagePropagator,
  W3CTraceContextPropagator,
} from "@opentelemetry/core";
import { MeterProvider } from "@opentelemetry/sdk-metrics";
import { TracerProvider } from "@opentelemetry/sdk-trace";
import { createRedisAdapter } from "@tasklane/adapter-redis";
import { createTelemetry } from "@tasklane/opentelemetry";
import { createPrometheusEndpoint } from "@tasklane/opentelemetry/prometheus";
import type { BenchSystem, SystemEnv, SystemUnderTest } from "../types.ts";
import { tasklaneSystem } from "./tasklane-common.ts";

/** tasklane-redis with telemetry on; `traces: false` leaves only the metrics. */
async function setupWithTelemetry(env: SystemEnv, traces: boolean): Promise<SystemUnderTest> {
  if (!env.redis) throw new Error("tasklane-redis-otel needs redis");
  context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
  propagation.setGlobalPropagator(
    new CompositePropagator({
      propagators: [new W3CTraceContextPropagator(), new W3CBaggagePropagator()],
    }),
  );
  const tracerProvider = new TracerProvider();
  const prometheus = createPrometheusEndpoint();
  const meterProvider = new MeterProvider({ readers: [prometheus.reader] });
  const adapter = createRedisAdapter({
    connection: { host: env.redis.host, port: env.redis.port },
    prefix: "tl",
  });
  return tasklaneSystem(
    adapter,
    env.queueName,
    async () => {
      await tracerProvider.shutdown();
      await meterProvider.shutdown();
    },
    undefined,
    { instrumentation: createTelemetry({ tracerProvider, meterProvider, traces }) },
  );
}

export const system: BenchSystem = { setup: (env) => setupWithTelemetry(env, true) };

/** Metrics only: what a service that exports no traces pays. */
export const metricsOnly: BenchSystem = { setup: (env) => setupWithTelemetry(env, false) };
