/**
 * The API on a real redis-server, with a namespace and lifecycle events: events and jobs of
 * another process (a second client on its own connections) show up, lanes by their config
 * names.
 */
import { createRedisAdapter } from "@tasklane/adapter-redis";
import { createTasklane, type Tasklane } from "@tasklane/core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
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
