/**
 * Redis Cluster: three masters of our own, joined with redis-cli --cluster create. Lanes
 * whose hash tags land on different slots (and nodes) all work through one ioredis Cluster.
 * Failover itself (replicas, kills, migrations under load) is cluster-failover.test.ts.
 */
import type { AdapterEvent, Lock } from "@tasklane/core/adapter";
import { Cluster, Redis, ReplyError } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  createRedisAdapter,
  deleteStaleLibraries,
  LIBRARY,
  type RedisAdapter,
  RedisUnavailableError,
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

  it("serves the operator features on lanes spread over the nodes", async () => {
    const names = Array.from({ length: 3 }, (_, i) => `ops-${i}`);
    for (const name of names) {
      const q = await adapter.lane(name, opts);
      const [done, expiring, later] = [
        job(),
        job({ expiresAt: Date.now() + 100 }),
        job({ runAt: Date.now() + 3_600_000 }),
      ];
      await q.put([done, expiring, later]);
      const finished: string[] = [];
      const stop = await adapter.watch([{ lane: name, jobId: done.id }], (e) =>
        finished.push(`${e.jobId} ${e.state}`),
      );
      try {
        const [held] = (await q.reserve({ limit: 1, leaseMs: 30_000, waitMs: 0 })).jobs;
        expect(held?.id).toBe(done.id);
        expect(await q.ack([{ ...(held?.lock as Lock), result: `"${name}"` }])).toEqual(["ok"]);
        await waitFor(() => finished.length > 0, "the watched finish");
        expect(finished).toEqual([`${done.id} succeeded`]);
      } finally {
        await stop();
      }
      expect((await q.get(done.id))?.result).toBe(`"${name}"`);
      await waitFor(async () => (await q.get(expiring.id))?.state === "expired", "the expiry");
      expect(await q.setPriority([later.id], 7)).toEqual(["ok"]);
      expect(await q.promote([later.id])).toEqual(["ok"]);
      const [promoted] = (await q.reserve({ limit: 1, leaseMs: 30_000, waitMs: 0 })).jobs;
      expect([promoted?.id, promoted?.priority]).toEqual([later.id, 7]);
      // tags, search and failure groups: the indexes are keys of the lane's slot too
      const tagged = job({ tags: ["tenant:7", name] });
      await q.put([tagged]);
      expect((await q.listPage({ tag: name })).jobs.map((j) => j.id)).toEqual([tagged.id]);
      expect(await q.count({ tag: "tenant:7", state: "waiting" })).toBe(1);
      await q.nack([
        {
          lock: promoted!.lock,
          dead: true,
          error: { name: "Boom", message: "m", reason: "error" },
        },
      ]);
      expect((await q.failures()).map((g) => [g.lane, g.group, g.count, g.sample.jobId])).toEqual([
        [name, "Boom", 1, later.id],
      ]);
      expect(
        (await q.listPage({ state: "failed", errorName: "Boom" })).jobs.map((j) => j.id),
      ).toEqual([later.id]);
    }
    // A tagged job moved: found by its tag in the target, no more in the source.
    const fromTagged = await adapter.lane("ops-1", opts);
    const [taggedJob] = (await fromTagged.listPage({ tag: "ops-1" })).jobs;
    expect(await fromTagged.move([taggedJob!.id], await adapter.lane("ops-2", opts))).toEqual([
      "moved",
    ]);
    expect(await fromTagged.count({ tag: "ops-1" })).toBe(0);
    const inTarget = (await (await adapter.lane("ops-2", opts)).listPage({ tag: "ops-1" })).jobs;
    expect(inTarget.map((j) => [j.id, j.tags])).toEqual([[taggedJob!.id, ["tenant:7", "ops-1"]]]);
    // A move between lanes of different slots (and nodes): the contract's three steps.
    const from = await adapter.lane("ops-0", opts);
    const to = await adapter.lane("ops-2", opts);
    const moving = job();
    await from.put([moving]);
    expect(await from.move([moving.id, "nobody"], to)).toEqual(["moved", "not_found"]);
    expect(await from.get(moving.id)).toBeUndefined();
    expect(await to.get(moving.id)).toMatchObject({ state: "waiting", payload: moving.payload });
    const registration = {
      id: "w-cluster",
      host: "h",
      pid: 1,
      lanes: names,
      concurrency: 1,
      held: 0,
      running: 0,
      jobs: [],
      startedAt: 1,
      version: "0.0.0",
    };
    await adapter.registerWorker(registration, 30_000);
    expect(await adapter.workers()).toMatchObject([registration]);
    await adapter.deregisterWorker(registration.id);
    expect(await adapter.workers()).toEqual([]);
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

  it("debounces by key and rate-limits reserve on lanes spread over the nodes", async () => {
    for (const name of ["deb-0", "deb-1", "deb-2"]) {
      const q = await adapter.lane(name, { ...opts, rateLimit: { max: 1, durationMs: 60_000 } });
      const until = Date.now() + 60_000;
      const [a, b] = [
        job({ payload: '"a"', debounce: { key: "k", until, keep: "last" } }),
        job({ payload: '"b"', debounce: { key: "k", until, keep: "last" } }),
      ];
      expect(await q.put([a])).toEqual([{ id: a.id, status: "created" }]);
      expect(await q.put([b])).toEqual([{ id: a.id, status: "debounced" }]);
      expect((await q.get(a.id))?.payload).toBe('"b"');
      await q.put([job(), job()]);
      // one start per minute: the first reserve takes one, the next none
      expect((await q.reserve({ limit: 5, leaseMs: 120_000, waitMs: 0 })).jobs).toHaveLength(1);
      const full = await q.reserve({ limit: 5, leaseMs: 120_000, waitMs: 0 });
      expect(full.jobs).toEqual([]);
      expect(full.nextDueAt).toBeGreaterThan(Date.now() + 30_000);
    }
  });

  it("serves fair groups on lanes spread over the nodes, their keys in the lane's slot", async () => {
    for (const name of ["fair-0", "fair-1", "fair-2"]) {
      const q = await adapter.lane(name, { ...opts, groups: { concurrency: 1 } });
      const a = [job({ group: "a" }), job({ group: "a" })];
      const b = job({ group: "b" });
      const u = job();
      await q.put(a);
      await q.put([b, u]);
      // one of each group per turn; a's second waits for its first (concurrency 1)
      const first = await q.reserve({ limit: 10, leaseMs: 30_000, waitMs: 0 });
      expect(first.jobs.map((j) => j.id)).toEqual([a[0]?.id, b.id, u.id]);
      expect(first.ready).toBe(0);
      expect((await q.get(b.id))?.group).toBe("b");
      expect(await q.ack([first.jobs[0]?.lock as Lock])).toEqual(["ok"]);
      const next = await q.reserve({ limit: 10, leaseMs: 30_000, waitMs: 0 });
      expect(next.jobs.map((j) => j.id)).toEqual([a[1]?.id]);
      // the groups' keys (built in the scripts from the lane's prefix) share its slot
      const tag = laneKeys("cl", name).meta.slice(0, -1);
      const slot = Number(await client.cluster("KEYSLOT", `${tag}m`));
      for (const key of [`${tag}gj`, `${tag}gr`, `${tag}gq:a`]) {
        expect(Number(await client.cluster("KEYSLOT", key))).toBe(slot);
      }
      expect(await client.exists(`${tag}gj`)).toBe(1);
    }
  });

  it("runs a flow whose parent and children are on lanes of different slots and nodes", async () => {
    const names = ["flow-parent", "flow-a", "flow-b"];
    const slotOf = async (name: string) =>
      Number(await client.cluster("KEYSLOT", laneKeys("cl", name).meta));
    const slots = await Promise.all(names.map(slotOf));
    expect(new Set(slots).size).toBe(3);
    const masters = (await client.cluster("SLOTS")) as unknown as Array<
      [number, number, [string, number]]
    >;
    const ownerOf = (slot: number) => masters.find(([lo, hi]) => slot >= lo && slot <= hi)?.[2][1];
    expect(new Set(slots.map(ownerOf)).size).toBeGreaterThan(1);
    const [parentLane, a, b] = await Promise.all(names.map((n) => adapter.lane(n, opts)));
    if (!parentLane || !a || !b) throw new Error("lanes");
    // one child stored (and ended) before the flow, two in it, on other slots
    const earlier = job({ task: "earlier" });
    await b.put([earlier]);
    const [heldEarlier] = (await b.reserve({ limit: 1, leaseMs: 10_000, waitMs: 0 })).jobs;
    expect(await b.ack([{ ...heldEarlier!.lock, result: '"before"' }])).toEqual(["ok"]);
    const childA = job({ task: "child-a" });
    const childB = job({ task: "child-b" });
    const dep = (lane: { name: string }, id: string) => ({
      lane: lane.name,
      id,
      onFailure: "fail" as const,
    });
    const parent = job({
      task: "parent",
      dependsOn: [dep(a, childA.id), dep(b, childB.id), dep(b, earlier.id)],
    });
    expect(
      await adapter.putFlow([
        { lane: a, job: childA },
        { lane: b, job: childB },
        { lane: parentLane, job: parent },
      ]),
    ).toEqual({ status: "created" });
    expect(await parentLane.counts()).toMatchObject({ blocked: 1, waiting: 0 });
    expect((await parentLane.get(parent.id))?.dependencies?.[2]).toMatchObject({
      state: "succeeded",
      result: '"before"',
    });
    for (const lane of [a, b]) {
      const [held] = (await lane.reserve({ limit: 1, leaseMs: 10_000, waitMs: 0 })).jobs;
      expect(await lane.ack([{ ...held!.lock, result: `"${lane.name}"` }])).toEqual(["ok"]);
    }
    const info = await parentLane.get(parent.id);
    expect(info?.state).toBe("waiting");
    expect(info?.dependencies?.map((d) => [d.task, d.state, d.result])).toEqual([
      ["child-a", "succeeded", '"flow-a"'],
      ["child-b", "succeeded", '"flow-b"'],
      ["earlier", "succeeded", '"before"'],
    ]);
    expect((await a.get(childA.id))?.dependents).toEqual([
      { lane: "flow-parent", jobId: parent.id },
    ]);
    const [ran] = (await parentLane.reserve({ limit: 1, leaseMs: 10_000, waitMs: 0 })).jobs;
    expect(ran?.id).toBe(parent.id);
    // "fail" across slots: a canceled child fails its parent on another node
    const doomedChild = job();
    const doomed = job({ dependsOn: [dep(a, doomedChild.id)] });
    await adapter.putFlow([
      { lane: a, job: doomedChild },
      { lane: parentLane, job: doomed },
    ]);
    expect(await a.cancel([doomedChild.id])).toEqual(["canceled"]);
    expect((await parentLane.get(doomed.id))?.error?.reason).toBe("dependency_failed");
  });
});

