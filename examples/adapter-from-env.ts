/**
 * Choose the backend from the environment, so the same application code runs on SQS in
 * production, Redis in staging and memory in tests:
 *
 *   TASKLANE_ADAPTER=memory (default) | redis (REDIS_URL, REDIS_PREFIX)
 *                   | sqs (AWS_REGION, SQS_ENDPOINT, SQS_QUEUE_PREFIX)
 *
 * TASKLANE_BACKEND, the name this example used first, is still accepted. The `tasklane`
 * CLI (@tasklane/cli) reads the same variables, so it reaches the same lanes.
 */
import type { Adapter } from "@tasklane/core";

export async function adapterFromEnv(env = process.env): Promise<Adapter> {
  const name = env.TASKLANE_ADAPTER || env.TASKLANE_BACKEND || "memory";
  switch (name) {
    case "memory": {
      const { createMemoryAdapter } = await import("@tasklane/adapter-memory");
      return createMemoryAdapter();
    }
    case "redis": {
      const { createRedisAdapter } = await import("@tasklane/adapter-redis");
      return createRedisAdapter({
        connection: env.REDIS_URL ?? "redis://127.0.0.1:6379",
        prefix: env.REDIS_PREFIX || undefined,
        // every instance announces its jobs' lifecycle, so tl.subscribe() sees them all
        lifecycleEvents: true,
      });
    }
    case "sqs": {
      const { createSqsAdapter } = await import("@tasklane/adapter-sqs");
      return createSqsAdapter({
        clientConfig: {
          region: env.AWS_REGION ?? "us-east-1",
          ...(env.SQS_ENDPOINT ? { endpoint: env.SQS_ENDPOINT } : {}),
        },
        queuePrefix: env.SQS_QUEUE_PREFIX || undefined,
      });
    }
    default:
      throw new Error(`TASKLANE_ADAPTER must be memory, redis or sqs (got ${name})`);
  }
}
