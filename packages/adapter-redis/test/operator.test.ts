/**
 * The operator features (issue 24) where the Redis adapter does more than the conformance
 * suite can see: what lives in which key, what is cleaned up with a job, and what runs
 * with lifecycle events off (the conformance suite runs with them on).
 */
import { randomUUID } from "node:crypto";
import type { JobFinishedEvent, ReservedJob } from "@tasklane/core/adapter";
import { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createRedisAdapter, type RedisAdapter } from "../src/index.ts";
import { encodeId, laneKeys } from "../src/internal.ts";
import {
  newJob as job,
  LANE_OPTIONS,
  type RedisServer,
  startRedis,
  uniquePrefix,
  waitFor,
} from "./helpers.ts";

let server: RedisServer;
let raw: Redis;
let prefix: string;
/** Two processes' adapters on one prefix, lifecycle events off in both. */
let waiter: RedisAdapter;
let worker: RedisAdapter;

beforeAll(async () => {
  server = await startRedis();
  raw = new Redis(server.port, server.host);
  prefix = uniquePrefix();
  waiter = createRedisAdapter({ connection: server.url, prefix });
  worker = createRedisAdapter({ connection: server.url, prefix });
});

afterAll(async () => {
  await waiter?.close();
  await worker?.close();
  raw?.disconnect();
  await server?.stop();
});

const laneName = () => `q-${randomUUID().slice(0, 8)}`;

/** How many PUBLISH commands the server has run so far. */
const publishes = async () => {
  const stats = (await raw.info("commandstats")) as string;
  return Number(/cmdstat_publish:calls=(\d+)/.exec(stats)?.[1] ?? 0);
};

describe("results", () => {
  it("live in the lane's results hash, and go with their job (delete, retention)", async () => {
    const name = laneName();
    const q = await worker.lane(name, {
      ...LANE_OPTIONS,
      retention: { succeeded: { maxCount: 1 } },
    });
    const keys = laneKeys(prefix, name);
    const results = keys.all[13] as string;
    const [a, b, c] = [job(), job(), job()];
    await q.put([a, b, c]);
    const taken = await q.reserve({ limit: 3, leaseMs: 30_000, waitMs: 0 });
    const lockOf = (id: string) => (taken.jobs.find((j) => j.id === id) as ReservedJob).lock;
    expect(await q.ack([{ ...lockOf(a.id), result: '"a"' }])).toEqual(["ok"]);
    expect(await raw.hget(results, encodeId(a.id))).toBe('"a"');
    expect(await raw.hget(keys.meta, "o")).toBe("r");
    // Retention keeps one succeeded job: a's record and result go when b succeeds.
    expect(await q.ack([{ ...lockOf(b.id), result: '"b"' }])).toEqual(["ok"]);
    expect(await q.get(a.id)).toBeUndefined();
    expect(await raw.hkeys(results)).toEqual([encodeId(b.id)]);
    expect(await q.delete([b.id])).toBe(1);
    expect(await raw.hlen(results)).toBe(0);
    // A plain ack writes no results hash field.
    expect(await q.ack([lockOf(c.id)])).toEqual(["ok"]);
    expect(await raw.hlen(results)).toBe(0);
  });
});

describe("watch", () => {
  it("reports finishes to another process with lifecycle events off, from the watch on", async () => {
    const name = laneName();
    const q = await worker.lane(name, LANE_OPTIONS);
    const [a, b] = [job(), job()];
    await q.put([a, b]);
    // Nobody watches: an ack publishes nothing.
    let taken = await q.reserve({ limit: 1, leaseMs: 30_000, waitMs: 0 });
    const before = await publishes();
    expect(await q.ack(taken.jobs.map((j) => j.lock))).toEqual(["ok"]);
    expect(await publishes()).toBe(before);
    const events: JobFinishedEvent[] = [];
    const stop = await waiter.watch([{ lane: name, jobId: b.id }], (e) => events.push(e));
    try {
      const until = Number(await raw.hget(laneKeys(prefix, name).meta, "w"));
      expect(until).toBeGreaterThan(Date.now() + 30_000);
      taken = await q.reserve({ limit: 1, leaseMs: 30_000, waitMs: 0 });
      expect(taken.jobs.map((j) => j.id)).toEqual([b.id]);
      expect(await q.ack([{ ...(taken.jobs[0] as ReservedJob).lock, result: "1" }])).toEqual([
        "ok",
      ]);
      await waitFor(() => events.length > 0, "the finished event");
      expect(events).toEqual([{ lane: name, jobId: b.id, state: "succeeded" }]);
    } finally {
      await stop();
    }
  });

  it("a lapsed watch flag is removed, and finishes are no longer published", async () => {
    const name = laneName();
    const q = await worker.lane(name, LANE_OPTIONS);
    const meta = laneKeys(prefix, name).meta;
    // As a watcher that died leaves it: lapsed a while ago.
    await raw.hset(meta, "w", String(Date.now() - 1_000));
    const a = job();
    await q.put([a]);
    expect(await raw.hexists(meta, "w")).toBe(0);
    const taken = await q.reserve({ limit: 1, leaseMs: 30_000, waitMs: 0 });
    const before = await publishes();
    expect(await q.ack(taken.jobs.map((j) => j.lock))).toEqual(["ok"]);
    expect(await publishes()).toBe(before);
  });
});
