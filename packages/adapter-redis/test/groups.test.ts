/**
 * Fair groups' structures on Redis (FAIR GROUPS in lua/_common.lua): what the conformance
 * suite cannot see. The waiting list keeps no tombstones once a grouped lane is served,
 * list and counts stay right while it is, the groups' keys empty with their jobs, and a
 * removed job's group goes with its record. Both forms of the scripts.
 */
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
} from "./helpers.ts";

let server: RedisServer;
let raw: Redis;
beforeAll(async () => {
  server = await startRedis();
  raw = new Redis(server.port, server.host);
});
afterAll(async () => {
  raw?.disconnect();
  await server?.stop();
});

for (const scripting of ["functions", "eval"] as const) {
  describe(`fair groups on redis (${scripting})`, () => {
    let adapter: RedisAdapter;
    let prefix: string;
    beforeAll(() => {
      prefix = uniquePrefix();
      adapter = createRedisAdapter({ connection: server.url, prefix, scripting });
    });
    afterAll(async () => {
      await adapter?.close();
    });
    const tagOf = (lane: string) => laneKeys(prefix, lane).meta.slice(0, -1);

    it("serves the lane with list and counts right, and leaves no tombstones or group entries", async () => {
      const q = await adapter.lane("served", { ...LANE_OPTIONS, groups: { concurrency: 2 } });
      const tag = tagOf("served");
      // A's backlog first: every job taken from B or C is behind A's in the list
      const a = Array.from({ length: 6 }, () => job({ group: "A" }));
      const b = Array.from({ length: 3 }, () => job({ group: "B" }));
      const c = Array.from({ length: 3 }, () => job());
      await q.put(a);
      await q.put([...b, ...c]);
      const first = (await q.reserve({ limit: 5, leaseMs: 30_000, waitMs: 0 })).jobs;
      expect(first.map((j) => j.id)).toEqual([a[0], b[0], c[0], a[1], b[1]].map((j) => j?.id));
      const waiting = [a[2], a[3], a[4], a[5], b[2], c[1], c[2]].map((j) => j?.id);
      expect((await q.counts()).waiting).toBe(7);
      const listed = await q.listPage({ state: "waiting", pageSize: 20 });
      expect(listed.jobs.map((j) => j.id).sort()).toEqual([...waiting].sort());
      // A and B are at their limit; the jobs without a group are a group too: one more
      const second = await q.reserve({ limit: 10, leaseMs: 30_000, waitMs: 0 });
      expect(second.jobs.map((j) => j.id)).toEqual([c[1]?.id]);
      expect(second.ready).toBe(0);
      expect(await q.ack([...first, ...second.jobs].map((j) => j.lock))).toEqual(
        Array(6).fill("ok"),
      );
      const rest: string[] = [];
      for (;;) {
        const got = (await q.reserve({ limit: 10, leaseMs: 30_000, waitMs: 0 })).jobs;
        if (got.length === 0) break;
        rest.push(...got.map((j) => j.id));
        await q.ack(got.map((j) => j.lock));
      }
      expect(rest).toEqual([a[2], b[2], c[2], a[3], a[4], a[5]].map((j) => j?.id));
      expect(await q.counts()).toMatchObject({ waiting: 0, active: 0, succeeded: 12 });
      // nothing left behind: the list, its tombstone counts, the ring and the groups' zsets
      expect(await raw.llen(`${tag}w`)).toBe(0);
      expect(await raw.exists(`${tag}x`, `${tag}gr`, `${tag}gq:A`, `${tag}gq:B`, `${tag}gq:`)).toBe(
        0,
      );
    });

    it("drops a removed job's group with its record, and a canceled job's entry when met", async () => {
      const q = await adapter.lane("removed", { ...LANE_OPTIONS, groups: {} });
      const tag = tagOf("removed");
      const [a1, a2, b1] = [job({ group: "A" }), job({ group: "A" }), job({ group: "B" })];
      await q.put([a1, a2, b1]);
      expect(await raw.hget(`${tag}gj`, encodeId(a1.id))).toBe("A");
      expect(await q.delete?.([a1.id])).toBe(1);
      expect(await raw.hexists(`${tag}gj`, encodeId(a1.id))).toBe(0);
      expect(await q.cancel?.([b1.id])).toEqual(["canceled"]);
      expect((await q.counts()).waiting).toBe(1);
      const got = await q.reserve({ limit: 10, leaseMs: 30_000, waitMs: 0 });
      expect(got.jobs.map((j) => j.id)).toEqual([a2.id]);
      expect(got.ready).toBe(0);
      expect(await raw.exists(`${tag}gr`, `${tag}gq:A`, `${tag}gq:B`)).toBe(0);
    });
  });
}