describe("redis cluster: a slot without a stable, reachable owner", () => {
  /** A lane of its own, its slot, the master serving it and another master. */
  async function laneOnSlot(name: string) {
    const q = await adapter.lane(name, opts);
    const slot = Number(await client.cluster("KEYSLOT", laneKeys("cl", name).meta));
    const ids = new Map<number, string>();
    for (const line of String(await client.cluster("NODES"))
      .trim()
      .split("\n")) {
      const [id, address] = line.split(" ");
      ids.set(Number(/:(\d+)@/.exec(address ?? "")?.[1]), id ?? "");
    }
    const slots = (await client.cluster("SLOTS")) as unknown as Array<
      [number, number, [string, number]]
    >;
    const ownerPort = slots.find(([lo, hi]) => slot >= lo && slot <= hi)?.[2][1] as number;
    const otherPort = nodes.ports.find((p) => p !== ownerPort) as number;
    const node = (port: number) => {
      const c = new Redis({ port, host: "127.0.0.1" });
      cleanup.push(() => c.disconnect());
      return c;
    };
    return {
      q,
      slot,
      owner: node(ownerPort),
      other: node(otherPort),
      ownerId: ids.get(ownerPort) as string,
      otherId: ids.get(otherPort) as string,
    };
  }
  const cleanup: Array<() => void> = [];
  afterAll(() => {
    for (const f of cleanup) f();
  });

  /** `call` fails with RedisUnavailableError carrying ioredis's error; returns it. */
  async function unavailable(call: Promise<unknown>): Promise<RedisUnavailableError> {
    const error = await call.then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(RedisUnavailableError);
    const mapped = error as RedisUnavailableError;
    expect(mapped.code).toBe("ADAPTER");
    expect(mapped.reason).toBe("unavailable");
    expect(mapped.cause).toBeInstanceOf(Error);
    // The reply (or the wrapper that carries it) is in the message, whole.
    expect(mapped.message).toContain((mapped.cause as Error).message);
    return mapped;
  }

  it("maps a slot being migrated (TRYAGAIN, ASK) to RedisUnavailableError", async () => {
    const { q, slot, owner, other, ownerId, otherId } = await laneOnSlot("migrating");
    await q.put([job()]); // some of the lane's keys exist, others (the delayed set) do not
    await other.call("CLUSTER", "SETSLOT", slot, "IMPORTING", ownerId);
    await owner.call("CLUSTER", "SETSLOT", slot, "MIGRATING", otherId);
    try {
      // A script's keys split between the nodes: the importing node answers TRYAGAIN,
      // which ioredis retries (each retry going where the map or an ASK sends it) until
      // its redirections run out.
      const error = await unavailable(q.put([job()]));
      expect(error.message).toMatch(
        /Too many Cluster redirections\. Last error: ReplyError: (TRYAGAIN|ASK|MOVED) /,
      );
      await unavailable(q.reserve({ limit: 1, leaseMs: 10_000, waitMs: 0 }));
    } finally {
      await other.call("CLUSTER", "SETSLOT", slot, "STABLE");
      await owner.call("CLUSTER", "SETSLOT", slot, "STABLE");
    }
    expect((await q.reserve({ limit: 5, leaseMs: 10_000, waitMs: 0 })).jobs).toHaveLength(1);
  });

  it("maps a MOVED loop (two nodes each naming the other) to RedisUnavailableError", async () => {
    const { q, slot, owner, ownerId, otherId } = await laneOnSlot("moved-loop");
    // The owner hands the (empty) slot to another master, which never took it: each
    // redirects to the other.
    await owner.call("CLUSTER", "SETSLOT", slot, "NODE", otherId);
    try {
      const error = await unavailable(q.probe());
      expect(error.message).toMatch(
        /Too many Cluster redirections\. Last error: ReplyError: MOVED /,
      );
    } finally {
      await owner.call("CLUSTER", "SETSLOT", slot, "NODE", ownerId);
    }
    expect(await q.probe()).toBe(0);
  });

  it("maps CLUSTERDOWN, wrapped by the redirections or passed through, to RedisUnavailableError", async () => {
    const { q, slot, owner } = await laneOnSlot("cluster-down");
    // Without retries on CLUSTERDOWN, ioredis hands the node's reply over as it came.
    const direct = createRedisAdapter({
      cluster: { nodes: nodes.ports, options: { retryDelayOnClusterDown: 0 } },
      prefix: "cl",
    });
    const directLane = await direct.lane("cluster-down", opts);
    // The owner forgets one of its slots: with full coverage required it serves none.
    await owner.call("CLUSTER", "DELSLOTS", slot);
    try {
      await waitFor(
        async () => String(await owner.call("CLUSTER", "INFO")).includes("cluster_state:fail"),
        "the owner's cluster_state:fail",
      );
      const wrapped = await unavailable(q.probe());
      expect(wrapped.message).toMatch(/Too many Cluster redirections\. Last error: /);
      const bare = await unavailable(directLane.probe());
      expect(bare.cause).toBeInstanceOf(ReplyError);
      expect(bare.message).toMatch(/Redis is unavailable \(CLUSTERDOWN /);
    } finally {
      await owner.call("CLUSTER", "ADDSLOTS", slot);
      await direct.close();
    }
    await waitFor(
      async () => String(await owner.call("CLUSTER", "INFO")).includes("cluster_state:ok"),
      "the owner's cluster_state:ok",
    );
    expect(await q.probe()).toBe(0);
  });
});
