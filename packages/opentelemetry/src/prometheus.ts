/**
 * `@tasklane/opentelemetry/prometheus`: the metrics as a Prometheus scrape endpoint, through
 * OpenTelemetry's Prometheus exporter, mounted in the service's own HTTP server (no second
 * port): a Fetch handler, a `node:http` listener, or `metrics` of the management API
 * (`@tasklane/http`).
 *
 *   const prometheus = createPrometheusEndpoint();
 *   new MeterProvider({ readers: [prometheus.reader] })   // or NodeSDK({ metricReader })
 *   createManagementHandler({ tasklane: tl, metrics: prometheus.fetch })  // GET /metrics
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import { PrometheusExporter, PrometheusSerializer } from "@opentelemetry/exporter-prometheus";
import { parseOptions } from "@tasklane/core/adapter";
import { z } from "zod";

export interface PrometheusEndpointOptions {
  /** Prefix of every metric name, e.g. "myapp_". Default none. */
  prefix?: string;
  /** Leave out the `otel_scope_*` labels. Default false. */
  withoutScopeInfo?: boolean;
  /** Leave out the `target_info` metric (the resource's attributes). Default false. */
  withoutTargetInfo?: boolean;
}

/** The Prometheus text format's content type. */
export const PROMETHEUS_CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8";

export interface PrometheusEndpoint {
  /** The metric reader: give it to the MeterProvider (`readers`) or the Node SDK (`metricReader`). */
  readonly reader: PrometheusExporter;
  /** The current metrics in Prometheus's text format (one collection). */
  text(): Promise<string>;
  /** A Fetch-standard handler answering any request with {@link text}. */
  fetch(request?: Request): Promise<Response>;
  /** A `node:http` listener answering any request with {@link text}. */
  nodeListener(request: IncomingMessage, response: ServerResponse): void;
}

export const prometheusEndpointOptionsSchema = z
  .object({
    prefix: z
      .string()
      .regex(/^[a-zA-Z_:][a-zA-Z0-9_:]*$/, "must be a Prometheus name prefix like myapp_")
      .optional(),
    withoutScopeInfo: z.boolean().optional(),
    withoutTargetInfo: z.boolean().optional(),
  })
  .strict();

/** A Prometheus endpoint that starts no server of its own: mount it where you serve HTTP. */
export function createPrometheusEndpoint(
  options: PrometheusEndpointOptions = {},
): PrometheusEndpoint {
  const o = parseOptions(prometheusEndpointOptionsSchema, options, "");
  const reader = new PrometheusExporter({
    preventServerStart: true,
    ...(o.prefix !== undefined ? { prefix: o.prefix } : {}),
    withoutScopeInfo: o.withoutScopeInfo ?? false,
    withoutTargetInfo: o.withoutTargetInfo ?? false,
  });
  const serializer = new PrometheusSerializer(
    o.prefix ?? "",
    false,
    undefined,
    o.withoutTargetInfo ?? false,
    o.withoutScopeInfo ?? false,
  );
  const text = async (): Promise<string> => {
    const { resourceMetrics } = await reader.collect();
    return serializer.serialize(resourceMetrics);
  };
  return {
    reader,
    text,
    async fetch() {
      return new Response(await text(), {
        status: 200,
        headers: { "content-type": PROMETHEUS_CONTENT_TYPE },
      });
    },
    nodeListener(_request, response) {
      text().then(
        (body) => {
          response.writeHead(200, { "content-type": PROMETHEUS_CONTENT_TYPE });
          response.end(body);
        },
        (error: unknown) => {
          response.writeHead(500, { "content-type": "text/plain; charset=utf-8" });
          response.end(`# failed to collect metrics: ${String(error)}`);
        },
      );
    },
  };
}
