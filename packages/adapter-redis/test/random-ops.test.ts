/**
 * Random operations from three adapters on one lane (seeded, no timing-dependent
 * transitions): counts always equal what list() streams per state, no job is handed out
 * twice while held or after it finished, the waiting-list counter matches the records,
 * every put call's header (by-ref records) counts exactly the records that refer to it,
 * and the tag and failure indexes hold exactly the jobs that carry a tag and the failed
 * jobs (searches by them list what the full listing shows).
 */
import { randomUUID } from "node:crypto";
import {
  JOB_STATES,
  type JobInfo,
  type LaneStore,
  type ListFilter,
  type Lock,
  type NewJob,
} from "@tasklane/core/adapter";
import { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createRedisAdapter, type RedisAdapter } from "../src/index.ts";
import { laneKeys } from "../src/internal.ts";
import { type RedisServer, startRedis, uniquePrefix } from "./helpers.ts";

let server: RedisServer;
let adapters: RedisAdapter[] = [];
let raw: Redis;
const prefix = uniquePrefix();

beforeAll(async () => {
  server = await startRedis();
  adapters = [0, 1, 2].map(() => createRedisAdapter({ connection: server.url, prefix }));
  raw = new Redis(server.url);
});

afterAll(async () => {
  for (const a of adapters) await a.close();
  raw?.disconnect();
  await server?.stop();
});

/**
 * The by-ref records' call refs (hex) with how many records refer to each, and the
 * records-left count each stored call header holds.
 */
async function callRefs(
  lane: string,
): Promise<{ referred: Map<string, number>; headers: Map<string, number> }> {
  const keys = laneKeys(prefix, lane).all;
  const referred = new Map<string, number>();
  for (const record of await raw.hvalsBuffer(keys[1] as string)) {
    if (record[0] !== 7) continue;
    const ref = record.subarray(3, 11).toString("hex");
    referred.set(ref, (referred.get(ref) ?? 0) + 1);
  }
  const headers = new Map<string, number>();
  const refs = await raw.hkeysBuffer(keys[11] as string);
  if (refs.length > 0) {
    const values = await raw.hmgetBuffer(keys[11] as string, ...refs);
    refs.forEach((ref, i) => {
      headers.set(ref.toString("hex"), values[i]?.readUInt32BE(20) ?? -1);
    });
  }
  return { referred, headers };
}

/** How much the index checks compared, over the run (each must have compared something). */
const indexChecks = { tagged: 0, failed: 0 };

/** Every page of a search, its ids sorted. */
async function searchIds(q: LaneStore, filter: ListFilter): Promise<string[]> {
  const ids: string[] = [];
  let cursor: string | undefined;
  do {
    const page = await q.listPage!({ ...filter, pageSize: 5, fields: "summary" }, cursor);
    ids.push(...page.jobs.map((j) => j.id));
    cursor = page.cursor;
  } while (cursor !== undefined);
  return ids.sort();
}

/**
 * The tag and failure indexes against the full listing `all`: each tag's search lists
 * exactly the jobs carrying it, each failure group counts exactly the failed jobs of its
 * error name, and neither index holds an entry more (raw sizes).
 */
async function checkIndexes(q: LaneStore, all: JobInfo[]): Promise<void> {
  const keys = laneKeys(prefix, "random").all;
  let entries = 0;
  for (const tag of ["red", "blue", "r", "red:1"]) {
    const want = all.filter((j) => j.tags?.includes(tag)).map((j) => j.id);
    expect(await searchIds(q, { tag })).toEqual(want.sort());
    expect(await q.count!({ tag })).toBe(want.length);
    entries += want.length;
    indexChecks.tagged += want.length;
  }
  expect(await raw.zcard(keys[16] as string)).toBe(entries);
  const failed = all.filter((j) => j.state === "failed");
  const groups = new Map<string, number>();
  for (const j of failed) groups.set(j.error!.name, (groups.get(j.error!.name) ?? 0) + 1);
  const got = await q.failures!();
  expect(new Map(got.map((g) => [g.group, g.count]))).toEqual(groups);
  for (const [name] of groups) {
    const want = failed.filter((j) => j.error?.name === name).map((j) => j.id);
    expect(await searchIds(q, { state: "failed", errorName: name })).toEqual(want.sort());
  }
  expect(await raw.zcard(keys[17] as string)).toBe(failed.length);
  indexChecks.failed += failed.length;
  // a search state by state lists what list() does
  expect(await searchIds(q, {})).toEqual(all.map((j) => j.id).sort());
}

