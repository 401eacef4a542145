/**
 * The floor of a de-duplicating, atomic bulk publish on Redis: what any queue that keeps
 * issue #3's publish guarantees must at least do. Each chunk is one Lua call that reads
 * every id (`HMGET`, so a duplicate is refused), stores the new records in one `HSET` and
 * appends their ids in one `RPUSH`, all or nothing. Nothing else: no schema validation,
 * no priority order, no sequence numbers, no stats, no delayed jobs, no events, no wake-up.
 * It only publishes (no worker), so it runs in the publish scenarios only; it shows how
 * far from BullMQ's `addBulk` a bulk publish with these guarantees can get on this machine.
 */
import { randomUUID } from "node:crypto";
import { Redis } from "ioredis";
import type { BenchJob, BenchSystem, SystemUnderTest } from "../types.ts";

/**
 * KEYS[1] the records hash, KEYS[2] the waiting list.
 * ARGV: id, record, id, record, ...
 * Returns the number of new jobs (in-batch duplicates are not checked: the ids are fresh).
 */
const PUT = `
local n = #ARGV / 2
local ids = {}
for i = 1, n do ids[i] = ARGV[2 * i - 1] end
local have = redis.call("HMGET", KEYS[1], unpack(ids))
local fields, queued = {}, {}
for i = 1, n do
  if not have[i] then
    fields[#fields + 1] = ARGV[2 * i - 1]
    fields[#fields + 1] = ARGV[2 * i]
    queued[#queued + 1] = ARGV[2 * i - 1]
  end
end
if #queued > 0 then
  redis.call("HSET", KEYS[1], unpack(fields))
  redis.call("RPUSH", KEYS[2], unpack(queued))
end
return #queued
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
