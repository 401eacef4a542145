import { createMemoryAdapter } from "@tasklane/adapter-memory";
import { createTasklane, defineTask, type Tasklane } from "@tasklane/core";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { z } from "zod";
import { createManagementHandler } from "../src/index.ts";
import {
  call,
  createClient,
  openSse,
  report,
  sendEmail,
  serve,
  type TestServer,
  waitFor,
} from "./helpers.ts";

let tl: Tasklane;
let srv: TestServer;

beforeEach(async () => {
  tl = createClient();
  srv = await serve({ tasklane: tl, basePath: "/tasklane", authorize: () => "read" });
});

afterEach(async () => {
  await srv.close();
  await tl.close();
});

const email = { to: "a@example.com", subject: "s" };

describe("GET /events", () => {
  it("sends ready, then every process's lifecycle events from the backend (the default where the adapter carries them)", async () => {
    const sse = await openSse(`${srv.url}/events`);
    expect(await sse.next()).toEqual({ event: "ready", data: { sources: ["backend"] } });
    const { id } = await tl.publish(sendEmail, email);
    expect(await sse.next()).toEqual({
      event: "published",
      data: { source: "backend", type: "published", lane: "default", jobId: id },
    });
    await tl.lane("default").cancel([id]);
    expect(await sse.next()).toEqual({
      event: "canceled",
      data: { source: "backend", type: "canceled", lane: "default", jobId: id },
    });
    sse.close();
  });

  it("carries this process's events (task, attempt, progress) with source=process", async () => {
    const sse = await openSse(`${srv.url}/events?source=process`);
    expect((await sse.next()).data).toEqual({ sources: ["process"] });
    const { id } = await tl.publish(sendEmail, email);
    expect(await sse.next()).toEqual({
      event: "published",
      data: {
        source: "process",
        type: "published",
        lane: "default",
        jobId: id,
        task: "send-email",
        status: "created",
      },
    });
    const worker = tl.worker({ concurrency: 1 });
    await worker.start();
    const started = await sse.until((e) => e.event === "started");
    expect(started.data).toMatchObject({ jobId: id, attempt: 1, task: "send-email" });
    const succeeded = await sse.until((e) => e.event === "succeeded");
    expect(succeeded.data).toMatchObject({ jobId: id, attempt: 1, runMs: expect.any(Number) });
    await worker.stop();
    sse.close();
  });

  it("a progress value JSON cannot hold is refused in the handler where progress is stored, and the stream goes on", async () => {
    // The memory adapter stores reports (capability reports): ctx.progress encodes the
    // value first and throws for one JSON cannot hold, before any event. The stream's own
    // guard for such values is tested on SQS, whose adapter does not store progress.
    const thrown: unknown[] = [];
    const progressing = defineTask({
      name: "progressing",
      lane: "high",
      schema: z.object({}),
      run: (_payload, ctx) => {
        try {
          ctx.progress({ done: 1n });
        } catch (error) {
          thrown.push(error);
        }
        ctx.progress({ done: 1, total: 2 });
        ctx.log("half way");
      },
    });
    const client = createTasklane({
      adapter: createMemoryAdapter(),
      lanes: [{ name: "high" }],
      tasks: [progressing],
    });
    const local = await serve({ tasklane: client });
    const sse = await openSse(`${local.url}/events?source=process&types=progress,succeeded`);
    await sse.next();
    const { id } = await client.publish(progressing, {});
    const worker = client.worker({ concurrency: 1 });
    await worker.start();
    expect((await sse.next()).data).toEqual({
      source: "process",
      type: "progress",
      lane: "high",
      jobId: id,
      task: "progressing",
      value: { done: 1, total: 2 },
    });
    expect((await sse.next()).data).toMatchObject({ type: "progress", value: { log: "half way" } });
    expect((await sse.next()).data).toMatchObject({ type: "succeeded", jobId: id });
    expect(thrown).toHaveLength(1);
    expect(thrown[0]).toMatchObject({ code: "VALIDATION" });
    // What the job reported is stored, and the API shows it.
    const job = await call(`${local.url}/lanes/high/jobs/${id}`);
    expect(job.body).toMatchObject({
      state: "succeeded",
      progress: { done: 1, total: 2 },
      logs: [{ attempt: 1, message: "half way", at: expect.any(Number) }],
    });
    await worker.stop();
    sse.close();
    await local.close();
    await client.close();
  });

  it("filters by lanes and types, and both sources come with source=all", async () => {
    const sse = await openSse(`${srv.url}/events?source=all&lanes=low&types=published`);
    expect((await sse.next()).data).toEqual({ sources: ["backend", "process"] });
    await tl.publish(sendEmail, email); // lane default: filtered out
    const { id } = await tl.publish(report, { day: "2026-01-01" });
    await tl.lane("low").cancel([id]); // type canceled: filtered out
    const { id: second } = await tl.publish(report, { day: "2026-01-02" });
    const seen = [await sse.next(), await sse.next(), await sse.next(), await sse.next()];
    expect(seen.map((e) => [e.event, e.data.source, e.data.jobId]).sort()).toEqual(
      [
        ["published", "backend", id],
        ["published", "process", id],
        ["published", "backend", second],
        ["published", "process", second],
      ].sort(),
    );
    sse.close();
  });

  it("refuses unknown lanes, types and sources with 400 naming the field", async () => {
    for (const [query, field] of [
      ["lanes=default,nope", "lanes"],
      ["types=published,exploded", "types"],
      ["source=everywhere", "source"],
    ]) {
      const answer = await call(`${srv.url}/events?${query}`);
      expect(answer, query).toMatchObject({ status: 400, body: { code: "BAD_REQUEST", field } });
    }
  });

  it("unsubscribes when the client goes away", async () => {
    const before = tl.events.listenerCount("published");
    const sse = await openSse(`${srv.url}/events?source=all`);
    await sse.next();
    expect(tl.events.listenerCount("published")).toBe(before + 1);
    sse.close();
    await waitFor(
      () => tl.events.listenerCount("published") === before,
      "the listener to be removed",
    );
  });
});

