/**
 * Redis Cluster: three masters of our own, joined with redis-cli --cluster create. Lanes
 * whose hash tags land on different slots (and nodes) all work through one ioredis Cluster.
 */
import type { AdapterEvent } from "@tasklane/core/adapter";
import { Cluster } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  createRedisAdapter,
  deleteStaleLibraries,
  LIBRARY,
  type RedisAdapter,
} from "../src/index.ts";
import { laneKeys } from "../src/internal.ts";
import {
  blockedPolls,
  newJob as job,
  LANE_OPTIONS,
  libraryNames,
  loadStubLibrary,
  type RedisClusterNodes,
  startCluster,
  waitFor,
} from "./helpers.ts";

let nodes: RedisClusterNodes;
let adapter: RedisAdapter;
let client: Cluster;

beforeAll(async () => {
  nodes = await startCluster();
  const startup = nodes.ports.map((port) => ({ host: "127.0.0.1", port }));
  client = new Cluster(startup);
  adapter = createRedisAdapter({ cluster: { nodes: startup }, prefix: "cl" });
}, 60_000);

afterAll(async () => {
  await adapter?.close();
  client?.disconnect();
  await nodes?.stop();
});

const opts = LANE_OPTIONS;

describe("redis cluster", () => {
  it("runs publish, reserve, ack, retry and cancel on lanes spread over the nodes", async () => {
    const names = Array.from({ length: 6 }, (_, i) => `lane-${i}`);
    const slots = new Set<number>();
    const owners = new Set<string>();
    for (const name of names) {
      const slot = Number(await client.cluster("KEYSLOT", laneKeys("cl", name).meta));
      slots.add(slot);
      const masters = (await client.cluster("SLOTS")) as unknown as Array<
        [number, number, [string, number]]
      >;
      const owner = masters.find(([lo, hi]) => slot >= lo && slot <= hi);
      owners.add(String(owner?.[2][1]));
    }
    expect(slots.size).toBe(names.length);
    expect(owners.size).toBeGreaterThan(1);

    const events: AdapterEvent[] = [];
    const unsubscribe = await adapter.subscribe((e) => events.push(e));
    for (const name of names) {
      const q = await adapter.lane(name, opts);
      const [a, b, c] = [job(), job({ priority: 5 }), job()];
      expect((await q.put([a, b, c])).map((r) => r.status)).toEqual([
        "created",
        "created",
        "created",
      ]);
      const got = (await q.reserve({ limit: 3, leaseMs: 10_000, waitMs: 0 })).jobs;
      expect(got.map((j) => j.id)).toEqual([b.id, a.id, c.id]);
      expect(await q.ack([got[0]!.lock])).toEqual(["ok"]);
      const error = { name: "Error", message: "boom", reason: "error" as const };
      expect(await q.nack([{ lock: got[1]!.lock, dead: true, error }])).toEqual(["ok"]);
      expect(await q.retryFailed([a.id])).toBe(1);
      const again = (await q.reserve({ limit: 1, leaseMs: 10_000, waitMs: 1_000 })).jobs;
      expect(again[0]?.id).toBe(a.id);
      expect(await q.cancel([c.id])).toEqual(["canceled"]);
      expect(await q.ack([got[2]!.lock])).toEqual(["canceled"]);
      expect(await q.counts()).toMatchObject({ active: 1, succeeded: 1, canceled: 1 });
    }
    await waitFor(() => events.length === names.length, "a canceled event per lane");
    expect(new Set(events.map((e) => e.lane))).toEqual(new Set(names));
    await unsubscribe();
  });

  it("loads its function library again on every master after FUNCTION FLUSH", async () => {
    const masters = client.nodes("master");
    expect(masters.length).toBe(3);
    const lanes = await Promise.all(
      ["flush-a", "flush-b", "flush-c", "flush-d"].map((name) => adapter.lane(name, opts)),
    );
    await Promise.all(masters.map((node) => node.call("FUNCTION", "FLUSH")));
    for (const q of lanes) {
      const put = job();
      await q.put([put]);
      const got = (await q.reserve({ limit: 1, leaseMs: 10_000, waitMs: 0 })).jobs;
      expect(got[0]?.id).toBe(put.id);
      expect(await q.ack([got[0]!.lock])).toEqual(["ok"]);
    }
    // the first call that met a missing function loaded the library on every master
    for (const node of masters) {
      expect(((await node.call("FUNCTION", "LIST")) as unknown[]).length).toBe(1);
    }
  });

  it("deletes other tasklane builds' function libraries on every master", async () => {
    const masters = client.nodes("master");
    const stale = "tasklane_0_0_1_0123456789ab";
    await adapter.lane("stale-libraries", opts); // this build's library is loaded
    await Promise.all(masters.map((node) => loadStubLibrary(node, stale)));
    expect(await deleteStaleLibraries(client)).toEqual([stale]);
    for (const node of masters) expect(await libraryNames(node)).toEqual([LIBRARY.name]);
  });

  it("wakes a blocked worker on its lane's node", async () => {
    const q = await adapter.lane("wake-me", opts);
    // Blocked polls on every master: the lane's node is one of them.
    const blocked = async () =>
      (await Promise.all(client.nodes("master").map((node) => blockedPolls(node)))).reduce(
        (a, b) => a + b,
        0,
      );
    const before = await blocked();
    const poll = q.reserve({ limit: 1, leaseMs: 10_000, waitMs: 20_000 });
    await waitFor(async () => (await blocked()) > before, "the poll to block");
    const put = job();
    await q.put([put]);
    expect((await poll).jobs[0]?.id).toBe(put.id);
    const controller = new AbortController();
    const aborted = q.reserve({
      limit: 1,
      leaseMs: 1_000,
      waitMs: 20_000,
      signal: controller.signal,
    });
    setTimeout(() => controller.abort(), 30);
    expect((await aborted).jobs).toEqual([]);
  });
});
