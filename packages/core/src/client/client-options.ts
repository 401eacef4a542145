import type { Adapter } from "../adapter.ts";
import { type Clock, systemClock } from "../clock.ts";
import { ConfigError, UnsupportedError } from "../errors.ts";
import { parseQueueConfig, type QueueConfig } from "../queue-config.ts";
import { createSelector } from "../selectors/create-selector.ts";
import type { RandomSource, Selector } from "../selectors/selector.ts";
import type { AnyTask } from "../task.ts";
import type { TasklaneOptions } from "./tasklane.ts";

/** A client's options, checked, with every default filled in. */
export interface ResolvedClientOptions {
  adapter: Adapter;
  clock: Clock;
  random: RandomSource;
  maxPayloadBytes: number;
  namespace: string | undefined;
  /** Lane configs by name, in configuration order. */
  configs: Map<string, QueueConfig>;
  /** Tasks by name. */
  tasks: Map<string, AnyTask>;
  /** A selector for a new worker. */
  makeSelector: () => Selector;
  closeAdapter: boolean;
}

/**
 * Check `createTasklane`'s options against each other and the adapter's capabilities;
 * throws ConfigError (or UnsupportedError) naming the field.
 */
export function resolveClientOptions(options: TasklaneOptions): ResolvedClientOptions {
  if (!options || typeof options !== "object")
    throw new ConfigError("options", options, "must be an object");
  const { adapter } = options;
  if (!adapter || typeof adapter.queue !== "function") {
    throw new ConfigError(
      "adapter",
      adapter,
      "must be a tasklane adapter (e.g. createMemoryAdapter())",
    );
  }
  const clock = options.clock ?? systemClock;
  const random = options.random ?? Math.random;
  const maxPayloadBytes = options.maxPayloadBytes ?? 262_144;
  if (!(Number.isInteger(maxPayloadBytes) && maxPayloadBytes > 0)) {
    throw new ConfigError("maxPayloadBytes", maxPayloadBytes, "must be a positive integer");
  }
  const namespace = options.namespace;
  if (namespace !== undefined && !/^[A-Za-z0-9_-]{1,32}$/.test(namespace)) {
    throw new ConfigError("namespace", namespace, "1-32 letters, digits, '-' or '_'");
  }
  const configs = resolveLanes(options, adapter);
  const tasks = resolveTasks(options, configs);

  // Built-in selectors keep per-worker state (turns, passes), so each worker gets its own;
  // a Selector object given by the user is shared as given.
  const selectorOption = options.selector ?? "reduced-lottery";
  let makeSelector: () => Selector;
  if (typeof selectorOption === "string") {
    createSelector(selectorOption, { random, clock }); // validate the name now, not at worker start
    makeSelector = () => createSelector(selectorOption, { random, clock });
  } else if (selectorOption && typeof selectorOption.select === "function") {
    makeSelector = () => selectorOption;
  } else {
    throw new ConfigError("selector", selectorOption, "must be a Selector or a selector name");
  }
  return {
    adapter,
    clock,
    random,
    maxPayloadBytes,
    namespace,
    configs,
    tasks,
    makeSelector,
    closeAdapter: options.closeAdapter ?? true,
  };
}

function resolveLanes(options: TasklaneOptions, adapter: Adapter): Map<string, QueueConfig> {
  if (!Array.isArray(options.queues) || options.queues.length === 0) {
    throw new ConfigError("queues", options.queues, "must be a non-empty array of queue configs");
  }
  const configs = new Map<string, QueueConfig>();
  options.queues.forEach((q, i) => {
    const config = parseQueueConfig(q, `queues[${i}]`);
    if (configs.has(config.name))
      throw new ConfigError(`queues[${i}].name`, config.name, "duplicate queue name");
    if (config.leaseMs > adapter.capabilities.maxLeaseMs) {
      throw new UnsupportedError(
        adapter.name,
        `a lease of ${config.leaseMs} ms`,
        `queues[${i}].leaseMs exceeds the maximum of ${adapter.capabilities.maxLeaseMs} ms`,
      );
    }
    if (config.maxConcurrency !== undefined && !adapter.capabilities.maxConcurrency) {
      throw new UnsupportedError(adapter.name, "maxConcurrency", `queues[${i}].maxConcurrency`);
    }
    configs.set(config.name, config);
  });
  return configs;
}

function resolveTasks(
  options: TasklaneOptions,
  configs: ReadonlyMap<string, QueueConfig>,
): Map<string, AnyTask> {
  if (!Array.isArray(options.tasks))
    throw new ConfigError("tasks", options.tasks, "must be an array of tasks");
  const tasks = new Map<string, AnyTask>();
  options.tasks.forEach((t, i) => {
    if (!t || typeof t.run !== "function")
      throw new ConfigError(`tasks[${i}]`, t, "must be a task from defineTask()");
    if (tasks.has(t.name)) throw new ConfigError(`tasks[${i}].name`, t.name, "duplicate task name");
    const config = configs.get(t.queue);
    if (!config)
      throw new ConfigError(
        `tasks[${i}].queue`,
        t.queue,
        `no such queue (configured: ${[...configs.keys()].join(", ")})`,
      );
    if (t.timeLimitMs !== undefined && t.timeLimitMs > config.leaseMs) {
      // Kale's time budget: a job only starts when its time limit fits in its lease, so a
      // limit longer than the lease could never start.
      throw new ConfigError(
        `tasks[${i}].timeLimitMs`,
        t.timeLimitMs,
        `must not exceed queue "${t.queue}" leaseMs (${config.leaseMs})`,
      );
    }
    tasks.set(t.name, t);
  });
  return tasks;
}
