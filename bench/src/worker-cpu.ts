/**
 * The worker's CPU time per job, which moves less with the machine's load than jobs/s:
 * 20,000 no-op jobs published first, then drained by one worker at c=100, its process's
 * user + system time divided by the jobs. For small changes to the worker's path, run it
 * interleaved with the code before (the other build in a checkout of its own).
 *
 *   npx node --conditions=source bench/src/worker-cpu.ts <redis://host:port | memory> [off|otel|metrics|sampled|bare|bare-metrics]
 *
 * Prints "<jobs/s> <CPU µs per job>". `otel`: telemetry over the OpenTelemetry SDK with
 * no exporter, as tasklane-redis-otel; `metrics`: the same with traces off; `sampled`:
 * `otel` with a sampler keeping 1% of traces (parent-based, so a job's runs follow its
 * publish: the other 99% get non-recording spans); `bare` and `bare-metrics`: `otel` and
 * `metrics` with `createBareTelemetry()` (bare-telemetry.ts, only the SDK calls a
 * delivery's spans and histograms need) in place of `createTelemetry()`, to tell
 * tasklane's share of the cost from the SDK's.
 */
import { context, propagation } from "@opentelemetry/api";
import { AsyncLocalStorageContextManager } from "@opentelemetry/context-async-hooks";
import {
  CompositePropagator,
  W3CBaggagePropagator,
  W3CTraceContextPropagator,
} from "@opentelemetry/core";
import { MeterProvider } from "@opentelemetry/sdk-metrics";
import {
  ParentBasedSampler,
  TraceIdRatioBasedSampler,
  TracerProvider,
} from "@opentelemetry/sdk-trace";
import { createMemoryAdapter } from "@tasklane/adapter-memory";
import { createRedisAdapter } from "@tasklane/adapter-redis";
import { createTasklane, defineTask, type Instrumentation } from "@tasklane/core";
import { createTelemetry } from "@tasklane/opentelemetry";
import { createPrometheusEndpoint } from "@tasklane/opentelemetry/prometheus";
import { z } from "zod";
import { createBareTelemetry } from "./bare-telemetry.ts";
import { TASKLANE_LANE } from "./systems/tasklane-common.ts";

const [where = "memory", mode = "off"] = process.argv.slice(2);
const JOBS = Number(process.env.JOBS ?? 20_000);

const MODES = ["off", "otel", "metrics", "sampled", "bare", "bare-metrics"];
if (!MODES.includes(mode))
  throw new Error(`mode must be one of ${MODES.join(", ")}, not "${mode}"`);

let instrumentation: Instrumentation | undefined;
if (mode !== "off") {
  context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
  propagation.setGlobalPropagator(
    new CompositePropagator({
      propagators: [new W3CTraceContextPropagator(), new W3CBaggagePropagator()],
    }),
  );
  const tracerProvider = new TracerProvider(
    mode === "sampled"
      ? { sampler: new ParentBasedSampler({ root: new TraceIdRatioBasedSampler(0.01) }) }
      : {},
  );
  const meterProvider = new MeterProvider({ readers: [createPrometheusEndpoint().reader] });
  const traces = mode !== "metrics" && mode !== "bare-metrics";
  instrumentation = mode.startsWith("bare")
    ? createBareTelemetry(
        traces ? tracerProvider.getTracer("bare") : undefined,
        meterProvider.getMeter("bare"),
      )
    : createTelemetry({ tracerProvider, meterProvider, traces });
}

let done = 0;
let drained!: () => void;
const allDone = new Promise<void>((resolve) => {
  drained = resolve;
});
const noop = defineTask({
  name: "noop",
  lane: "q",
  schema: z.object({ i: z.number() }),
  run: async () => {},
});
const tl = createTasklane({
  adapter:
    where === "memory"
      ? createMemoryAdapter()
      : createRedisAdapter({ connection: where, prefix: `cpu${process.pid}` }),
  lanes: [{ name: "q", ...TASKLANE_LANE }],
  tasks: [noop],
  ...(instrumentation ? { instrumentation } : {}),
});
tl.events.on("succeeded", () => {
  if (++done === JOBS) drained();
});
for (let i = 0; i < JOBS; i += 1_000) {
  await tl.publishMany(
    noop,
    Array.from({ length: 1_000 }, (_, k) => ({ payload: { i: i + k } })),
  );
}
const startedAt = performance.now();
const cpuAt = process.cpuUsage();
const worker = tl.worker({ concurrency: 100 });
await worker.start();
await allDone;
const ms = performance.now() - startedAt;
const cpu = process.cpuUsage(cpuAt);
console.log(Math.round(JOBS / (ms / 1_000)), ((cpu.user + cpu.system) / JOBS).toFixed(2));
await tl.close();