describe("random operations", () => {
  it("keep counts, lists and fencing consistent", async () => {
    const options = {
      maxStalls: 2,
      historyLimit: 5,
      maxConcurrency: 40,
      retention: { succeeded: { maxCount: 50 }, failed: { maxCount: 15 } },
    };
    const lanes = await Promise.all(adapters.map((a) => a.lane("random", options)));
    let seed = 7;
    const rand = () => {
      seed = (seed * 1103515245 + 12345) % 2147483648;
      return seed / 2147483648;
    };
    const pick = <T>(items: T[]): T => items[Math.floor(rand() * items.length)] as T;
    const known: string[] = [];
    const finished = new Set<string>();
    const held = new Map<string, { q: number; lock: Lock }>();
    const TAGS = ["red", "blue", "r", "red:1"];
    const NAMES = ["E", "TypeError", "E2"];
    const errorOf = () => ({ name: pick(NAMES), message: "m", reason: "error" as const });
    let byRefSeen = 0;
    let lateSeen = 0;
    for (let round = 1; round <= 300; round++) {
      const qi = Math.floor(rand() * 3);
      const q = lanes[qi]!;
      const r = rand();
      if (r < 0.3) {
        // Mostly one priority per call, as publishMany sends; half the calls without a
        // caller's id are marked fresh, as core marks the ids it makes (by-ref records).
        const publishedAt = Date.now();
        const shared = rand() < 0.3 ? Math.floor(rand() * 10) - 5 : 0;
        const mixed = rand() < 0.3;
        const jobs: NewJob[] = Array.from({ length: 1 + Math.floor(rand() * 20) }, () => ({
          id: rand() < 0.1 && known.length > 0 ? pick(known) : randomUUID(),
          task: "t",
          payload: "{}",
          priority: mixed && rand() < 0.3 ? Math.floor(rand() * 10) - 5 : shared,
          publishedAt,
          ...(rand() < 0.4 ? { tags: TAGS.filter(() => rand() < 0.5) } : {}),
        }));
        if (rand() < 0.5 && !jobs.some((j) => known.includes(j.id))) {
          for (const j of jobs) j.freshId = true;
        }
        for (const res of await q.put(jobs)) {
          if (res.status !== "created") continue;
          known.push(res.id);
          finished.delete(res.id); // an id retention removed may come back
        }
      } else if (r < 0.55) {
        const got = await q.reserve({
          limit: 1 + Math.floor(rand() * 15),
          leaseMs: 60_000,
          waitMs: 0,
        });
        for (const j of got.jobs) {
          expect(held.has(j.id) || finished.has(j.id), `${j.id} handed out twice`).toBe(false);
          held.set(j.id, { q: qi, lock: j.lock });
        }
        // in order: priority, then due time (readyAt; put order is not in the reply)
        for (let i = 1; i < got.jobs.length; i++) {
          const [a, b] = [got.jobs[i - 1]!, got.jobs[i]!];
          expect(
            a.priority > b.priority || (a.priority === b.priority && a.readyAt <= b.readyAt),
            `${a.id} (${a.priority}, ${a.readyAt}) before ${b.id} (${b.priority}, ${b.readyAt})`,
          ).toBe(true);
        }
      } else if (r < 0.85 && held.size > 0) {
        const kind = rand();
        for (const [id, h] of [...held.entries()].slice(0, 1 + Math.floor(rand() * 10))) {
          held.delete(id);
          const hq = lanes[h.q]!;
          if (kind < 0.5) {
            expect(await hq.ack([h.lock])).toEqual(["ok"]);
            finished.add(id);
          } else if (kind < 0.7) {
            expect(await hq.nack([{ lock: h.lock, runAt: 0, error: errorOf() }])).toEqual(["ok"]);
          } else if (kind < 0.85) {
            expect(await hq.nack([{ lock: h.lock, dead: true, error: errorOf() }])).toEqual(["ok"]);
            finished.add(id);
          } else {
            expect(await hq.release([{ lock: h.lock, uncounted: true }])).toEqual(["ok"]);
          }
        }
      } else if (r < 0.92 && known.length > 0) {
        const id = pick(known);
        const [result] = (await q.cancel([id])) ?? [];
        if (result === "canceled") {
          finished.add(id);
          const h = held.get(id);
          if (h) {
            held.delete(id);
            expect(await lanes[h.q]!.ack([h.lock])).toEqual(["canceled"]);
          }
        }
      } else if (r < 0.95 && known.length > 0) {
        // failed jobs back to waiting, by id (some not failed: refused)
        const ids = Array.from({ length: 3 }, () => pick(known));
        await q.retryFailed?.(ids);
        for (const id of ids) if (!held.has(id)) finished.delete(id);
      } else if (known.length > 0) {
        const id = pick(known);
        if ((await q.delete([id])) === 1) {
          expect(held.has(id)).toBe(false);
          finished.delete(id);
        }
      }
      if (round % 50 === 0) {
        const counts = await q.counts();
        const listed: Record<string, number> = {};
        let listedIds = 0;
        const all: JobInfo[] = [];
        for (const state of JOB_STATES) {
          listed[state] = 0;
          for await (const info of q.list({ state, pageSize: 7 })) {
            expect(info.state).toBe(state);
            listed[state] = (listed[state] ?? 0) + 1;
            if (state === "waiting" && info.priority === 0) listedIds++;
            all.push(info);
          }
        }
        // no flows on Redis yet: counts leave blocked out, and it lists nothing
        expect(listed).toEqual({ ...counts, blocked: 0 });
        await checkIndexes(q, all);
        expect(counts.active).toBe(held.size);
        // every id in the waiting list is a listed job of priority 0 that did not arrive
        // late (those wait in the priority zset with score 0) or a counted tombstone
        const keys = laneKeys(prefix, "random").all;
        const tombstones = (await raw.hvals(keys[12] as string)).map(Number);
        expect(tombstones.every((n) => n > 0)).toBe(true);
        const late = await raw.zcount(keys[3] as string, 0, 0);
        lateSeen += late;
        expect(listedIds - late + tombstones.reduce((a, b) => a + b, 0)).toBe(
          await raw.llen(keys[2] as string),
        );
        const { referred, headers } = await callRefs("random");
        expect(headers).toEqual(referred);
        byRefSeen += referred.size;
      }
    }
    // the checks above compared something: by-ref records and late arrivals were there at
    // some checkpoint
    expect(byRefSeen).toBeGreaterThan(0);
    expect(lateSeen).toBeGreaterThan(0);
    expect(indexChecks.tagged).toBeGreaterThan(0);
    expect(indexChecks.failed).toBeGreaterThan(0);
    // everything finishes (the held jobs first: they take maxConcurrency's slots), and no
    // call header outlives its records
    for (const [, h] of held) await lanes[h.q]!.ack([h.lock]);
    for (;;) {
      const got = await lanes[0]!.reserve({ limit: 100, leaseMs: 60_000, waitMs: 0 });
      if (got.jobs.length === 0) break;
      await lanes[0]!.ack(got.jobs.map((j) => j.lock));
    }
    expect(await lanes[0]!.counts()).toMatchObject({ waiting: 0, delayed: 0, active: 0 });
    expect(await raw.exists(laneKeys(prefix, "random").all[11] as string)).toBe(0);
  }, 60_000);
});