describe("an event stream read slower than events come", () => {
  it("holds at most eventQueueLimit events, then drops and counts the rest, and says so", async () => {
    const handler = createManagementHandler({ tasklane: tl, eventQueueLimit: 5 });
    const response = await handler(
      new Request("http://localhost/events?source=process&types=published"),
    );
    // Nothing reads yet: ready plus 4 events fill the queue, the other 16 are dropped.
    for (let i = 0; i < 20; i++) await tl.publish(sendEmail, email);
    const reader = (response.body as ReadableStream<Uint8Array>)
      .pipeThrough(new TextDecoderStream())
      .getReader();
    let text = "";
    while ((text.match(/\n\n/g) ?? []).length < 5) text += (await reader.read()).value;
    expect((text.match(/event: published/g) ?? []).length).toBe(4);
    // The next event, with room again, is preceded by the count of those lost.
    await tl.publish(sendEmail, email);
    while (!/event: dropped[\s\S]*event: published[^\n]*\ndata: [^\n]*\n\n/.test(text)) {
      text += (await reader.read()).value;
    }
    expect(text).toContain('event: dropped\ndata: {"count":16}\n\n');
    await reader.cancel();
  });

  it("sends a keep-alive comment when idle", async () => {
    const handler = createManagementHandler({ tasklane: tl, eventHeartbeatMs: 20 });
    const response = await handler(new Request("http://localhost/events"));
    const reader = (response.body as ReadableStream<Uint8Array>)
      .pipeThrough(new TextDecoderStream())
      .getReader();
    let text = "";
    while (!text.includes(": keep-alive\n\n")) text += (await reader.read()).value;
    expect(text.startsWith("event: ready\n")).toBe(true);
    await reader.cancel();
  });
});
