/**
 * The API on SQS (fauxqs, a real SQS-protocol server in-process): what SQS can do works,
 * what it cannot answers 501 naming the capability, and changes nothing.
 */
import { randomUUID } from "node:crypto";
import { SQSClient } from "@aws-sdk/client-sqs";
import { createSqsAdapter } from "@tasklane/adapter-sqs";
import { createTasklane, defineTask, type Tasklane } from "@tasklane/core";
import { startFauxqs } from "fauxqs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import {
  alwaysFails,
  call,
  openSse,
  report,
  sendEmail,
  serve,
  type TestServer,
  waitFor,
} from "./helpers.ts";

let stopSqs: () => Promise<void>;
let client: SQSClient;
let tl: Tasklane;
let srv: TestServer;
let failedId: string;

beforeAll(async () => {
  const external = process.env.SQS_ENDPOINT;
  let endpoint = external;
  if (endpoint === undefined) {
    const server = await startFauxqs({ port: 0, logger: false });
    endpoint = `http://127.0.0.1:${server.port}`;
    stopSqs = () => server.stop();
  } else {
    stopSqs = async () => {};
  }
  client = new SQSClient({
    endpoint,
    region: "us-east-1",
    credentials: { accessKeyId: "test", secretAccessKey: "test" },
  });
  tl = createTasklane({
    adapter: createSqsAdapter({ client }),
    namespace: `h${randomUUID().slice(0, 8)}`,
    lanes: [
      { name: "default", leaseMs: 30_000 },
      { name: "low", groups: {} },
    ],
    tasks: [sendEmail, alwaysFails, report],
  });
  srv = await serve({ tasklane: tl, basePath: "/ops", authorize: () => "write" });
  // One job in the dead letter queue, for retry.
  failedId = (await tl.publish(alwaysFails, { n: 1 })).id;
  const worker = tl.worker({ concurrency: 1, lanes: ["default"] });
  const failed = new Promise<void>((resolve) => tl.events.once("failed", () => resolve()));
  await worker.start();
  await failed;
  await worker.stop();
}, 60_000);

afterAll(async () => {
  await srv?.close();
  await tl?.close();
  client?.destroy();
  await stopSqs?.();
});

