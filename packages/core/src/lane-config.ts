import { z } from "zod";
import type { RetentionPolicy } from "./adapter.ts";
import { parseOptions } from "./options.ts";
import { stripUndefined } from "./strip-undefined.ts";

const retentionLimit = z
  .object({
    maxAgeMs: z.number().int().positive().optional(),
    maxCount: z.number().int().nonnegative().optional(),
  })
  .strict();

/** At most `max` starts in any window of `durationMs` (a lane's, or each group's). */
const rateLimitSchema = z
  .object({
    max: z.number().int().min(1).max(100_000),
    durationMs: z.number().int().min(1).max(86_400_000),
  })
  .strict();

/**
 * One lane's configuration. Every field but `name` has a default (Kale's, where Kale has
 * one). Unknown keys are refused so a typo (or a Kale snake_case key) is an error, not a
 * silently ignored setting: use `fromKaleConfig` from `@tasklane/core/kale` for Kale's YAML.
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
    /**
     * Fair groups (adapter capability `groups`): jobs published with `group` are served
     * round-robin, one group at a time, so one group's backlog cannot starve another's;
     * `concurrency`: at most this many jobs of one group run at once, across all workers;
     * `rateLimit`: at most `max` jobs of one group started in any window of `durationMs`,
     * across all workers (adapter capability `groupRateLimit`), each group its own window.
     * Default: no groups (publishing with `group` to this lane is refused).
     */
    groups: z
      .object({
        concurrency: z.number().int().min(1).optional(),
        rateLimit: rateLimitSchema.optional(),
      })
      .strict()
      .optional(),
    /**
     * Most jobs of this lane started (handed out) in any window of `durationMs`, across
     * all workers (adapter capability `rateLimit`). Default unlimited.
     */
    rateLimit: rateLimitSchema.optional(),
    /** Lease expiries tolerated before a job goes dead with reason "stalled". Default 3. */
    maxStalls: z.number().int().min(0).default(3),
    /** History entries kept per job. Default 20. */
    historyLimit: z.number().int().min(0).max(1000).default(20),
    /**
     * Log lines kept per job (`ctx.log`, adapters with capability `reports`); older lines
     * are dropped and counted in `logsDropped`. Default 100.
     */
    logLimit: z.number().int().min(0).max(10_000).default(100),
    /**
     * How long finished jobs are kept, by age (ms) and count. Default: succeeded 1 day /
     * 1,000 jobs; failed 7 days / 10,000 jobs; canceled and expired 1 day / 1,000 jobs.
     */
    retention: z
      .object({
        succeeded: retentionLimit.optional(),
        failed: retentionLimit.optional(),
        canceled: retentionLimit.optional(),
        expired: retentionLimit.optional(),
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
  expired: { maxAgeMs: 86_400_000, maxCount: 1_000 },
};

/** Validate and fill defaults for one lane config. */
export function parseLaneConfig(input: unknown, field: string): LaneConfig {
  const parsed = parseOptions(laneConfigSchema, input, field);
  const retention: RetentionPolicy = { ...DEFAULT_RETENTION };
  const given = parsed.retention ?? {};
  for (const kind of ["succeeded", "failed", "canceled", "expired"] as const) {
    const limit = given[kind];
    if (limit) retention[kind] = stripUndefined(limit);
  }
  return { ...parsed, retention };
}
