/**
 * Flows across a crash (docs/adapter-contract.md, "Flows", atomicity): a putFlow
 * interrupted part-way is completed by the same call repeated (step 1); a process acks a
 * flow's child and is killed before it delivers the child's end to the parent (step 2).
 * The end waits in the child lane's outbox; another process's reserve drains it, and the
 * parent runs exactly once, also when the same notification is delivered again (a crash
 * between a delivery and the outbox's cleanup). The same on a three-node Cluster, the
 * child's lane and the parent's on slots of two different masters.
 */
import { spawn } from "node:child_process";
import { once } from "node:events";
import { fileURLToPath } from "node:url";
import type { LaneStore } from "@tasklane/core/adapter";
import { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { encodeId } from "../src/id-codec.ts";
import { createRedisAdapter, type RedisAdapter } from "../src/index.ts";
import { laneKeys } from "../src/internal.ts";
import {
  newJob as job,
  LANE_OPTIONS,
  type RedisClusterNodes,
  type RedisServer,
  startCluster,
  startRedis,
  uniquePrefix,
  waitFor,
} from "./helpers.ts";

const CHILD = fileURLToPath(new URL("./flow-crash-child.ts", import.meta.url));

let server: RedisServer;
let admin: Redis;

beforeAll(async () => {
  server = await startRedis();
  admin = new Redis(server.port, server.host);
  // Everything but HSCAN: its acks work, its deliveries (which begin with one) fail.
  await admin.acl("SETUSER", "nodeliver", "on", ">secret", "~*", "&*", "+@all", "-hscan");
});

afterAll(async () => {
  admin?.disconnect();
  await server?.stop();
});

/** Run the child process until it has acked, then kill it (SIGKILL: no cleanup runs). */
async function ackThenDie(args: object): Promise<string> {
  const child = spawn(process.execPath, ["--conditions=source", CHILD, JSON.stringify(args)], {
    stdio: ["ignore", "pipe", "inherit"],
  });
  let out = "";
  child.stdout.on("data", (d) => {
    out += d;
  });
  const exited = once(child, "exit");
  await waitFor(async () => out.includes("\n"), "the child's ack", 20_000);
  child.kill("SIGKILL");
  await exited;
  return out.trim();
}

/**
 * A child in `kids` and a parent in `parents` waiting for it (its failure fails the
 * parent), put as one flow.
 */
async function putChildAndParent(adapter: RedisAdapter, kids: LaneStore, parents: LaneStore) {
  const child = job({ task: "child" });
  const parent = job({
    task: "parent",
    dependsOn: [{ lane: kids.name, id: child.id, onFailure: "fail" }],
  });
  expect(
    await adapter.putFlow([
      { lane: kids, job: child },
      { lane: parents, job: parent },
    ]),
  ).toEqual({ status: "created" });
  return { child, parent };
}

describe("flows across a crash", () => {
  it("a putFlow interrupted after its parent was stored: the same call again completes it", async () => {
    const adapter = createRedisAdapter({ connection: server.url, prefix: uniquePrefix() });
    try {
      const kids = await adapter.lane("kids", LANE_OPTIONS);
      const parents = await adapter.lane("parents", LANE_OPTIONS);
      const childA = job({ task: "a" });
      const childB = job({ task: "b" });
      const parent = job({
        task: "parent",
        dependsOn: [
          { lane: "kids", id: childA.id, onFailure: "fail" },
          { lane: "kids", id: childB.id, onFailure: "fail" },
        ],
      });
      const items = [
        { lane: kids, job: childA },
        { lane: kids, job: childB },
        { lane: parents, job: parent },
      ];
      // What the first call's step 2 wrote before its process died: the parent (stored
      // first), blocked, and none of its children.
      const entries = [
        { l: "kids", i: childA.id, o: "fail" as const, t: "a" },
        { l: "kids", i: childB.id, o: "fail" as const, t: "b" },
      ];
      expect(await parents.putFlowJobs([parent], [{ index: 0, entries }], [])).toEqual([true]);
      expect((await parents.get(parent.id))?.state).toBe("blocked");
      // the same flow again: the parent is this flow's, so it goes on and puts the rest
      expect(await adapter.putFlow(items)).toEqual({ status: "created" });
      expect(await kids.counts()).toMatchObject({ waiting: 2 });
      expect(await parents.counts()).toMatchObject({ blocked: 1, waiting: 0 });
      // and once more, complete: nothing changes
      expect(await adapter.putFlow(items)).toEqual({ status: "created" });
      expect(await kids.counts()).toMatchObject({ waiting: 2 });
      expect((await kids.get(childA.id))?.dependents).toEqual([
        { lane: "parents", jobId: parent.id },
      ]);
      const held = (await kids.reserve({ limit: 10, leaseMs: 10_000, waitMs: 0 })).jobs;
      expect(await kids.ack(held.map((j) => j.lock))).toEqual(["ok", "ok"]);
      expect((await parents.get(parent.id))?.state).toBe("waiting");
      // a job of the same id that is not this flow's is a duplicate, as ever
      const other = job({ id: childA.id });
      expect(
        await adapter.putFlow([
          { lane: kids, job: other },
          {
            lane: parents,
            job: job({ dependsOn: [{ lane: "kids", id: other.id, onFailure: "fail" }] }),
          },
        ]),
      ).toEqual({ status: "duplicate", lane: "kids", id: childA.id });
    } finally {
      await adapter.close();
    }
  });

  it("a child whose worker died (its lease ran out, past maxStalls) fails its parent, delivered by a reserve of its lane", async () => {
    const adapter = createRedisAdapter({ connection: server.url, prefix: uniquePrefix() });
    try {
      const kids = await adapter.lane("kids", { maxStalls: 0, historyLimit: 10 });
      const parents = await adapter.lane("parents", LANE_OPTIONS);
      const { child, parent } = await putChildAndParent(adapter, kids, parents);
      // taken, and never settled: its holder is gone
      expect((await kids.reserve({ limit: 1, leaseMs: 20, waitMs: 0 })).jobs).toHaveLength(1);
      // Workers of the lane reserve on: the script that finds the lease run out fails the
      // child and queues its end, and a reserve drains the outbox (at most a second later).
      await waitFor(async () => {
        await kids.reserve({ limit: 1, leaseMs: 1_000, waitMs: 0 });
        return (await parents.get(parent.id))?.state === "failed";
      }, "the parent failed by its stalled child");
      expect((await kids.get(child.id))?.error?.reason).toBe("stalled");
      const info = await parents.get(parent.id);
      expect(info?.error?.reason).toBe("dependency_failed");
      expect(info?.dependencies?.[0]?.state).toBe("failed");
    } finally {
      await adapter.close();
    }
  }, 20_000);

  for (const scripting of ["functions", "eval"] as const) {
    it(`a child acked by a process killed before delivery: the parent runs once (${scripting})`, async () => {
      const prefix = uniquePrefix();
      const adapter = createRedisAdapter({ connection: server.url, prefix, scripting });
      try {
        const kids = await adapter.lane("kids", LANE_OPTIONS);
        const parents = await adapter.lane("parents", LANE_OPTIONS);
        const { child, parent } = await putChildAndParent(adapter, kids, parents);

        const acked = await ackThenDie({
          host: server.host,
          port: server.port,
          username: "nodeliver",
          prefix,
          scripting,
          lane: "kids",
          childId: child.id,
        });
        expect(acked).toBe('["ok"]');
        // the child succeeded, its end is in the outbox, the parent still waits
        expect((await kids.get(child.id))?.state).toBe("succeeded");
        const outbox = laneKeys(prefix, "kids").outbox;
        expect(await admin.hlen(outbox)).toBe(1);
        expect((await parents.get(parent.id))?.state).toBe("blocked");

        // Another process: its reserve on the child's lane drains the outbox.
        const other = createRedisAdapter({ connection: server.url, prefix, scripting });
        try {
          const otherKids = await other.lane("kids", LANE_OPTIONS);
          const otherParents = await other.lane("parents", LANE_OPTIONS);
          expect((await otherKids.reserve({ limit: 1, leaseMs: 1_000, waitMs: 0 })).jobs).toEqual(
            [],
          );
          await waitFor(
            async () => (await otherParents.get(parent.id))?.state === "waiting",
            "the parent unblocked by the other process",
          );
          expect(await admin.hlen(outbox)).toBe(0);
          const info = await otherParents.get(parent.id);
          expect(info?.dependencies).toEqual([
            {
              lane: "kids",
              id: child.id,
              task: "child",
              onFailure: "fail",
              state: "succeeded",
              result: '"from the child"',
            },
          ]);
          expect(info?.history.filter((e) => e.event === "unblocked")).toHaveLength(1);
          const first = await otherParents.reserve({ limit: 10, leaseMs: 10_000, waitMs: 0 });
          expect(first.jobs.map((j) => j.id)).toEqual([parent.id]);
          expect(await otherParents.ack([first.jobs[0]!.lock])).toEqual(["ok"]);

          // The same notification delivered again (a crash between a delivery and the
          // outbox's cleanup): it counts nothing twice, the parent is not run again.
          const field = `parents\n${encodeId(parent.id)}\n0`;
          await admin.hset(outbox, field, JSON.stringify({ s: "succeeded", r: '"again"' }));
          await otherKids.deliverQueued(["flows"]);
          expect(await admin.hlen(outbox)).toBe(0);
          const after = await otherParents.get(parent.id);
          expect(after?.state).toBe("succeeded");
          expect(after?.dependencies?.[0]?.result).toBe('"from the child"');
          expect(after?.history.filter((e) => e.event === "unblocked")).toHaveLength(1);
          expect(
            (await otherParents.reserve({ limit: 10, leaseMs: 10_000, waitMs: 0 })).jobs,
          ).toEqual([]);
          expect(await otherParents.counts()).toMatchObject({
            succeeded: 1,
            waiting: 0,
            blocked: 0,
          });
        } finally {
          await other.close();
        }
      } finally {
        await adapter.close();
      }
    }, 30_000);
  }
});

describe("flows across a crash on a Cluster", () => {
  let nodes: RedisClusterNodes;
  beforeAll(async () => {
    nodes = await startCluster();
    // The user that may not HSCAN, on every node (ACLs are per node).
    for (const port of nodes.ports) {
      const node = new Redis(port, "127.0.0.1");
      await node.acl("SETUSER", "nodeliver", "on", ">secret", "~*", "&*", "+@all", "-hscan");
      node.disconnect();
    }
  }, 60_000);
  afterAll(async () => {
    await nodes?.stop();
  });

  it("a child acked on one node by a process killed before delivery: the parent, on another node, runs once", async () => {
    const cluster = nodes.ports.map((port) => ({ host: "127.0.0.1", port }));
    const prefix = uniquePrefix();
    const adapter = createRedisAdapter({ cluster: { nodes: cluster }, prefix });
    const other = createRedisAdapter({ cluster: { nodes: cluster }, prefix });
    const admin = new Redis.Cluster(cluster);
    try {
      // Lanes whose slots two different masters serve.
      const slotOf = async (lane: string) =>
        Number(await admin.cluster("KEYSLOT", laneKeys(prefix, lane).meta));
      const ranges = (await admin.cluster("SLOTS")) as unknown as Array<
        [number, number, [string, number]]
      >;
      const ownerOf = (slot: number) => ranges.find(([lo, hi]) => slot >= lo && slot <= hi)?.[2][1];
      let kidsName = "kids-0";
      for (let i = 1; ownerOf(await slotOf(kidsName)) === ownerOf(await slotOf("parents")); i++) {
        kidsName = `kids-${i}`;
      }
      const kids = await adapter.lane(kidsName, LANE_OPTIONS);
      const parents = await adapter.lane("parents", LANE_OPTIONS);
      const { child, parent } = await putChildAndParent(adapter, kids, parents);

      const acked = await ackThenDie({
        host: "127.0.0.1",
        port: 0,
        cluster,
        username: "nodeliver",
        prefix,
        scripting: "functions",
        lane: kidsName,
        childId: child.id,
      });
      expect(acked).toBe('["ok"]');
      const outbox = laneKeys(prefix, kidsName).outbox;
      expect(await admin.hlen(outbox)).toBe(1);
      expect((await parents.get(parent.id))?.state).toBe("blocked");

      // Another process's reserve on the child's lane delivers the end across the slots.
      const otherKids = await other.lane(kidsName, LANE_OPTIONS);
      const otherParents = await other.lane("parents", LANE_OPTIONS);
      expect((await otherKids.reserve({ limit: 1, leaseMs: 1_000, waitMs: 0 })).jobs).toEqual([]);
      await waitFor(
        async () => (await otherParents.get(parent.id))?.state === "waiting",
        "the parent unblocked by the other process",
      );
      expect(await admin.hlen(outbox)).toBe(0);
      const first = await otherParents.reserve({ limit: 10, leaseMs: 10_000, waitMs: 0 });
      expect(first.jobs.map((j) => j.id)).toEqual([parent.id]);
      expect(await otherParents.ack([first.jobs[0]!.lock])).toEqual(["ok"]);
      expect((await otherParents.get(parent.id))?.dependencies?.[0]).toMatchObject({
        state: "succeeded",
        result: '"from the child"',
      });
      expect((await otherParents.reserve({ limit: 10, leaseMs: 10_000, waitMs: 0 })).jobs).toEqual(
        [],
      );
      expect(await otherParents.counts()).toMatchObject({ succeeded: 1, blocked: 0, waiting: 0 });
    } finally {
      admin.disconnect();
      await other.close();
      await adapter.close();
    }
  }, 60_000);
});