describe("on SQS", () => {
  it("tells what the adapter can do", async () => {
    const { body } = await call(`${srv.url}/`);
    expect(body).toMatchObject({
      adapter: {
        name: "sqs",
        capabilities: { list: false, get: false, cancel: false, retryFailed: true },
      },
    });
  });

  it("lists lanes with approximate counts, no paused state and no stats", async () => {
    await tl.publishMany(report, [{ payload: { day: "a" } }, { payload: { day: "b" } }]);
    const lane = await waitFor(async () => {
      const { body } = await call(`${srv.url}/lanes`);
      const low = (body.lanes as Array<Record<string, unknown>>).find((l) => l.name === "low");
      return (low?.counts as { waiting: number } | undefined)?.waiting === 2 && low;
    }, "SQS's approximate count to show the two jobs");
    expect(lane).toMatchObject({ countsExact: false, paused: null, stats: null });
  });

  it("answers 501 naming the capability for what SQS cannot do, changing nothing", async () => {
    const before = await tl.lane("low").counts();
    const cases: Array<[string, string, unknown, string]> = [
      ["GET", "/lanes/low/jobs?state=waiting", undefined, "list"],
      ["GET", "/lanes/low/jobs/some-id", undefined, "get"],
      ["GET", "/jobs/some-id", undefined, "get"],
      ["GET", "/lanes/low/stats", undefined, "stats"],
      ["POST", "/lanes/low/pause", undefined, "pause"],
      ["POST", "/lanes/low/resume", undefined, "pause"],
      ["POST", "/lanes/low/jobs/some-id/cancel", undefined, "cancel"],
      ["DELETE", "/lanes/low/jobs/some-id", undefined, "delete"],
      ["POST", "/lanes/low/jobs/cancel", { ids: ["a"] }, "cancel"],
      ["POST", "/lanes/low/jobs/delete", { filter: { state: "waiting" } }, "delete"],
      ["POST", "/lanes/default/jobs/retry", { filter: { state: "failed" } }, "list"],
      ["GET", "/events?source=backend", undefined, "subscribe"],
      ["POST", "/tasks/report/jobs", { payload: { day: "c" }, jobId: "same-id-twice" }, "dedup"],
      [
        "POST",
        "/tasks/report/jobs",
        { payload: { day: "c" }, debounce: { key: "k", ms: 1_000 } },
        "debounce",
      ],
      ["POST", "/tasks/report/jobs", { payload: { day: "c" }, dependsOn: ["x"] }, "flows"],
    ];
    for (const [method, path, body, capability] of cases) {
      const answer = await call(`${srv.url}${path}`, { method, body });
      expect(answer.status, `${method} ${path}`).toBe(501);
      expect(answer.body, `${method} ${path}`).toMatchObject({ code: "UNSUPPORTED", capability });
      expect(answer.body.message).toContain("The sqs adapter does not support");
    }
    expect(await tl.lane("low").counts()).toEqual(before);
  });

  it("takes a group as SQS's message group on a lane with groups, 400 on one without", async () => {
    const grouped = await call(`${srv.url}/tasks/report/jobs`, {
      method: "POST",
      body: { payload: { day: "g" }, group: "acme" },
    });
    expect(grouped).toMatchObject({ status: 201, body: { status: "created", lane: "low" } });
    const refused = await call(`${srv.url}/tasks/send-email/jobs`, {
      method: "POST",
      body: { payload: { to: "ada@example.com", subject: "hi" }, group: "acme" },
    });
    expect(refused).toMatchObject({ status: 400, body: { field: "group" } });
  });

  it("publishes through the enqueue endpoint", async () => {
    const { status, body } = await call(`${srv.url}/tasks/send-email/jobs`, {
      method: "POST",
      body: { payload: { to: "ada@example.com", subject: "hi" } },
    });
    expect(status).toBe(201);
    expect(body).toMatchObject({ status: "created", lane: "default" });
  });

  it("retries a failed job by id out of the dead letter queue", async () => {
    const missing = await call(`${srv.url}/lanes/default/jobs/not-failed/retry`, {
      method: "POST",
    });
    expect(missing).toMatchObject({ status: 404, body: { code: "NOT_FOUND" } });
    const retried = await call(`${srv.url}/lanes/default/jobs/${failedId}/retry`, {
      method: "POST",
    });
    expect(retried).toMatchObject({ status: 200, body: { id: failedId, outcome: "retried" } });
  });

  it("streams this process's events (the default where the backend carries none)", async () => {
    const response = await fetch(`${srv.url}/events`);
    const reader = (response.body as ReadableStream<Uint8Array>)
      .pipeThrough(new TextDecoderStream())
      .getReader();
    let text = "";
    while (!text.includes("\n\n")) text += (await reader.read()).value;
    expect(text).toBe('event: ready\ndata: {"sources":["process"]}\n\n');
    await reader.cancel();
  });
});

describe("recurring schedules on SQS", () => {
  it("answer 501 naming the capability", async () => {
    const answer = await call(`${srv.url}/schedules`);
    expect(answer).toMatchObject({
      status: 501,
      body: { code: "UNSUPPORTED", capability: "schedules" },
    });
  });
});

describe("an event stream on an adapter that does not store progress", () => {
  it("never breaks a job whose progress value JSON cannot hold", async () => {
    // No capability reports: ctx.progress only emits the value, as it was given, to this
    // process's tl.events, and the stream is what must not throw it back at the job.
    const progressing = defineTask({
      name: "progressing",
      lane: "default",
      schema: z.object({}),
      run: (_payload, ctx) => {
        ctx.progress({ done: 1n });
        ctx.log("half way");
      },
    });
    const local = createTasklane({
      adapter: createSqsAdapter({ client }),
      namespace: `p${randomUUID().slice(0, 8)}`,
      lanes: [{ name: "default" }],
      tasks: [progressing],
    });
    expect(local.adapter.capabilities.reports).toBe(false);
    const server = await serve({ tasklane: local });
    const sse = await openSse(`${server.url}/events?source=process&types=progress,succeeded`);
    await sse.next();
    const { id } = await local.publish(progressing, {});
    const worker = local.worker({ concurrency: 1 });
    await worker.start();
    expect((await sse.next()).data).toEqual({
      source: "process",
      type: "progress",
      lane: "default",
      jobId: id,
      task: "progressing",
      unserializable: true,
    });
    expect((await sse.next()).data).toMatchObject({ type: "progress", value: { log: "half way" } });
    expect((await sse.next()).data).toMatchObject({ type: "succeeded", jobId: id });
    await worker.stop();
    sse.close();
    await server.close();
    await local.close();
  }, 30_000);
});
