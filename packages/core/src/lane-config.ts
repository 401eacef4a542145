import { z } from "zod";
import type { RetentionPolicy } from "./adapter.ts";
import { ConfigError } from "./errors.ts";

const retentionLimit = z
  .object({
    maxAgeMs: z.number().int().positive().optional(),
    maxCount: z.number().int().nonnegative().optional(),
  })
  .strict();

/**
 * One lane's configuration. Every field but `name` has a default (Kale's, where Kale has
 * one). Unknown keys are refused so a typo (or a Kale snake_case key) is an error, not a
 * silently ignored setting: use {@link fromKaleConfig} for Kale's YAML.
 */
export const laneConfigSchema = z
  .object({
    /** Lane name; `namespace` (client option) is prefixed to it. */
    name: z
      .string()
      .min(1)
      .max(64)
      .regex(/^[A-Za-z0-9_-]+$/, "only letters, digits, '-' and '_'"),
    /** Lottery tickets / weight when selecting a lane, 1..1000. Default 1. */
    priority: z.number().int().min(1).max(1000).default(1),
    /** Most jobs taken by one reserve. Default 10 (Kale). */
    batchSize: z.number().int().min(1).max(10_000).default(10),
    /** Lease (visibility timeout), ms. Heartbeats renew it while a job runs. Default 60_000. */
    leaseMs: z.number().int().min(100).default(60_000),
    /** How long an idle worker waits on this lane when every lane is empty, ms. Default 1_000. */
    longPollMs: z.number().int().min(0).default(1_000),
    /** Batches a worker takes from this lane per selection, leaving early on an empty one. Default 5. */
    numIterations: z.number().int().min(1).default(5),
    /** Most jobs active in this lane across all workers (adapter capability). Default unlimited. */
    maxConcurrency: z.number().int().min(1).optional(),
    /** Lease expiries tolerated before a job goes dead with reason "stalled". Default 3. */
    maxStalls: z.number().int().min(0).default(3),
    /** History entries kept per job. Default 20. */
    historyLimit: z.number().int().min(0).max(1000).default(20),
    /**
     * How long finished jobs are kept, by age (ms) and count. Default: succeeded 1 day /
     * 1,000 jobs; failed 7 days / 10,000 jobs; canceled 1 day / 1,000 jobs.
     */
    retention: z
      .object({
        succeeded: retentionLimit.optional(),
        failed: retentionLimit.optional(),
        canceled: retentionLimit.optional(),
      })
      .strict()
      .optional(),
  })
  .strict();

export type LaneConfigInput = z.input<typeof laneConfigSchema>;
export type LaneConfig = z.output<typeof laneConfigSchema> & { retention: RetentionPolicy };

export const DEFAULT_RETENTION: Required<RetentionPolicy> = {
  succeeded: { maxAgeMs: 86_400_000, maxCount: 1_000 },
  failed: { maxAgeMs: 7 * 86_400_000, maxCount: 10_000 },
  canceled: { maxAgeMs: 86_400_000, maxCount: 1_000 },
};

/** Turn the first zod issue into a ConfigError naming the field (e.g. `lanes[1].leaseMs`). */
export function configErrorFrom(prefix: string, error: z.ZodError, input: unknown): ConfigError {
  const issue = error.issues[0];
  const path = issue?.path ?? [];
  let field = prefix;
  let value: unknown = input;
  for (const key of path) {
    field += typeof key === "number" ? `[${key}]` : `.${String(key)}`;
    value =
      value !== null && typeof value === "object"
        ? (value as Record<PropertyKey, unknown>)[key as PropertyKey]
        : undefined;
  }
  if (issue?.code === "unrecognized_keys") {
    const keys = issue.keys.join(", ");
    const hint = issue.keys.some((k) => k.includes("_"))
      ? " (Kale's snake_case keys go through fromKaleConfig())"
      : "";
    return new ConfigError(field, keys, `unknown option${hint}`);
  }
  return new ConfigError(field, value, issue?.message ?? "invalid");
}

/** Validate and fill defaults for one lane config. */
export function parseLaneConfig(input: unknown, field: string): LaneConfig {
  const result = laneConfigSchema.safeParse(input);
  if (!result.success) throw configErrorFrom(field, result.error, input);
  const retention: RetentionPolicy = { ...DEFAULT_RETENTION };
  const given = result.data.retention ?? {};
  for (const kind of ["succeeded", "failed", "canceled"] as const) {
    const limit = given[kind];
    if (limit) retention[kind] = stripUndefined(limit);
  }
  return { ...result.data, retention };
}

/** One queue entry of Kale's queue YAML. */
export interface KaleQueueConfig {
  name?: string;
  priority?: number;
  batch_size?: number;
  visibility_timeout_sec?: number;
  long_poll_time_sec?: number;
  num_iterations?: number;
}

/**
 * Convert Kale's queue config (the parsed YAML: a map of entries, or a list) into
 * tasklane lane configs. Seconds become ms; unknown Kale keys are refused.
 *
 * @example
 * fromKaleConfig({ high_priority: { name: "high_priority", priority: 100, batch_size: 10,
 *   visibility_timeout_sec: 60, long_poll_time_sec: 1, num_iterations: 10 } })
 * // → [{ name: "high_priority", priority: 100, batchSize: 10, leaseMs: 60_000,
 * //      longPollMs: 1_000, numIterations: 10 }]
 */
export function fromKaleConfig(
  config: Record<string, KaleQueueConfig> | ReadonlyArray<KaleQueueConfig>,
): LaneConfigInput[] {
  const entries: Array<[string, KaleQueueConfig]> = Array.isArray(config)
    ? config.map((c, i) => [String(i), c])
    : Object.entries(config);
  const known = new Set([
    "name",
    "priority",
    "batch_size",
    "visibility_timeout_sec",
    "long_poll_time_sec",
    "num_iterations",
  ]);
  return entries.map(([key, c]) => {
    for (const k of Object.keys(c)) {
      if (!known.has(k))
        throw new ConfigError(
          `kale.${key}.${k}`,
          c[k as keyof KaleQueueConfig],
          "unknown Kale queue key",
        );
    }
    const out: LaneConfigInput = { name: c.name ?? key };
    if (c.priority !== undefined) out.priority = c.priority;
    if (c.batch_size !== undefined) out.batchSize = c.batch_size;
    if (c.visibility_timeout_sec !== undefined)
      out.leaseMs = Math.round(c.visibility_timeout_sec * 1000);
    if (c.long_poll_time_sec !== undefined)
      out.longPollMs = Math.round(c.long_poll_time_sec * 1000);
    if (c.num_iterations !== undefined) out.numIterations = c.num_iterations;
    return out;
  });
}

function stripUndefined<T extends object>(o: T): { [K in keyof T]: Exclude<T[K], undefined> } {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as {
    [K in keyof T]: Exclude<T[K], undefined>;
  };
}
