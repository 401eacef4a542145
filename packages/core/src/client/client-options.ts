import { z } from "zod";
import type { Adapter } from "../adapter.ts";
import { type Clock, systemClock } from "../clock.ts";
import { ConfigError, UnsupportedError } from "../errors.ts";
import type { Instrumentation } from "../instrumentation.ts";
import { type LaneConfig, parseLaneConfig } from "../lane-config.ts";
import { clockSchema, parseOptions, randomSource } from "../options.ts";
import { createSelector, SELECTOR_NAMES } from "../selectors/create-selector.ts";
import type { RandomSource, Selector } from "../selectors/selector.ts";
import type { AnyTask } from "../task.ts";
import type { TasklaneOptions } from "./tasklane.ts";

/** A client's options, checked, with every default filled in. */
export interface ResolvedClientOptions {
  adapter: Adapter;
  clock: Clock;
  random: RandomSource;
  maxPayloadBytes: number;
  maxResultBytes: number;
  namespace: string | undefined;
  /** Lane configs by name, in configuration order. */
  configs: Map<string, LaneConfig>;
  /** Tasks by name. */
  tasks: Map<string, AnyTask>;
  /** A selector for a new worker. */
  makeSelector: () => Selector;
  closeAdapter: boolean;
  /** Telemetry hooks, if any. */
  instrumentation: Instrumentation | undefined;
}

const INSTRUMENTATION_HOOKS = ["attach", "wrapLane", "publish", "worker", "job"] as const;

/**
 * Check `createTasklane`'s options against each other and the adapter's capabilities;
 * throws ConfigError (or UnsupportedError) naming the field.
 */
export const clientOptionsSchema = z
  .object({
    adapter: z.custom<Adapter>(
      (v) => typeof v === "object" && v !== null && typeof (v as Adapter).lane === "function",
      "must be a tasklane adapter (e.g. createMemoryAdapter())",
    ),
    lanes: z
      .array(z.unknown(), "must be a non-empty array of lane configs")
      .min(1, "must be a non-empty array of lane configs"),
    tasks: z.array(z.unknown(), "must be an array of tasks"),
    selector: z
      .union(
        [
          z.enum(SELECTOR_NAMES),
          z.custom<Selector>(
            (v) =>
              typeof v === "object" && v !== null && typeof (v as Selector).select === "function",
          ),
        ],
        `must be a Selector or one of ${SELECTOR_NAMES.join(", ")}`,
      )
      .optional(),
    namespace: z
      .string()
      .regex(/^[A-Za-z0-9_-]{1,32}$/, "1-32 letters, digits, '-' or '_'")
      .optional(),
    maxPayloadBytes: z
      .number()
      .int("must be a positive integer")
      .positive("must be a positive integer")
      .optional(),
    maxResultBytes: z
      .number()
      .int("must be a positive integer")
      .positive("must be a positive integer")
      .optional(),
    clock: clockSchema.optional(),
    random: randomSource.optional(),
    closeAdapter: z.boolean().optional(),
    instrumentation: z
      .custom<Instrumentation>(
        (v) =>
          typeof v === "object" &&
          v !== null &&
          INSTRUMENTATION_HOOKS.every((k) => {
            const hook = (v as Record<string, unknown>)[k];
            return hook === undefined || typeof hook === "function";
          }),
        `must be an instrumentation object (createTelemetry() from @tasklane/opentelemetry): hooks ${INSTRUMENTATION_HOOKS.join(", ")} are functions`,
      )
      .optional(),
  })
  .strict();

/**
 * Check `createTasklane`'s options against each other and the adapter's capabilities;
 * throws ConfigError (or UnsupportedError) naming the field.
 */
