/**
 * The Prometheus endpoint, scraped over real HTTP: mounted in a node:http service beside
 * its own routes, and as `GET /metrics` of the management API.
 */
import { readFileSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { MeterProvider } from "@opentelemetry/sdk-metrics";
import { createMemoryAdapter } from "@tasklane/adapter-memory";
import { createTasklane, defineTask } from "@tasklane/core";
import { createManagementHandler } from "@tasklane/http";
import { createNodeListener } from "@tasklane/http/node";
import { afterEach, describe, expect, it } from "vitest";
import { z } from "zod";
import { createTelemetry } from "../src/index.ts";
import { createPrometheusEndpoint, PROMETHEUS_CONTENT_TYPE } from "../src/prometheus.ts";
import { until } from "./helpers.ts";

const DASHBOARD = new URL("../../../examples/grafana-dashboard.json", import.meta.url);

const closing: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  for (const close of closing.splice(0)) await close();
});

async function listen(server: Server): Promise<string> {
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  closing.push(() => new Promise((resolve) => server.close(resolve)));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

/** The value of the sample `name{…}` whose labels include every one of `labels`. */
function sample(text: string, name: string, labels: Record<string, string>): number | undefined {
  for (const line of text.split("\n")) {
    const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{(.*)\})? (\S+)$/.exec(line);
    if (!m || m[1] !== name) continue;
    const has = Object.entries(labels).every(([k, v]) => (m[3] ?? "").includes(`${k}="${v}"`));
    if (has) return Number(m[4]);
  }
  return undefined;
}

describe("Prometheus endpoint", () => {
  it("is scraped from a service's own server and from the management API", async () => {
    const prometheus = createPrometheusEndpoint();
    const meterProvider = new MeterProvider({ readers: [prometheus.reader] });
    closing.push(() => meterProvider.shutdown());
    let failures = 0;
    const task = defineTask({
      name: "resize",
      lane: "images",
      schema: z.object({ fail: z.boolean() }),
      retry: { maxAttempts: 1 },
      run: ({ fail }) => {
        if (fail) {
          failures++;
          throw new Error("bad image");
        }
      },
    });
    const tl = createTasklane({
      adapter: createMemoryAdapter(),
      lanes: [{ name: "images" }],
      tasks: [task],
      instrumentation: createTelemetry({ meterProvider, depthIntervalMs: 0 }),
    });
    closing.push(() => tl.close());
    await tl.publishMany(task, [
      { payload: { fail: false } },
      { payload: { fail: false } },
      { payload: { fail: false } },
      { payload: { fail: true } },
    ]);
    const worker = tl.worker();
    await worker.start();
    await until(async () => {
      const c = await tl.lane("images").counts();
      return c.succeeded === 3 && c.failed === 1;
    }, "every job to end");
    expect(failures).toBe(1);

    // a service's own server: /metrics is the endpoint, the rest its own routes
    const api = createNodeListener(
      createManagementHandler({ tasklane: tl, basePath: "/tasklane", metrics: prometheus.fetch }),
    );
    const url = await listen(
      createServer((req, res) => {
        if (req.url === "/metrics") prometheus.nodeListener(req, res);
        else api(req, res, () => res.writeHead(404).end());
      }),
    );
    for (const path of ["/metrics", "/tasklane/metrics"]) {
      const res = await fetch(`${url}${path}`);
      expect(res.status, path).toBe(200);
      expect(res.headers.get("content-type")).toBe(PROMETHEUS_CONTENT_TYPE);
      const text = await res.text();
      const job = { tasklane_lane: "images", tasklane_task: "resize" };
      expect(sample(text, "tasklane_jobs_succeeded_total", job), path).toBe(3);
      expect(
        sample(text, "tasklane_jobs_dead_total", { ...job, tasklane_fail_reason: "error" }),
      ).toBe(1);
      expect(sample(text, "tasklane_jobs_started_total", job)).toBe(4);
      const ran = (outcome: string) =>
        sample(text, "tasklane_job_run_duration_count", { ...job, tasklane_outcome: outcome });
      expect([ran("succeeded"), ran("dead")]).toEqual([3, 1]);
      expect(sample(text, "tasklane_job_wait_duration_bucket", { ...job, le: "+Inf" })).toBe(4);
      expect(
        sample(text, "tasklane_lane_jobs", {
          tasklane_lane: "images",
          tasklane_state: "succeeded",
        }),
      ).toBe(3);
      expect(sample(text, "tasklane_worker_slots_free", {})).toBe(10);
      expect(text).toContain("# TYPE tasklane_jobs_succeeded_total counter");
      // every metric the documented Grafana dashboard queries is one this endpoint serves
      const dashboard = readFileSync(DASHBOARD, "utf8");
      // metric names: before a selector's "{" (label names are before "=", "," or ")")
      const queried = new Set(dashboard.match(/\btasklane_[a-z_]+(?=\{)/g));
      expect(queried.size).toBeGreaterThan(10);
      for (const name of queried) {
        expect(text, `the dashboard's ${name}`).toMatch(new RegExp(`^${name}[{ ]`, "m"));
      }
      expect(text).toContain("# TYPE tasklane_job_run_duration histogram");
    }
    // the management API's route needs what its other reads need
    const guarded = createNodeListener(
      createManagementHandler({
        tasklane: tl,
        metrics: prometheus.fetch,
        authorize: (req) =>
          req.headers.get("authorization") === "Bearer scraper" ? "read" : false,
      }),
    );
    const guardedUrl = await listen(createServer((req, res) => guarded(req, res)));
    expect((await fetch(`${guardedUrl}/metrics`)).status).toBe(401);
    const allowed = await fetch(`${guardedUrl}/metrics`, {
      headers: { authorization: "Bearer scraper" },
    });
    expect(allowed.status).toBe(200);
    expect(sample(await allowed.text(), "tasklane_jobs_succeeded_total", {})).toBe(3);
  });

  it("refuses a bad option, naming it", () => {
    expect(() => createPrometheusEndpoint({ prefix: "my-app" })).toThrow(/prefix/);
    expect(() => createPrometheusEndpoint({ port: 9464 } as never)).toThrow(/port/);
  });
});
