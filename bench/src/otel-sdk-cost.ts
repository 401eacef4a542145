/**
 * What one delivery's telemetry costs, split between tasklane's code and the OpenTelemetry
 * SDK's, with no queue around it: the same SDK setup as worker-cpu.ts's `otel` mode (async
 * context, W3C propagation, a `TracerProvider` with no span processor, a `MeterProvider`
 * that is never collected), and per job the hooks a worker calls for a job that succeeds:
 * job(lane, job) ─► run(handler) ─► settling(ack) ─► end("ok"), on
 *
 *   tasklane  `createTelemetry()`
 *   sdk       `createBareTelemetry()` (bare-telemetry.ts): only the SDK calls that
 *             lifecycle cannot do without
 *
 * with traces and metrics, then metrics only. tasklane − sdk is tasklane's own part.
 * In a loop jobs start and end at once: a worker's spans live across its round trips, so
 * in a worker the SDK's part costs more (its objects survive into the old generation);
 * worker-cpu.ts's `bare` modes measure that.
 *
 *   npx node --conditions=source bench/src/otel-sdk-cost.ts [jobs per round, default 200000]
 *
 * Prints the process's CPU time per job, ns, for each (median of 7 alternating rounds after
 * a warm-up): CPU time moves less than wall time with the machine's load.
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
import type { Instrumentation, Tasklane } from "@tasklane/core";
import type { NewJob, PutResult, ReservedJob } from "@tasklane/core/adapter";
import { createTelemetry } from "@tasklane/opentelemetry";
import { createPrometheusEndpoint } from "@tasklane/opentelemetry/prometheus";
import { createBareTelemetry } from "./bare-telemetry.ts";

const JOBS = Number(process.argv[2] ?? 200_000);
const ROUNDS = 7;

context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
propagation.setGlobalPropagator(
  new CompositePropagator({
    propagators: [new W3CTraceContextPropagator(), new W3CBaggagePropagator()],
  }),
);
const tracerProvider = new TracerProvider();
const meterProvider = new MeterProvider({ readers: [createPrometheusEndpoint().reader] });

/** The parts of a client the telemetry reads when attached. */
const client = {
  tasks: () => [{ name: "noop" }],
  clock: { now: Date.now },
  lanes: () => [],
} as unknown as Tasklane;

const handler = () => undefined;

/** `JOBS` deliveries through `instrumentation`, 1,000 jobs per publish call. */
function deliveries(instrumentation: Instrumentation): () => void {
  instrumentation.attach?.(client);
  const batch: ReservedJob[] = [];
  const newJobs = Array.from({ length: 1_000 }, (_, i) => ({ id: `job-${i}` }) as NewJob);
  const created = newJobs.map(() => ({ status: "created" }) as PutResult);
  return () => {
    for (let i = 0; i < JOBS; i++) {
      const k = i % 1_000;
      if (k === 0) {
        const publish = instrumentation.publish?.("q", "noop", newJobs);
        publish?.end(created);
        batch.length = 0;
        for (const { id } of newJobs) {
          const now = Date.now();
          batch.push({
            id,
            task: "noop",
            payload: "{}",
            priority: 5,
            attempt: 1,
            publishedAt: now,
            readyAt: now,
            lock: { token: id } as unknown as ReservedJob["lock"],
            ...(publish?.traceContext === undefined ? {} : { traceContext: publish.traceContext }),
          });
        }
      }
      const t = instrumentation.job?.("q", batch[k] as ReservedJob);
      t?.run(handler);
      t?.settling({ kind: "ack" });
      t?.end("ok");
    }
  };
}

const cases: Array<[string, () => void]> = [
  ["traces+metrics tasklane", deliveries(createTelemetry({ tracerProvider, meterProvider }))],
  [
    "traces+metrics sdk",
    deliveries(createBareTelemetry(tracerProvider.getTracer("bare"), meterProvider.getMeter("a"))),
  ],
  [
    "metrics only tasklane",
    deliveries(createTelemetry({ tracerProvider, meterProvider, traces: false })),
  ],
  ["metrics only sdk", deliveries(createBareTelemetry(undefined, meterProvider.getMeter("b")))],
];
const samples = new Map<string, number[]>(cases.map(([name]) => [name, []]));
for (const [, run] of cases) run(); // warm-up: compile every path
for (let round = 0; round < ROUNDS; round++) {
  for (const [name, run] of cases) {
    const cpuAt = process.cpuUsage();
    run();
    const cpu = process.cpuUsage(cpuAt);
    samples.get(name)?.push(((cpu.user + cpu.system) * 1_000) / JOBS);
  }
}
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? 0;
const ns = (name: string) => median(samples.get(name) ?? []);
for (const [name] of cases)
  console.log(`${name.padEnd(24)} ${ns(name).toFixed(0).padStart(6)} ns/job`);
for (const what of ["traces+metrics", "metrics only"]) {
  const ours = ns(`${what} tasklane`) - ns(`${what} sdk`);
  console.log(`${what}: tasklane's own part ${ours.toFixed(0)} ns/job`);
}
