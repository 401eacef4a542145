/**
 * What durable puts cost (the adapter's `durability` option): publish throughput on a
 * master with one replica of its own, without durability, with WAIT for the replica, and
 * (where the server has WAITAOF) with WAITAOF. Not a test and not a benchmark: the rounds
 * alternate between the modes so that a machine whose speed drifts hurts each alike, and
 * it prints each round and the medians.
 *
 *   npx node --conditions=source packages/adapter-redis/scripts/durability.ts [rounds]
 *
 * Cases: one publish at a time (each waits for the last: the latency a WAIT adds),
 * `publish` with 100 calls in flight (a web service publishing per request; puts of one
 * tick share one script call, and one WAIT) and `publishMany` (chunks of 1,000, one after
 * another). AOF=always|everysec sets the servers' appendfsync
 * (default everysec); REDIS_SERVER_BIN picks the server (valkey-server has WAITAOF).
 */
import { createTasklane, defineTask, type Tasklane } from "@tasklane/core";
import { Redis } from "ioredis";
import { z } from "zod";
import { createRedisAdapter, type DurabilityOptions } from "../src/index.ts";
import { startRedis, waitFor } from "../test/helpers.ts";

const rounds = Number(process.argv[2] ?? 3);
const fsync = process.env.AOF ?? "everysec";
const aofArgs = ["--appendonly", "yes", "--appendfsync", fsync];

const master = await startRedis(aofArgs);
const replica = await startRedis([...aofArgs, "--replicaof", "127.0.0.1", String(master.port)]);
const admin = new Redis(master.port, "127.0.0.1");
const replicaAdmin = new Redis(replica.port, "127.0.0.1");
await waitFor(
  async () => String(await replicaAdmin.info("replication")).includes("master_link_status:up"),
  "the replica's link",
);
const waitAof = ((await admin.call("COMMAND", "INFO", "WAITAOF")) as unknown[])[0] != null;

const task = defineTask({
  name: "t",
  lane: "d",
  schema: z.object({ i: z.number() }),
  run: () => {},
});

const modes: Array<[string, DurabilityOptions | undefined]> = [
  ["none", undefined],
  ["WAIT 1", { replicas: 1, timeoutMs: 5_000 }],
  ...(waitAof
    ? ([["WAITAOF 1 1", { replicas: 1, timeoutMs: 5_000, aof: true }]] as Array<
        [string, DurabilityOptions]
      >)
    : []),
];

async function withClient<T>(
  durability: DurabilityOptions | undefined,
  f: (tl: Tasklane) => Promise<T>,
): Promise<T> {
  const adapter = createRedisAdapter({
    connection: master.url,
    prefix: `d${Math.random().toString(36).slice(2, 8)}`,
    ...(durability ? { durability } : {}),
  });
  const tl = createTasklane({ adapter, lanes: [{ name: "d" }], tasks: [task] });
  try {
    await tl.publish(task, { i: -1 }); // connected, scripts loaded
    return await f(tl);
  } finally {
    await tl.close();
  }
}

/** Jobs per second publishing `total` jobs one per call, `inFlight` calls at once. */
async function singles(tl: Tasklane, total: number, inFlight: number): Promise<number> {
  let next = 0;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: inFlight }, async () => {
      while (next < total) await tl.publish(task, { i: next++ });
    }),
  );
  return total / ((performance.now() - started) / 1000);
}

/** Median ms of one publish, `total` publishes one after another. */
async function sequential(tl: Tasklane, total: number): Promise<number> {
  const took: number[] = [];
  for (let i = 0; i < total; i++) {
    const started = performance.now();
    await tl.publish(task, { i });
    took.push(performance.now() - started);
  }
  return median(took);
}

/** Jobs per second publishing `chunks` chunks of 1,000, one after another. */
async function many(tl: Tasklane, chunks: number): Promise<number> {
  const items = Array.from({ length: 1_000 }, (_, i) => ({ payload: { i } }));
  const started = performance.now();
  for (let c = 0; c < chunks; c++) await tl.publishMany(task, items);
  return (chunks * 1_000) / ((performance.now() - started) / 1000);
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] as number;
const results = new Map<string, number[]>();
const show = (key: string, value: number) =>
  key.startsWith("one at a time")
    ? `${key.padEnd(40)} ${value.toFixed(3).padStart(9)} ms (median)`
    : `${key.padEnd(40)} ${Math.round(value).toLocaleString("en-US").padStart(9)} jobs/s`;
const note = (key: string, value: number) => {
  const list = results.get(key) ?? [];
  list.push(value);
  results.set(key, list);
  console.log(show(key, value));
};

const server = await admin.info("server");
const version = /^valkey_version:\S+/m.exec(server) ?? /^redis_version:\S+/m.exec(server);
console.log(`${version?.[0]}, appendfsync ${fsync}`);
for (let r = 0; r < rounds; r++) {
  for (const [name, durability] of modes) {
    await withClient(durability, async (tl) => {
      // WAITAOF under appendfsync everysec waits for the next fsync, up to a second a put
      const slow = durability?.aof === true && fsync !== "always";
      note(`one at a time, ${name}`, await sequential(tl, slow ? 20 : 2_000));
      note(`publish, 100 in flight, ${name}`, await singles(tl, slow ? 2_000 : 50_000, 100));
      note(`publishMany x1000, ${name}`, await many(tl, slow ? 10 : 50));
    });
    await admin.flushall();
  }
}
console.log("\nmedians of the rounds");
for (const [key, values] of results) console.log(show(key, median(values)));
admin.disconnect();
replicaAdmin.disconnect();
await replica.stop();
await master.stop();
