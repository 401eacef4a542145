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

describe("the operator endpoints on Redis", () => {
  it("tells GET / which operator capabilities Redis has, and that every endpoint is in this version", async () => {
    const { body } = await call(`${srv.url}/`);
    const caps = (body.adapter as { capabilities: Record<string, unknown> }).capabilities;
    const has = [
      "tags",
      "search",
      "failureGroups",
      "results",
      "waitFor",
      "reports",
      "workers",
      "changePriority",
      "promote",
      "move",
      "expiry",
      "schedules",
    ];
    for (const name of has) expect(caps[name], name).toBe(true);
    expect(body.notYetSupported).toEqual([]);
  });

  it("searches by tag, task and error name, groups failures and deletes a group, on Redis", async () => {
    const tagged = await call(`${srv.url}/tasks/send-email/jobs`, {
      method: "POST",
      body: { payload: { to: "t@example.com", subject: "s" }, tags: ["vip"] },
    });
    expect(tagged.status).toBe(201);
    const taggedId = tagged.body.id as string;
    const byTag = await ndjson(`${srv.url}/lanes/default/jobs?state=waiting&tag=vip`);
    expect(byTag.map((j) => [j.id, j.tags])).toEqual([[taggedId, ["vip"]]]);
    const byTask = await ndjson(`${srv.url}/lanes/default/jobs?state=waiting&task=send-email`);
    expect(byTask.map((j) => j.id)).toContain(taggedId);
    const failed = await elsewhere.publishMany(alwaysFails, [
      { payload: { n: 1 } },
      { payload: { n: 2 } },
    ]);
    const worker = elsewhere.worker({ concurrency: 2, lanes: ["default"] });
    await worker.start();
    await waitFor(
      async () =>
        (await here.lane("default").count({ state: "failed", errorName: "UnrecoverableError" })) ===
        2,
      "two failures",
    );
    await worker.stop();
    const groups = await call(`${srv.url}/lanes/default/failure-groups`);
    expect(groups.status).toBe(200);
    expect(groups.body).toMatchObject({
      groups: [{ lane: "default", group: "UnrecoverableError", count: 2 }],
    });
    const counted = await call(`${srv.url}/lanes/default/count?errorName=UnrecoverableError`);
    expect(counted.body).toMatchObject({ count: 2 });
    const deleted = await call(`${srv.url}/lanes/default/jobs/delete`, {
      method: "POST",
      body: { filter: { state: "failed", errorName: "UnrecoverableError" } },
    });
    expect(deleted.body).toEqual({ matched: 2, changed: 2, more: false });
    for (const { id } of failed) expect(await here.lane("default").get(id)).toBeUndefined();
    expect((await call(`${srv.url}/failure-groups`)).body).toMatchObject({ groups: [] });
  });

  it("changes a job's priority, moves it to another lane and lists schedules, on Redis", async () => {
    const { id } = await here.publish(sendEmail, { to: "m@example.com", subject: "s" });
    const priority = await call(`${srv.url}/lanes/default/jobs/${id}/priority`, {
      method: "POST",
      body: { priority: 5 },
    });
    expect(priority.status).toBe(200);
    expect((await here.lane("default").get(id))?.priority).toBe(5);
    const moved = await call(`${srv.url}/lanes/default/jobs/${id}/move`, {
      method: "POST",
      body: { toLane: "low" },
    });
    expect(moved.status).toBe(200);
    expect(await here.lane("default").get(id)).toBeUndefined();
    expect(await here.lane("low").get(id)).toMatchObject({ id, state: "waiting" });
    await here.schedules.upsert("nightly", { cron: "0 3 * * *", timezone: "UTC" }, report, {
      day: "d",
    });
    const listed = await call(`${srv.url}/schedules`);
    expect(listed.status).toBe(200);
    expect(listed.body.schedules).toMatchObject([
      { id: "nightly", lane: "low", task: "report", spec: { cron: "0 3 * * *" } },
    ]);
    await here.schedules.remove("nightly");
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
