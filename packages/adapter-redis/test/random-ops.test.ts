/**
 * Random operations from three adapters on one queue (seeded, no timing-dependent
 * transitions): counts always equal what list() streams per state, no job is handed out
 * twice while held or after it finished, and the waiting-list counter matches the records.
 */
import { randomUUID } from "node:crypto";
import type { JobState, Lock } from "@tasklane/core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createRedisAdapter, type RedisAdapter } from "../src/index.ts";
import { type RedisServer, startRedis, uniquePrefix } from "./helpers.ts";

let server: RedisServer;
let adapters: RedisAdapter[] = [];

beforeAll(async () => {
  server = await startRedis();
  const prefix = uniquePrefix();
  adapters = [0, 1, 2].map(() => createRedisAdapter({ connection: server.url, prefix }));
});

afterAll(async () => {
  for (const a of adapters) await a.close();
  await server?.stop();
});

const STATES: JobState[] = ["waiting", "delayed", "active", "succeeded", "failed", "canceled"];

describe("random operations", () => {
  it("keep counts, lists and fencing consistent", async () => {
    const options = {
      maxStalls: 2,
      historyLimit: 5,
      maxConcurrency: 40,
      retention: { succeeded: { maxCount: 50 } },
    };
    const queues = await Promise.all(adapters.map((a) => a.queue("random", options)));
    let seed = 7;
    const rand = () => {
      seed = (seed * 1103515245 + 12345) % 2147483648;
      return seed / 2147483648;
    };
    const pick = <T>(items: T[]): T => items[Math.floor(rand() * items.length)] as T;
    const known: string[] = [];
    const finished = new Set<string>();
    const held = new Map<string, { q: number; lock: Lock }>();
    const error = { name: "E", message: "m", reason: "error" as const };
    for (let round = 1; round <= 300; round++) {
      const qi = Math.floor(rand() * 3);
      const q = queues[qi]!;
      const r = rand();
      if (r < 0.3) {
        const jobs = Array.from({ length: 1 + Math.floor(rand() * 20) }, () => ({
          id: rand() < 0.1 && known.length > 0 ? pick(known) : randomUUID(),
          task: "t",
          payload: "{}",
          priority: rand() < 0.3 ? Math.floor(rand() * 10) - 5 : 0,
          publishedAt: Date.now(),
        }));
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
      } else if (r < 0.85 && held.size > 0) {
        const kind = rand();
        for (const [id, h] of [...held.entries()].slice(0, 1 + Math.floor(rand() * 10))) {
          held.delete(id);
          const hq = queues[h.q]!;
          if (kind < 0.5) {
            expect(await hq.ack([h.lock])).toEqual(["ok"]);
            finished.add(id);
          } else if (kind < 0.7) {
            expect(await hq.nack([{ lock: h.lock, runAt: 0, error }])).toEqual(["ok"]);
          } else if (kind < 0.85) {
            expect(await hq.nack([{ lock: h.lock, dead: true, error }])).toEqual(["ok"]);
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
            expect(await queues[h.q]!.ack([h.lock])).toEqual(["canceled"]);
          }
        }
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
        for (const state of STATES) {
          listed[state] = 0;
          for await (const info of q.list({ state, pageSize: 7 })) {
            expect(info.state).toBe(state);
            listed[state] = (listed[state] ?? 0) + 1;
          }
        }
        expect(listed).toEqual(counts);
        expect(counts.active).toBe(held.size);
      }
    }
  }, 60_000);
});
