/**
 * The floor of a de-duplicating, atomic bulk publish on Redis: what any queue that keeps
 * issue #3's publish guarantees must at least do. Each chunk is one Lua call that stores
 * the records in one `HSET` and appends their ids in one `RPUSH`, all or nothing. The ids
 * are random UUIDs generated here, so, as in tasklane (`NewJob.freshId`) and BullMQ
 * (generated ids), none is looked up first; only a caller's own id would need that.
 * Nothing else: no schema validation, no priority order, no sequence numbers, no stats, no
 * delayed jobs, no events, no wake-up. It only publishes (no worker), so it runs in the
 * publish scenarios only; it shows how far from BullMQ's `addBulk` a bulk publish with
 * these guarantees can get on this machine. (Until 2026-11-24 it also read every id with
 * `HMGET`, as tasklane did then: its earlier results are not comparable.)
 */
import { randomUUID } from "node:crypto";
import { Redis } from "ioredis";
import type { BenchJob, BenchSystem, SystemUnderTest } from "../types.ts";

/**
 * KEYS[1] the records hash, KEYS[2] the waiting list.
 * ARGV: id, record, id, record, ...
 * Returns the number of jobs (no id is looked up: they are fresh).
 */
const PUT = `
local n = #ARGV / 2
local ids = {}
for i = 1, n do ids[i] = ARGV[2 * i - 1] end
redis.call("HSET", KEYS[1], unpack(ARGV))
redis.call("RPUSH", KEYS[2], unpack(ids))
return n
`;

export const system: BenchSystem = {
  async setup(env) {
    if (!env.redis) throw new Error("redis-put-floor needs redis");
    const tag = `{floor:${env.queueName}}`;
    const keys = [`${tag}:jobs`, `${tag}:wait`] as const;
    const client = new Redis({ ...env.redis });
    const sha = (await client.script("LOAD", PUT)) as string;
    const put = async (jobs: BenchJob[]) => {
      const args: string[] = [];
      for (const job of jobs) args.push(randomUUID(), JSON.stringify({ i: job.i }));
      await client.evalsha(sha, 2, keys[0], keys[1], ...args);
    };
    const sut: SystemUnderTest = {
      publish: (job) => put([job]),
      publishMany: put,
      async process() {
        throw new Error("redis-put-floor only publishes");
      },
      async teardown() {
        await client.del(...keys);
        await client.quit();
      },
    };
    return sut;
  },
};
