/**
 * tasklane with the Redis adapter (compared with BullMQ, Bee-Queue and a bare list loop,
 * on the same redis-server). The adapter makes its own connections from the options.
 */
import { createRedisAdapter } from "@tasklane/adapter-redis";
import type { BenchSystem } from "../types.ts";
import { tasklaneSystem } from "./tasklane-common.ts";

export const system: BenchSystem = {
  async setup(env) {
    if (!env.redis) throw new Error("tasklane-redis needs redis");
    const adapter = createRedisAdapter({
      connection: { host: env.redis.host, port: env.redis.port },
      prefix: "tl",
    });
    return tasklaneSystem(adapter, env.queueName);
  },
};
