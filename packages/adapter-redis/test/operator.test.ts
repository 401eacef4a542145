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

/** The lane's meta counters ops (bits: 1 results, 2 expiries) and wu (watched until). */
const metaOps = async (name: string) => {
  const n = await raw.hgetBuffer(laneKeys(prefix, name).meta, "n");
  if (n === null || n.length < 80) return { ops: 0, wu: 0 };
  return { ops: n.readDoubleBE(64), wu: n.readDoubleBE(72) };
};

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
    expect((await metaOps(name)).ops).toBe(1);
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
      expect((await metaOps(name)).wu).toBeGreaterThan(Date.now() + 30_000);
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

  it("once a watch lapses, finishes are no longer published", async () => {
    const name = laneName();
    const q = await worker.lane(name, LANE_OPTIONS);
    const a = job();
    await q.put([a]);
    // As a watcher that died leaves it: lapsed a while ago.
    const meta = laneKeys(prefix, name).meta;
    const n = (await raw.hgetBuffer(meta, "n")) as Buffer;
    const lapsed = Buffer.alloc(80);
    n.copy(lapsed, 0, 0, 64);
    lapsed.writeDoubleBE(Date.now() - 1_000, 72);
    await raw.hset(meta, "n", lapsed);
    const taken = await q.reserve({ limit: 1, leaseMs: 30_000, waitMs: 0 });
    const before = await publishes();
    expect(await q.ack(taken.jobs.map((j) => j.lock))).toEqual(["ok"]);
    expect(await publishes()).toBe(before);
  });
});

describe("expiry", () => {
  it("keeps an expiry in the lane's expiries, until its time or its job goes", async () => {
    const name = laneName();
    const q = await worker.lane(name, LANE_OPTIONS);
    const keys = laneKeys(prefix, name);
    const [index, expired] = keys.all.slice(14) as [string, string];
    // No job with an expiry yet: the lane's bit is not set, so no script reads them.
    await q.put([job()]);
    expect((await metaOps(name)).ops).toBe(0);
    const soon = job({ expiresAt: Date.now() + 150 });
    const later = job({ expiresAt: Date.now() + 3_600_000 });
    await q.put([soon, later]);
    expect((await metaOps(name)).ops).toBe(2);
    expect(Number(await raw.zscore(index, encodeId(later.id)))).toBe(later.expiresAt);
    expect((await q.get(later.id))?.expiresAt).toBe(later.expiresAt);
    expect(Number(await raw.zscore(index, encodeId(soon.id)))).toBe(soon.expiresAt);
    await waitFor(async () => (await q.get(soon.id))?.state === "expired", "the expiry");
    // Its entry went with its time; its record is in the expired set.
    expect(await raw.zscore(index, encodeId(soon.id))).toBeNull();
    expect(await raw.zrange(expired, 0, -1)).toEqual([encodeId(soon.id)]);
    expect((await q.counts()).expired).toBe(1);
    expect(await q.delete([soon.id, later.id])).toBe(2);
    expect(await raw.zcard(index)).toBe(0);
    expect(await raw.zcard(expired)).toBe(0);
  });

  it("a job handed back past its expiry, by release or a lease that ran out, expires", async () => {
    const q = await worker.lane(laneName(), LANE_OPTIONS);
    const released = job({ expiresAt: Date.now() + 100 });
    const stalled = job({ expiresAt: Date.now() + 100 });
    await q.put([released]);
    const [held] = (await q.reserve({ limit: 1, leaseMs: 60_000, waitMs: 0 })).jobs;
    await q.put([stalled]);
    const [lapsing] = (await q.reserve({ limit: 1, leaseMs: 200, waitMs: 0 })).jobs;
    expect([held?.id, lapsing?.id]).toEqual([released.id, stalled.id]);
    await waitFor(() => Date.now() > (released.expiresAt as number), "the expiry to pass");
    expect(await q.release([{ lock: (held as ReservedJob).lock, uncounted: true }])).toEqual([
      "ok",
    ]);
    expect(await q.get(released.id)).toMatchObject({ state: "expired", attempt: 0 });
    // The lease runs out after the expiry: reclaimed, it expires rather than waits.
    await waitFor(async () => (await q.get(stalled.id))?.state === "expired", "the reclaim");
    expect((await q.get(stalled.id))?.history.map((e) => e.event)).toEqual([
      "published",
      "reserved",
      "stalled",
      "expired",
    ]);
    expect((await q.reserve({ limit: 10, leaseMs: 1_000, waitMs: 0 })).jobs).toEqual([]);
  });
});

