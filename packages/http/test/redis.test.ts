/**
 * The API on a real redis-server, with a namespace and lifecycle events: events and jobs of
 * another process (a second client on its own connections) show up, lanes by their config
 * names.
 */
import { createRedisAdapter } from "@tasklane/adapter-redis";
import { createTasklane, defineTask, type Tasklane } from "@tasklane/core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { type RedisServer, startRedis, uniquePrefix } from "../../adapter-redis/test/helpers.ts";
import {
  alwaysFails,
  call,
  ndjson,
  openSse,
  report,
  sendEmail,
  serve,
  type TestServer,
  waitFor,
} from "./helpers.ts";

let redis: RedisServer;
let here: Tasklane;
let elsewhere: Tasklane;
let srv: TestServer;

const client = (prefix: string) =>
  createTasklane({
    adapter: createRedisAdapter({ connection: redis.url, prefix, lifecycleEvents: true }),
    namespace: "v42",
    lanes: [{ name: "default" }, { name: "low" }],
    tasks: [sendEmail, alwaysFails, report],
  });

beforeAll(async () => {
  redis = await startRedis();
  const prefix = uniquePrefix();
  here = client(prefix);
  elsewhere = client(prefix);
  srv = await serve({ tasklane: here, authorize: () => "write" });
});

afterAll(async () => {
  await srv?.close();
  await here?.close();
  await elsewhere?.close();
  await redis?.stop();
});

describe("on Redis", () => {
  it("streams another process's lifecycle events, lanes by config name", async () => {
    const sse = await openSse(`${srv.url}/events?lanes=default`);
    expect((await sse.next()).data).toEqual({ sources: ["backend"] });
    const { id } = await elsewhere.publish(sendEmail, { to: "a@example.com", subject: "s" });
    const worker = elsewhere.worker({ concurrency: 1, lanes: ["default"] });
    await worker.start();
    const seen: string[] = [];
    for (;;) {
      const e = await sse.next();
      expect(e.data).toMatchObject({ source: "backend", lane: "default", jobId: id });
      seen.push(e.event);
      if (e.event === "succeeded") break;
    }
    expect(seen).toEqual(["published", "started", "succeeded"]);
    await worker.stop();
    sse.close();
  });

  it("lists and shows jobs another process published, under the config lane name", async () => {
    const published = await elsewhere.publishMany(
      report,
      Array.from({ length: 30 }, (_, i) => ({ payload: { day: `d${i}` } })),
    );
    const listed = await ndjson(`${srv.url}/lanes/low/jobs?state=waiting`);
    expect(listed.map((j) => j.id)).toEqual(published.map((r) => r.id));
    expect(new Set(listed.map((j) => j.lane))).toEqual(new Set(["low"]));
    const one = await call(`${srv.url}/lanes/low/jobs/${published[4]?.id}`);
    expect(one.body).toMatchObject({ lane: "low", payload: { day: "d4" }, state: "waiting" });
  });

  it("cancels by filter in bounded batches, then deletes what it canceled", async () => {
    const before = (await here.lane("low").counts()).waiting;
    expect(before).toBeGreaterThan(0);
    let calls = 0;
    let canceled = 0;
    for (;;) {
      const { body } = await call(`${srv.url}/lanes/low/jobs/cancel`, {
        method: "POST",
        body: { filter: { state: "waiting" }, limit: 7 },
      });
      calls++;
      canceled += body.changed as number;
      expect(body.matched).toBeLessThanOrEqual(7);
      if (!body.more) break;
    }
    expect(canceled).toBe(before);
    expect(calls).toBe(Math.ceil(before / 7) + (before % 7 === 0 ? 1 : 0));
    expect(await here.lane("low").counts()).toMatchObject({ waiting: 0, canceled: before });
    const deleted = await call(`${srv.url}/lanes/low/jobs/delete`, {
      method: "POST",
      body: { filter: { state: "canceled" } },
    });
    expect(deleted.body).toEqual({ matched: before, changed: before, more: false });
  });

  it("gives Redis's stats for the jobs the other process ran", async () => {
    await waitFor(
      async () => (await here.lane("default").counts()).succeeded >= 1,
      "the job to finish",
    );
    const { body } = await call(`${srv.url}/lanes/default`);
    expect(body).toMatchObject({ name: "default", countsExact: true, paused: false });
    const stats = body.stats as { run: { count: number }; wait: { count: number } };
    expect(stats.run.count).toBe(1);
    expect(stats.wait.count).toBe(stats.run.count);
  });
});

