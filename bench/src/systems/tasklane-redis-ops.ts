/**
 * tasklane on the Redis adapter with the operator features in use on every job: two tags
 * and an expiry at publish, a result and one progress report from the handler. Beside
 * tasklane-redis, it shows what they cost per job (the tag index, the bundles in `r`, the
 * expiry index, and their removal by retention).
 */
import { createRedisAdapter } from "@tasklane/adapter-redis";
import type { BenchSystem } from "../types.ts";
import { tasklaneSystem } from "./tasklane-common.ts";

export const system: BenchSystem = {
  async setup(env) {
    if (!env.redis) throw new Error("tasklane-redis-ops needs redis");
    const adapter = createRedisAdapter({
      connection: { host: env.redis.host, port: env.redis.port },
      prefix: "tl",
    });
    return tasklaneSystem(adapter, env.queueName, undefined, {
      tags: ["bench", "customer:42"],
      expiresInMs: 3_600_000,
      resultAndProgress: true,
    });
  },
};
