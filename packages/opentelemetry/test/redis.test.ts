/**
 * Telemetry on Redis (a real redis-server): the trace and metrics scenarios, and one trace
 * from a publish in this process to the run in a worker process of its own.
 */
import { fork } from "node:child_process";
import { fileURLToPath } from "node:url";
import { createRedisAdapter } from "@tasklane/adapter-redis";
import { createTasklane } from "@tasklane/core";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { type RedisServer, startRedis, uniquePrefix } from "../../adapter-redis/test/helpers.ts";
import { createTelemetry } from "../src/index.ts";
import { sendMail } from "./fixtures/mail-task.ts";
import { createOtel, type Otel, one } from "./helpers.ts";
import { metricsEqualTheQueue, traceFromPublishToRun } from "./scenarios.ts";

let redis: RedisServer;
beforeAll(async () => {
  redis = await startRedis();
});
afterAll(async () => {
  await redis?.stop();
});
const otels: Otel[] = [];
afterEach(async () => {
  await Promise.all(otels.splice(0).map((o) => o.shutdown()));
});
const otel = () => {
  const o = createOtel();
  otels.push(o);
  return o;
};
const adapter = () => createRedisAdapter({ connection: redis.url, prefix: uniquePrefix() });

interface SpanView {
  name: string;
  kind: number;
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  links: Array<{ traceId: string; spanId: string }>;
  attributes: Record<string, unknown>;
}

describe("telemetry on Redis", () => {
  it("makes one trace from publish to run, the handler's spans inside it", async () => {
    await traceFromPublishToRun(adapter(), otel());
  });

  it("records metrics equal to what the queue and the worker report", async () => {
    await metricsEqualTheQueue(adapter(), otel());
  });

  it("makes one trace from a publish in this process to the run in another", {
    timeout: 60_000,
  }, async () => {
    const o = otel();
    const prefix = uniquePrefix();
    const script = fileURLToPath(new URL("./fixtures/worker-process.ts", import.meta.url));
    const child = fork(script, [redis.url, prefix], {
      execArgv: ["--conditions=source"],
      stdio: ["ignore", "inherit", "inherit", "ipc"],
    });
    const exited = new Promise((resolve) => child.once("exit", resolve));
    try {
      const message = (type: string) =>
        new Promise<Record<string, unknown>>((resolve, reject) => {
          child.once("exit", (code) => reject(new Error(`worker process exited with ${code}`)));
          const on = (m: Record<string, unknown>) => {
            if (m.type !== type) return;
            child.off("message", on);
            resolve(m);
          };
          child.on("message", on);
        });
      const ready = message("ready");
      const spansSent = message("spans");
      await ready;
      const tl = createTasklane({
        adapter: createRedisAdapter({ connection: redis.url, prefix }),
        lanes: [{ name: "mail" }],
        tasks: [sendMail],
        instrumentation: createTelemetry({
          tracerProvider: o.tracerProvider,
          meterProvider: o.meterProvider,
        }),
      });
      const { id } = await o.tracerProvider
        .getTracer("app")
        .startActiveSpan("POST /signup", async (span) => {
          const r = await tl.publish(sendMail, { to: "ada@example.com" });
          span.end();
          return r;
        });
      await tl.close();
      const request = one(o.spans(), "POST /signup");
      const publish = one(o.spans(), "publish mail");
      const theirs = (await spansSent).spans as SpanView[];
      const process = theirs.find((s) => s.name === "process mail");
      const smtp = theirs.find((s) => s.name === "smtp send");
      const traceId = request.spanContext().traceId;
      expect(publish.spanContext().traceId).toBe(traceId);
      expect(process?.traceId).toBe(traceId);
      expect(process?.parentSpanId).toBe(publish.spanContext().spanId);
      expect(process?.links).toEqual([{ traceId, spanId: publish.spanContext().spanId }]);
      expect(process?.attributes["messaging.message.id"]).toBe(id);
      expect(process?.attributes["tasklane.outcome"]).toBe("succeeded");
      expect(smtp?.traceId).toBe(traceId);
      expect(smtp?.parentSpanId).toBe(process?.spanId);
    } finally {
      if (child.exitCode === null) child.send("stop");
      await exited;
    }
  });
});