describe("the operator endpoints on Redis, whose adapter declares them false for now", () => {
  it("tells GET / that the operator capabilities are false, and only schedules are not in this version", async () => {
    const { body } = await call(`${srv.url}/`);
    const caps = (body.adapter as { capabilities: Record<string, unknown> }).capabilities;
    for (const name of [
      "results",
      "waitFor",
      "reports",
      "tags",
      "search",
      "failureGroups",
      "workers",
      "changePriority",
      "promote",
      "move",
      "expiry",
    ]) {
      expect(caps[name], name).toBe(false);
    }
    expect(body.notYetSupported).toEqual(["schedules"]);
  });

  it("answers 501 naming the capability, after checking the input, and changes nothing", async () => {
    const { id } = await here.publish(sendEmail, { to: "a@example.com", subject: "s" });
    const before = await here.lane("default").get(id);
    const cases: Array<[string, string, unknown, string]> = [
      ["POST", `/lanes/default/jobs/${id}/promote`, undefined, "promote"],
      ["POST", `/lanes/default/jobs/${id}/priority`, { priority: 5 }, "changePriority"],
      ["POST", `/lanes/default/jobs/${id}/move`, { toLane: "low" }, "move"],
      ["POST", "/lanes/default/jobs/promote", { filter: { state: "delayed" } }, "promote"],
      ["POST", "/lanes/default/jobs/priority", { ids: [id], priority: 1 }, "changePriority"],
      ["POST", "/lanes/default/jobs/move", { ids: [id], toLane: "low" }, "move"],
      [
        "POST",
        "/lanes/default/jobs/delete",
        { filter: { state: "failed", errorName: "E" } },
        "search",
      ],
      ["GET", "/lanes/default/failure-groups", undefined, "failureGroups"],
      ["GET", "/failure-groups", undefined, "failureGroups"],
      ["GET", "/workers", undefined, "workers"],
      ["GET", `/jobs/${id}/result?waitMs=100`, undefined, "waitFor"],
      ["GET", "/lanes/default/jobs", undefined, "search"],
      ["GET", "/lanes/default/jobs?state=waiting&task=send-email", undefined, "search"],
      ["GET", "/lanes/default/jobs?state=waiting&cursor=c1.x", undefined, "search"],
      ["GET", "/lanes/default/jobs?state=waiting&tag=vip", undefined, "tags"],
      ["GET", "/lanes/default/count?errorName=TypeError", undefined, "search"],
      [
        "POST",
        "/tasks/send-email/jobs",
        { payload: { to: "a@example.com", subject: "s" }, tags: ["vip"] },
        "tags",
      ],
      [
        "POST",
        "/tasks/send-email/jobs",
        { payload: { to: "a@example.com", subject: "s" }, expiresInMs: 60_000 },
        "expiry",
      ],
    ];
    for (const [method, path, body, capability] of cases) {
      const answer = await call(`${srv.url}${path}`, { method, body });
      expect(answer.status, path).toBe(501);
      expect(answer.body, path).toMatchObject({ code: "UNSUPPORTED", capability });
      expect(answer.body.message, path).toContain("The redis adapter does not support");
    }
    // Input is checked first: a bad one is a 400 even where the adapter could not act.
    const badMove = await call(`${srv.url}/lanes/default/jobs/${id}/move`, {
      method: "POST",
      body: { toLane: "nowhere" },
    });
    expect(badMove).toMatchObject({ status: 400, body: { field: "toLane" } });
    expect(await here.lane("default").get(id)).toEqual(before);
    expect(await here.lane("low").get(id)).toBeUndefined();
  });

  it("still answers what needs only get, list and counts: a result now, summaries, counts by state", async () => {
    const { id } = await here.publish(sendEmail, { to: "b@example.com", subject: "s" });
    const result = await call(`${srv.url}/jobs/${id}/result`);
    expect(result.body).toEqual({ id, lane: "default", state: "waiting", done: false });
    const summaries = await ndjson(`${srv.url}/lanes/default/jobs?state=waiting&fields=summary`);
    const mine = summaries.find((j) => j.id === id);
    expect(mine).toMatchObject({ id, lane: "default", task: "send-email", state: "waiting" });
    expect(mine).not.toHaveProperty("payload");
    const count = await call(`${srv.url}/lanes/default/count?state=waiting`);
    expect(count.body).toEqual({
      lane: "default",
      count: (await here.lane("default").counts()).waiting,
      exact: true,
    });
    const counts = (await call(`${srv.url}/lanes/default`)).body.counts as Record<string, number>;
    expect(counts.expired).toBe(0);
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
    const client = createTasklane({
      adapter: createRedisAdapter({ connection: redis.url, prefix: uniquePrefix() }),
      lanes: [{ name: "default" }],
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
      lane: "default",
      jobId: id,
      task: "progressing",
      unserializable: true,
    });
    expect((await sse.next()).data).toMatchObject({ type: "progress", value: { log: "half way" } });
    expect((await sse.next()).data).toMatchObject({ type: "succeeded", jobId: id });
    await worker.stop();
    sse.close();
    await local.close();
    await client.close();
  });
});
