/**
 * Choose the backend from the environment, so the same application code runs on SQS in
 * production, Redis in staging and memory in tests:
 *
 *   TASKLANE_BACKEND=memory (default) | redis (REDIS_URL) | sqs (AWS_REGION, SQS_ENDPOINT)
 */
import type { Adapter } from "@tasklane/core";

export async function adapterFromEnv(env = process.env): Promise<Adapter> {
  switch (env.TASKLANE_BACKEND ?? "memory") {
    case "memory": {
      const { createMemoryAdapter } = await import("@tasklane/adapter-memory");
      return createMemoryAdapter();
    }
    case "redis": {
      const { createRedisAdapter } = await import("@tasklane/adapter-redis");
      return createRedisAdapter({
        connection: env.REDIS_URL ?? "redis://127.0.0.1:6379",
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
      });
    }
    default:
      throw new Error(
        `TASKLANE_BACKEND must be memory, redis or sqs (got ${env.TASKLANE_BACKEND})`,
      );
  }
}