describe("priority and promote", () => {
  it("a job leaving the list for another priority and coming back keeps its place by put order", async () => {
    const q = await worker.lane(laneName(), LANE_OPTIONS);
    const [a, b, c] = [job(), job(), job()];
    await q.put([a, b, c]);
    expect(await q.setPriority([a.id], 5)).toEqual(["ok"]);
    expect(await q.setPriority([a.id], 0)).toEqual(["ok"]);
    expect(await q.setPriority([b.id], 0)).toEqual(["ok"]);
    expect((await q.counts()).waiting).toBe(3);
    const listed: string[] = [];
    for await (const info of q.list({ state: "waiting" })) listed.push(info.id);
    expect(listed.sort()).toEqual([a.id, b.id, c.id].sort());
    // a came back as a late arrival: still first, by its put order.
    const taken = await q.reserve({ limit: 3, leaseMs: 30_000, waitMs: 0 });
    expect(taken.jobs.map((j) => [j.id, j.priority])).toEqual([
      [a.id, 0],
      [b.id, 0],
      [c.id, 0],
    ]);
    expect((await q.get(a.id))?.history.filter((e) => e.event === "prioritized")).toMatchObject([
      { detail: "5" },
      { detail: "0" },
    ]);
    await expect(q.setPriority([a.id], 1.5)).rejects.toThrow(/priority/);
  });

  it("promote wakes an idle worker blocked on the empty lane", async () => {
    const q = await worker.lane(laneName(), LANE_OPTIONS);
    const later = job({ runAt: Date.now() + 3_600_000 });
    await q.put([later]);
    const polling = q.reserve({ limit: 1, leaseMs: 30_000, waitMs: 10_000 });
    await waitFor(async () => String(await raw.client("LIST")).includes("cmd=blpop"), "the block");
    const started = Date.now();
    expect(await q.promote([later.id])).toEqual(["ok"]);
    expect((await polling).jobs.map((j) => j.id)).toEqual([later.id]);
    expect(Date.now() - started).toBeLessThan(2_000);
  });
});

describe("move", () => {
  it("an interrupted move leaves the job marked in the source; a later move completes it to its first target", async () => {
    const from = await worker.lane(laneName(), LANE_OPTIONS);
    const first = await worker.lane(laneName(), LANE_OPTIONS);
    const other = await worker.lane(laneName(), LANE_OPTIONS);
    const a = job({ expiresAt: Date.now() + 3_600_000 });
    await from.put([a]);
    const [held] = (await from.reserve({ limit: 1, leaseMs: 60_000, waitMs: 0 })).jobs;
    expect(
      await from.report([{ lock: (held as ReservedJob).lock, progress: "0.5", logs: [line] }]),
    ).toEqual(["ok"]);
    // Step 1 only, as a process that died after it leaves it.
    const marked = (await from.run("move-out", [first.name, "t0k3n", encodeId(a.id), ""])) as [
      number,
      string,
    ];
    expect(marked[0]).toBe(1);
    expect(await from.get(a.id)).toMatchObject({ state: "active", progress: "0.5" });
    expect(await from.ack([(held as ReservedJob).lock])).toEqual(["lost"]);
    expect((await from.reserve({ limit: 1, leaseMs: 1_000, waitMs: 0 })).jobs).toEqual([]);
    expect((await from.counts()).active).toBe(0);
    expect(await from.delete([a.id])).toBe(0);
    // Asked to move it elsewhere: it completes the move to its first target, then moves on.
    expect(await from.move([a.id], other)).toEqual(["moved"]);
    expect(await from.get(a.id)).toBeUndefined();
    expect(await first.get(a.id)).toBeUndefined();
    const moved = await other.get(a.id);
    expect(moved).toMatchObject({
      state: "waiting",
      attempt: 0,
      progress: "0.5",
      logs: [line],
      expiresAt: a.expiresAt,
    });
    expect(moved?.history.map((e) => [e.event, e.detail])).toEqual([
      ["published", undefined],
      ["reserved", undefined],
      ["moved", from.name],
      ["moved", first.name],
    ]);
    // Moving it again: nothing is left in the source.
    expect(await from.move([a.id], first)).toEqual(["not_found"]);
  });

  it("refuses a target that is not another lane of the same adapter", async () => {
    const q = await worker.lane(laneName(), LANE_OPTIONS);
    const elsewhere = await waiter.lane(laneName(), LANE_OPTIONS);
    await expect(q.move(["x"], q)).rejects.toThrow(/another lane/);
    await expect(q.move(["x"], elsewhere)).rejects.toThrow(/another lane/);
  });
});

