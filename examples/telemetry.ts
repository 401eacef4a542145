/**
 * tasklane in OpenTelemetry, inside a node:http service: each `POST /signup` publishes a
 * job inside its request's span, the worker runs it in a span of the same trace (the
 * handler's own span nests under it), and Prometheus scrapes the metrics from the
 * service's own port.
 *
 *   npm run example:telemetry
 *
 *   curl -X POST localhost:3000/signup -d '{"email":"ada@example.com"}'
 *   curl localhost:3000/metrics                  # Prometheus text: tasklane_* and the SDK's
 *   curl localhost:3000/tasklane/metrics         # the same, from the management API
 *
 * Each finished span is printed as one line (its trace, its parent, its name and outcome),
 * so the trace of a signup reads top to bottom. A real service starts the Node SDK instead
 * of the providers below (see packages/opentelemetry/README.md) and exports with OTLP.
 * PORT (default 3000; 0 picks a free one); TASKLANE_ADAPTER=redis (REDIS_URL) or sqs picks
 * another backend (adapter-from-env.ts).
 */
import { createServer } from "node:http";
import { setTimeout } from "node:timers/promises";
import { context, propagation, trace } from "@opentelemetry/api";
import { AsyncLocalStorageContextManager } from "@opentelemetry/context-async-hooks";
import {
  CompositePropagator,
  type ExportResult,
  ExportResultCode,
  W3CBaggagePropagator,
  W3CTraceContextPropagator,
} from "@opentelemetry/core";
import { MeterProvider } from "@opentelemetry/sdk-metrics";
import {
  type ReadableSpan,
  SimpleSpanProcessor,
  type SpanExporter,
  TracerProvider,
} from "@opentelemetry/sdk-trace";
import { createTasklane, defineTask } from "@tasklane/core";
import { createManagementHandler } from "@tasklane/http";
import { createNodeListener } from "@tasklane/http/node";
import { createTelemetry } from "@tasklane/opentelemetry";
import { createPrometheusEndpoint } from "@tasklane/opentelemetry/prometheus";
import { z } from "zod";
import { adapterFromEnv } from "./adapter-from-env.ts";

// ── What the Node SDK would register: async context, W3C propagation, the providers ──
/** One line per finished span: trace, span, parent, name, outcome. */
const printSpans: SpanExporter = {
  export(spans: ReadableSpan[], done: (result: ExportResult) => void) {
    for (const s of spans) {
      const { traceId, spanId } = s.spanContext();
      const parent = s.parentSpanContext?.spanId ?? "root            ";
      const outcome = s.attributes["tasklane.outcome"];
      const ms = s.duration[0] * 1_000 + s.duration[1] / 1e6;
      console.log(
        `span trace=${traceId.slice(0, 8)} id=${spanId} parent=${parent} ${s.name}` +
          `${outcome === undefined ? "" : ` (${outcome})`} ${ms.toFixed(1)} ms`,
      );
    }
    done({ code: ExportResultCode.SUCCESS });
  },
  shutdown: async () => {},
};
context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
propagation.setGlobalPropagator(
  new CompositePropagator({
    propagators: [new W3CTraceContextPropagator(), new W3CBaggagePropagator()],
  }),
);
trace.setGlobalTracerProvider(
  new TracerProvider({ spanProcessors: [new SimpleSpanProcessor({ exporter: printSpans })] }),
);
const prometheus = createPrometheusEndpoint();
const meterProvider = new MeterProvider({ readers: [prometheus.reader] });

// ── The application ──────────────────────────────────────────────────────────────────
const tracer = trace.getTracer("signup-service");
const welcome = defineTask({
  name: "send-welcome",
  lane: "mail",
  schema: z.object({ email: z.email() }),
  retry: { maxAttempts: 3, baseMs: 200 },
  async run({ email }, ctx) {
    // The application's own span: a child of tasklane's process span.
    await tracer.startActiveSpan("smtp send", async (span) => {
      await setTimeout(20, undefined, { signal: ctx.signal });
      span.end();
    });
    // Some addresses fail once, so a retry shows in the trace and the metrics.
    if (email.startsWith("flaky") && ctx.attempt === 1) throw new Error("mail server busy");
  },
});

const tl = createTasklane({
  adapter: await adapterFromEnv(),
  lanes: [{ name: "mail" }],
  tasks: [welcome],
  // global providers (above); a meterProvider of its own, to keep this file short
  instrumentation: createTelemetry({ meterProvider, depthIntervalMs: 5_000 }),
});
const worker = tl.worker({ concurrency: 10 });
await worker.start();

const api = createNodeListener(
  createManagementHandler({ tasklane: tl, basePath: "/tasklane", metrics: prometheus.fetch }),
);
const server = createServer((req, res) => {
  if (req.method === "GET" && req.url === "/metrics") return prometheus.nodeListener(req, res);
  if (req.method === "POST" && req.url === "/signup") {
    let body = "";
    req.on("data", (chunk) => {
      body += chunk;
    });
    req.on("end", () => {
      void tracer.startActiveSpan("POST /signup", async (span) => {
        try {
          const { email } = JSON.parse(body || "{}") as { email?: string };
          const job = await tl.publish(welcome, { email: email ?? "" });
          res.writeHead(202, { "content-type": "application/json" });
          res.end(JSON.stringify({ id: job.id }));
        } catch (error) {
          res.writeHead(400, { "content-type": "application/json" });
          res.end(JSON.stringify({ error: String(error) }));
        } finally {
          span.end();
        }
      });
    });
    return;
  }
  api(req, res, () => res.writeHead(404).end());
});

server.listen(Number(process.env.PORT ?? 3000), async () => {
  const address = server.address();
  const port = typeof address === "object" && address ? address.port : 0;
  console.log(`listening on http://localhost:${port}: POST /signup, GET /metrics, /tasklane/…`);
  // A few signups of our own, so the first scrape has something in it.
  for (const email of ["ada@example.com", "flaky@example.com"]) {
    await fetch(`http://127.0.0.1:${port}/signup`, {
      method: "POST",
      body: JSON.stringify({ email }),
    });
  }
});

for (const signal of ["SIGTERM", "SIGINT"] as const) {
  process.once(signal, async () => {
    server.close();
    await tl.close({ graceMs: 5_000 });
    await meterProvider.shutdown();
    process.exit(0);
  });
}
