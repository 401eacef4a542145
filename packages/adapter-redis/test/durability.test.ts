/**
 * Durable puts (option `durability`) on a master with one replica of our own: a put
 * returns once the replica has its jobs (WAIT), or throws RedisReplicationError, with the
 * put carried out, when the replica does not answer. WAITAOF where the server has it
 * (Valkey; Debian's Redis 7.0 has not, and the adapter refuses to start for it there).
 * The same on a Cluster is in cluster-failover.test.ts.
 */
import { ConfigError } from "@tasklane/core/adapter";
import { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  createRedisAdapter,
  type DurabilityOptions,
  type RedisAdapter,
  RedisReplicationError,
} from "../src/index.ts";
import { encodeId, laneKeys } from "../src/internal.ts";
import { LANE_OPTIONS, newJob, type RedisServer, startRedis, waitFor } from "./helpers.ts";

let master: RedisServer;
let replica: RedisServer;
let replicaClient: Redis;
const adapters: RedisAdapter[] = [];

beforeAll(async () => {
  // fsync on every write: WAITAOF answers as soon as both have written (with everysec it
  // would wait for the next second's fsync)
  const aof = ["--appendonly", "yes", "--appendfsync", "always"];
  master = await startRedis(aof);
  replica = await startRedis([...aof, "--replicaof", "127.0.0.1", String(master.port)]);
  replicaClient = new Redis(replica.port, "127.0.0.1");
  await waitFor(
    async () => String(await replicaClient.info("replication")).includes("master_link_status:up"),
    "the replica's link up",
  );
}, 30_000);

afterAll(async () => {
  await Promise.all(adapters.map((a) => a.close()));
  replicaClient?.disconnect();
  await replica?.stop();
  await master?.stop();
});

function adapter(durability: DurabilityOptions) {
  const a = createRedisAdapter({ connection: master.url, prefix: "dur", durability });
  adapters.push(a);
  return a;
}

/** Whether the replica holds the job's record (its own data, read on the replica). */
async function onReplica(lane: string, id: string): Promise<boolean> {
  const records = laneKeys("dur", lane).all[1] as string;
  return (await replicaClient.hexists(records, encodeId(id))) === 1;
}

const hasWaitAof = async () => {
  const c = new Redis(master.port, "127.0.0.1");
  try {
    const reply = (await c.call("COMMAND", "INFO", "WAITAOF")) as unknown[];
    return reply[0] != null;
  } finally {
    c.disconnect();
  }
};

describe("durable puts", () => {
  it("return once the replica has the jobs (WAIT)", async () => {
    const q = await adapter({ replicas: 1, timeoutMs: 5_000 }).lane("wait", LANE_OPTIONS);
    const one = newJob();
    expect(await q.put([one])).toEqual([{ id: one.id, status: "created" }]);
    expect(await onReplica("wait", one.id)).toBe(true);
    // A batch, and puts of one tick merged into one call: each waits for its replicas.
    const many = Array.from({ length: 50 }, () => newJob({ freshId: true }));
    const merged = [newJob(), newJob()];
    await Promise.all([q.put(many), ...merged.map((j) => q.put([j]))]);
    for (const j of [...many, ...merged]) expect(await onReplica("wait", j.id)).toBe(true);
    // A reserve and an ack still go over the main connection, as before.
    const got = (await q.reserve({ limit: 100, leaseMs: 10_000, waitMs: 0 })).jobs;
    expect(got).toHaveLength(53);
    expect(await q.ack(got.map((j) => j.lock))).toEqual(got.map(() => "ok"));
  });

  it("throws RedisReplicationError when too few replicas answer, the jobs written on the master", async () => {
    // Two replicas asked for, one there: WAIT waits its whole timeout, long enough for the
    // one to be counted even on a busy machine.
    const q = await adapter({ replicas: 2, timeoutMs: 1_000 }).lane("short", LANE_OPTIONS);
    const job = newJob();
    const started = Date.now();
    const error = await q.put([job]).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(Date.now() - started).toBeGreaterThanOrEqual(990); // WAIT waited its timeout
    expect(error).toBeInstanceOf(RedisReplicationError);
    expect(error).toMatchObject({ code: "ADAPTER", reason: "replication", replicas: 1 });
    expect((error as Error).message).toContain(
      'put on lane "short": written on the master, but acknowledged by 1 of the 2 replicas asked for within 1000 ms (WAIT)',
    );
    expect((await q.get(job.id))?.state).toBe("waiting");
    // Sent again with the same id: a duplicate, nothing written twice.
    await expect(q.put([job])).rejects.toBeInstanceOf(RedisReplicationError);
    expect(await q.counts()).toMatchObject({ waiting: 1 });
  });

  it("waits for fsyncs on the master and the replica (WAITAOF) where the server has it", async () => {
    if (!(await hasWaitAof())) {
      // Redis 7.0: refused at start, naming the option.
      const error = await adapter({ replicas: 1, aof: true })
        .lane("aof", LANE_OPTIONS)
        .then(
          () => undefined,
          (e: unknown) => e,
        );
      expect(error).toBeInstanceOf(ConfigError);
      expect((error as ConfigError).field).toBe("durability.aof");
      return;
    }
    const q = await adapter({ replicas: 1, aof: true, timeoutMs: 5_000 }).lane("aof", LANE_OPTIONS);
    const job = newJob();
    expect(await q.put([job])).toEqual([{ id: job.id, status: "created" }]);
    expect(await onReplica("aof", job.id)).toBe(true);
    // More replicas than there are: WAITAOF waits its whole timeout, long enough for the one
    // replica's fsync to be counted even on a busy machine.
    const tooMany = await adapter({ replicas: 3, aof: true, timeoutMs: 1_500 }).lane(
      "aof",
      LANE_OPTIONS,
    );
    const error = await tooMany.put([newJob()]).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(RedisReplicationError);
    expect(error).toMatchObject({ replicas: 1, localFsync: true });
  });
});