const line = { at: 1_000, attempt: 1, message: "half way" };

describe("tags and search", () => {
  it("summaries carry the task (any characters, behind a trace context and appData) and no payload", async () => {
    const name = laneName();
    const q = await waiter.lane(name, LANE_OPTIONS);
    const task = "größe-🙂-報告";
    const odd = job({
      task,
      payload: '{"big":"' + "x".repeat(2_000) + '"}',
      appData: "app:data",
      traceContext: "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01",
      tags: ["t"],
    });
    const plain = job({ task: "größe", tags: ["t"] });
    await q.put([odd, plain]);
    const page = await q.listPage({ tag: "t", fields: "summary" });
    expect(page.jobs.map((j) => [j.id, j.task]).sort()).toEqual(
      [
        [odd.id, task],
        [plain.id, "größe"],
      ].sort(),
    );
    expect(page.jobs[0]).not.toHaveProperty("payload");
    // The task filter compares the whole task: "größe" is not a prefix match of the other.
    const byTask = await q.listPage({ task: "größe", fields: "summary" });
    expect(byTask.jobs.map((j) => j.id)).toEqual([plain.id]);
    expect((await q.listPage({ task })).jobs.map((j) => j.id)).toEqual([odd.id]);
  });

  it("keeps each tag's and each failed job's index entries exactly while the job is there", async () => {
    const name = laneName();
    const q = await waiter.lane(name, {
      ...LANE_OPTIONS,
      retention: { succeeded: { maxCount: 1 } },
    });
    const [index, failures] = laneKeys(prefix, name).all.slice(16) as [string, string];
    const a = job({ tags: ["x", "y"] });
    const b = job({ tags: ["x"] });
    await q.put([a, b]);
    expect(await raw.zcard(index)).toBe(3);
    const taken = (await q.reserve({ limit: 2, leaseMs: 30_000, waitMs: 0 })).jobs;
    const error = { name: "Boom", message: "m", reason: "error" as const };
    await q.nack([{ lock: taken[0]!.lock, dead: true, error }]);
    expect(await raw.zcard(failures)).toBe(1);
    expect(await q.retryFailed([taken[0]!.id])).toBe(1);
    expect(await raw.zcard(failures)).toBe(0);
    // Both succeed; retention keeps one, and the other's tags leave the index with it.
    await q.ack([taken[1]!.lock]);
    const again = (await q.reserve({ limit: 1, leaseMs: 30_000, waitMs: 0 })).jobs;
    await q.ack(again.map((j) => j.lock));
    await waitFor(async () => (await q.counts()).succeeded === 1, "retention");
    const kept = (await q.listPage({ state: "succeeded" })).jobs[0]!;
    expect(await raw.zcard(index)).toBe(kept.tags?.length);
    expect(await q.delete([kept.id])).toBe(1);
    expect(await raw.zcard(index)).toBe(0);
    expect((await metaOps(name)).ops & 4).toBe(4);
  });
});
