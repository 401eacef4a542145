/**
 * Redis Cluster failover, for real: three masters with a replica each (AOF, fsync every
 * second, cluster-node-timeout 2 s), started by the test (cluster-harness.ts). Fencing
 * across a failover that lost the old master's last writes; then workers through a manual
 * failover, a master killed with SIGKILL and started again, and a slot migration while
 * jobs flow.
 */
import type { Lock } from "@tasklane/core/adapter";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createRedisAdapter, type RedisAdapter, RedisUnavailableError } from "../src/index.ts";
import { laneKeys } from "../src/internal.ts";
import { type ReplicatedCluster, startReplicatedCluster } from "./cluster-harness.ts";
import { LANE_OPTIONS, newJob, waitFor } from "./helpers.ts";

let cluster: ReplicatedCluster;
const adapters: RedisAdapter[] = [];

beforeAll(async () => {
  cluster = await startReplicatedCluster({ masters: 3, replicas: 1, nodeTimeoutMs: 2_000 });
}, 60_000);

afterAll(async () => {
  await Promise.all(adapters.map((a) => a.close()));
  await cluster?.stop();
});

const PREFIX = "fo";

function adapter(): RedisAdapter {
  const a = createRedisAdapter({ cluster: { nodes: [...cluster.startup] }, prefix: PREFIX });
  adapters.push(a);
  return a;
}

async function slotOf(lane: string): Promise<number> {
  const any = cluster.node(cluster.ports[0] as number);
  return Number(await any.call("CLUSTER", "KEYSLOT", laneKeys(PREFIX, lane).meta));
}

/**
 * A call made while the cluster settles after a failover, repeated while it fails with
 * RedisUnavailableError (the client has not learned the new master yet): what a worker's
 * retries do.
 */
async function settled<T>(call: () => Promise<T>, what: string): Promise<T> {
  let result: { value: T } | undefined;
  await waitFor(
    async () => {
      try {
        result = { value: await call() };
        return true;
      } catch (error) {
        if (error instanceof RedisUnavailableError) return false;
        throw error;
      }
    },
    what,
    20_000,
  );
  return (result as { value: T }).value;
}

describe("fencing across a Cluster failover", () => {
  it("refuses the stale holder's extend and ack after a failover lost its reservation", async () => {
    const lane = "fenced";
    const slot = await slotOf(lane);
    const master = await cluster.masterOf(slot);
    const [replica] = await cluster.replicasOf(master);
    expect(replica).toBeDefined();
    const first = await adapter().lane(lane, LANE_OPTIONS);
    const second = await adapter().lane(lane, LANE_OPTIONS);

    const job = newJob();
    expect(await first.put([job])).toEqual([{ id: job.id, status: "created" }]);
    await cluster.waitReplicated(master);
    // The replica stops receiving writes: what asynchronous replication lags behind by.
    await cluster.cutReplication(master);
    const [held] = (await first.reserve({ limit: 1, leaseMs: 60_000, waitMs: 0 })).jobs;
    expect(held?.id).toBe(job.id);
    const stale = held?.lock as Lock;
    const lag = await cluster.offsets(master, replica as number);
    expect(lag.replica).toBeLessThan(lag.master); // the reservation never reached it

    await cluster.kill(master);
    await cluster.waitPromoted(replica as number, slot);

    // The promoted replica never saw the reservation: the job is waiting there, and it
    // hands it out again, attempt 1 again, under a token the first holder never had.
    const again = await settled(
      () => second.reserve({ limit: 1, leaseMs: 60_000, waitMs: 0 }),
      "a reserve on the promoted replica",
    );
    expect(again.jobs.map((j) => [j.id, j.attempt])).toEqual([[job.id, 1]]);
    const current = (again.jobs[0] as { lock: Lock }).lock;
    expect(current.token).not.toBe(stale.token);
    expect(Number(current.token)).toBeGreaterThan(Number(stale.token));

    // The stale holder can neither keep nor finish the job; the current one can.
    expect(await settled(() => first.extend([stale], 60_000), "the stale extend")).toEqual([
      "lost",
    ]);
    expect(await settled(() => first.ack([stale]), "the stale ack")).toEqual(["lost"]);
    expect(await second.ack([current])).toEqual(["ok"]);
    expect(await second.get(job.id)).toMatchObject({ state: "succeeded", attempt: 1 });

    // The old master comes back as a replica of the new one.
    await cluster.restart(master);
    await cluster.waitHealthy();
    expect(await cluster.replicasOf(replica as number)).toEqual([master]);
  }, 60_000);
});
