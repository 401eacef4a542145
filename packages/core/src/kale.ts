/**
 * Kale compatibility: Kale's queue YAML as tasklane lane configs. Kale calls a lane a
 * queue; the names here keep Kale's word. Entry point `@tasklane/core/kale`.
 */
import { ConfigError } from "./errors.ts";
import type { LaneConfigInput } from "./lane-config.ts";

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