export function resolveClientOptions(input: TasklaneOptions): ResolvedClientOptions {
  if (!input || typeof input !== "object")
    throw new ConfigError("options", input, "must be an object");
  const options = parseOptions(clientOptionsSchema, input, "");
  const { adapter } = options;
  const clock = options.clock ?? systemClock;
  const random = options.random ?? Math.random;
  const configs = resolveLanes(options.lanes, adapter);
  const tasks = resolveTasks(options.tasks as AnyTask[], configs);
  // Built-in selectors keep per-worker state (turns, passes), so each worker gets its own;
  // a Selector object given by the user is shared as given.
  const selector = options.selector ?? "reduced-lottery";
  const makeSelector =
    typeof selector === "string"
      ? () => createSelector(selector, { random, clock })
      : () => selector;
  return {
    adapter,
    clock,
    random,
    maxPayloadBytes: options.maxPayloadBytes ?? 262_144,
    maxResultBytes: options.maxResultBytes ?? 65_536,
    namespace: options.namespace,
    configs,
    tasks,
    makeSelector,
    closeAdapter: options.closeAdapter ?? true,
    instrumentation: options.instrumentation,
  };
}

function resolveLanes(inputs: unknown[], adapter: Adapter): Map<string, LaneConfig> {
  const configs = new Map<string, LaneConfig>();
  inputs.forEach((q, i) => {
    const config = parseLaneConfig(q, `lanes[${i}]`);
    if (configs.has(config.name))
      throw new ConfigError(`lanes[${i}].name`, config.name, "duplicate lane name");
    if (config.leaseMs > adapter.capabilities.maxLeaseMs) {
      throw new UnsupportedError(
        adapter.name,
        `a lease of ${config.leaseMs} ms`,
        `lanes[${i}].leaseMs exceeds the maximum of ${adapter.capabilities.maxLeaseMs} ms`,
      );
    }
    if (config.maxConcurrency !== undefined && !adapter.capabilities.maxConcurrency) {
      throw new UnsupportedError(adapter.name, "maxConcurrency", `lanes[${i}].maxConcurrency`);
    }
    if (config.groups !== undefined && !adapter.capabilities.groups) {
      // The backend's own message groups serve groups by its rules: no concurrency to set.
      if (!adapter.capabilities.messageGroups) {
        throw new UnsupportedError(adapter.name, "fair groups (groups)", `lanes[${i}].groups`);
      }
      if (config.groups.concurrency !== undefined) {
        throw new UnsupportedError(
          adapter.name,
          "a per-group concurrency (groups; its message groups are served by the backend)",
          `lanes[${i}].groups.concurrency`,
        );
      }
    }
    const caps = adapter.capabilities;
    if (config.groups?.rateLimit !== undefined && !(caps.groups && caps.groupRateLimit)) {
      throw new UnsupportedError(
        adapter.name,
        "a per-group rate limit (groupRateLimit)",
        `lanes[${i}].groups.rateLimit`,
      );
    }
    if (config.rateLimit !== undefined && adapter.capabilities.rateLimit !== true) {
      throw new UnsupportedError(adapter.name, "rateLimit", `lanes[${i}].rateLimit`);
    }
    configs.set(config.name, config);
  });
  return configs;
}

function resolveTasks(
  inputs: AnyTask[],
  configs: ReadonlyMap<string, LaneConfig>,
): Map<string, AnyTask> {
  const tasks = new Map<string, AnyTask>();
  inputs.forEach((t, i) => {
    if (!t || typeof t.run !== "function")
      throw new ConfigError(`tasks[${i}]`, t, "must be a task from defineTask()");
    if (tasks.has(t.name)) throw new ConfigError(`tasks[${i}].name`, t.name, "duplicate task name");
    const config = configs.get(t.lane);
    if (!config)
      throw new ConfigError(
        `tasks[${i}].lane`,
        t.lane,
        `no such lane (configured: ${[...configs.keys()].join(", ")})`,
      );
    if (t.timeLimitMs !== undefined && t.timeLimitMs > config.leaseMs) {
      // Kale's time budget: a job only starts when its time limit fits in its lease, so a
      // limit longer than the lease could never start.
      throw new ConfigError(
        `tasks[${i}].timeLimitMs`,
        t.timeLimitMs,
        `must not exceed lane "${t.lane}" leaseMs (${config.leaseMs})`,
      );
    }
    tasks.set(t.name, t);
  });
  return tasks;
}
