/**
 * The backend from the environment, read the way examples/adapter-from-env.ts reads it, so
 * the CLI reaches the same lanes as the application it manages.
 */
import type { Adapter } from "@tasklane/core";
import { UsageError } from "./errors.ts";

/** The process environment, or a test's stand-in. */
export type Environment = Readonly<Record<string, string | undefined>>;

export const ADAPTER_KINDS = ["redis", "sqs", "memory"] as const;
export type AdapterKind = (typeof ADAPTER_KINDS)[number];

/**
 * Which adapter: `--adapter`, else TASKLANE_ADAPTER, else TASKLANE_BACKEND (the name the
 * example used first, still accepted). Undefined when none is set.
 */
export function adapterKindFrom(
  flag: string | undefined,
  env: Environment,
): AdapterKind | undefined {
  const fromEnv = env.TASKLANE_ADAPTER || undefined;
  const legacy = env.TASKLANE_BACKEND || undefined;
  if (flag === undefined && fromEnv && legacy && fromEnv !== legacy) {
    throw new UsageError(
      "TASKLANE_ADAPTER",
      `"${fromEnv}" but TASKLANE_BACKEND says "${legacy}": set one (TASKLANE_BACKEND is the old name)`,
    );
  }
  const [field, value] =
    flag !== undefined
      ? ["--adapter", flag]
      : fromEnv !== undefined
        ? ["TASKLANE_ADAPTER", fromEnv]
        : ["TASKLANE_BACKEND", legacy];
  if (value === undefined) return undefined;
  if (!(ADAPTER_KINDS as readonly string[]).includes(value)) {
    throw new UsageError(field, `must be one of ${ADAPTER_KINDS.join(", ")} (got "${value}")`);
  }
  return value as AdapterKind;
}

/** A boolean variable: "true"/"1"/"yes" or "false"/"0"/"no" (empty or unset: `fallback`). */
function flagFrom(env: Environment, name: string, fallback: boolean): boolean {
  const value = env[name]?.trim().toLowerCase();
  if (value === undefined || value === "") return fallback;
  if (["true", "1", "yes"].includes(value)) return true;
  if (["false", "0", "no"].includes(value)) return false;
  throw new UsageError(name, `must be true or false (got "${env[name]}")`);
}

/** An optional adapter package, with the install line when it is missing. */
async function importAdapter<T>(packages: string, load: () => Promise<T>): Promise<T> {
  try {
    return await load();
  } catch (error) {
    if ((error as { code?: string }).code === "ERR_MODULE_NOT_FOUND") {
      throw new UsageError(
        "--adapter",
        `needs ${packages} installed next to @tasklane/cli: npm install ${packages}`,
      );
    }
    throw error;
  }
}

/**
 * Create the adapter the environment names.
 *
 * - redis: REDIS_URL (default redis://127.0.0.1:6379), REDIS_PREFIX (default "tasklane").
 *   Lifecycle events are on, so what the CLI does (enqueue, retry, cancel, delete) reaches
 *   every `tl.subscribe()` and `tasklane tail`.
 * - sqs: AWS_REGION (or AWS_DEFAULT_REGION; default us-east-1), SQS_ENDPOINT,
 *   SQS_QUEUE_PREFIX, SQS_PRIORITY_LANES (true: the `-high`/`-low` bands, as the
 *   application's `priorityLanes: true`), SQS_CREATE_QUEUES (default false: looking at a
 *   lane never creates its queues); credentials from the AWS SDK's default chain.
 * - memory: refused: its jobs live inside the process that created it, out of a CLI's reach.
 */
export async function createAdapterFromEnvironment(
  kind: AdapterKind,
  env: Environment,
): Promise<Adapter> {
  switch (kind) {
    case "redis": {
      const { createRedisAdapter } = await importAdapter(
        "@tasklane/adapter-redis ioredis",
        () => import("@tasklane/adapter-redis"),
      );
      return createRedisAdapter({
        connection: env.REDIS_URL || undefined,
        prefix: env.REDIS_PREFIX || undefined,
        lifecycleEvents: true,
      });
    }
    case "sqs": {
      const priorityLanes = flagFrom(env, "SQS_PRIORITY_LANES", false);
      const createQueues = flagFrom(env, "SQS_CREATE_QUEUES", false);
      const { createSqsAdapter } = await importAdapter(
        "@tasklane/adapter-sqs @aws-sdk/client-sqs",
        () => import("@tasklane/adapter-sqs"),
      );
      const endpoint = env.SQS_ENDPOINT || undefined;
      return createSqsAdapter({
        clientConfig: {
          region: env.AWS_REGION || env.AWS_DEFAULT_REGION || "us-east-1",
          ...(endpoint !== undefined ? { endpoint } : {}),
        },
        queuePrefix: env.SQS_QUEUE_PREFIX || undefined,
        priorityLanes,
        createQueues,
      });
    }
    case "memory":
      throw new UsageError(
        "TASKLANE_ADAPTER",
        "memory keeps its jobs inside the process that created it, out of the CLI's reach: use redis or sqs",
      );
  }
}
