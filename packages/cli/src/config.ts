/**
 * Where the CLI learns the application's lanes and tasks: a config module
 * (`--config` / TASKLANE_CONFIG) that exports them, or, without one, bare lane names
 * (`--lanes` / TASKLANE_LANES).
 *
 * Why a module: lane configs are code in the application (retention, maxStalls and
 * historyLimit travel with every call the CLI makes on Redis, so they should be the
 * application's own), and `enqueue` can only validate a payload against the task's schema,
 * which is code too. The backend cannot tell either: a Redis prefix or an SQS queue list
 * holds lane names at best, not their settings or the tasks' schemas.
 */
import { existsSync } from "node:fs";
import { isAbsolute, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import type { Adapter, AnyTask, LaneConfigInput } from "@tasklane/core";
import type { Environment } from "./environment.ts";
import { UsageError } from "./errors.ts";

/**
 * What a config module exports, as its default export (an object, or a function returning
 * one, possibly async) or as named exports. It may be the application's whole
 * `createTasklane` options: `selector`, `clock`, `random` and `closeAdapter` are ignored.
 *
 * @example
 * // tasklane.config.js
 * import { lanes, tasks } from "./dist/jobs.js";
 * export default { lanes, tasks, namespace: process.env.RELEASE };
 */
export interface TasklaneCliConfig {
  /** The application's lane configs (only `name` is required). */
  lanes: LaneConfigInput[];
  /** The application's tasks: `enqueue` validates payloads with their schemas. Default none. */
  tasks?: AnyTask[];
  /** The client's namespace (`<namespace>_<lane>` on the backend). Default none. */
  namespace?: string;
  /**
   * The adapter, or a function that creates it (called once, only by commands that need
   * the backend). Default: from the environment (TASKLANE_ADAPTER, REDIS_URL, …).
   */
  adapter?: Adapter | (() => Adapter | Promise<Adapter>);
  /** Largest encoded payload `enqueue` accepts, bytes. Default core's (256 KiB). */
  maxPayloadBytes?: number;
}

/** The application as the CLI sees it, from a config module or from lane names. */
export interface Setup {
  /** Where it came from, for messages: the config file or "--lanes" / "TASKLANE_LANES". */
  source: string;
  lanes: LaneConfigInput[];
  tasks: AnyTask[];
  namespace: string | undefined;
  /** The config module's adapter, if it gives one. */
  adapter: (() => Promise<Adapter>) | undefined;
  maxPayloadBytes: number | undefined;
  /** True when the lanes came from a config module (their real settings). */
  fromConfig: boolean;
}

export interface SetupOptions {
  config?: string | undefined;
  lanes?: string | undefined;
  namespace?: string | undefined;
}

const LANE_NAME = /^[A-Za-z0-9_-]{1,64}$/;

/** Lane names from a comma-separated list ("a,b, c"), each checked. */
export function parseLaneNames(field: string, text: string): string[] {
  const names = text
    .split(",")
    .map((name) => name.trim())
    .filter((name) => name !== "");
  if (names.length === 0) throw new UsageError(field, "names no lane");
  for (const name of names) {
    if (!LANE_NAME.test(name)) {
      throw new UsageError(field, `"${name}" is not a lane name (letters, digits, '-', '_')`);
    }
  }
  return [...new Set(names)];
}

/**
 * The application's lanes and tasks. Precedence: `--config`, else `--lanes`, else
 * TASKLANE_CONFIG, else TASKLANE_LANES; the namespace from `--namespace`, else
 * TASKLANE_NAMESPACE, else the config module's.
 */
export async function resolveSetup(
  options: SetupOptions,
  env: Environment,
  cwd: string,
): Promise<Setup> {
  if (options.config !== undefined && options.lanes !== undefined) {
    throw new UsageError("--lanes", "give --config or --lanes, not both");
  }
  const configPath =
    options.config ?? (options.lanes === undefined ? env.TASKLANE_CONFIG || undefined : undefined);
  const namespace = options.namespace ?? (env.TASKLANE_NAMESPACE || undefined);
  if (configPath !== undefined) {
    const field = options.config !== undefined ? "--config" : "TASKLANE_CONFIG";
    const config = await loadConfigModule(field, configPath, cwd);
    const adapter = config.adapter;
    return {
      source: configPath,
      lanes: config.lanes,
      tasks: config.tasks ?? [],
      namespace: namespace ?? config.namespace,
      adapter:
        adapter === undefined
          ? undefined
          : async () => (typeof adapter === "function" ? await adapter() : adapter),
      maxPayloadBytes: config.maxPayloadBytes,
      fromConfig: true,
    };
  }
  const [field, list] =
    options.lanes !== undefined
      ? ["--lanes", options.lanes]
      : ["TASKLANE_LANES", env.TASKLANE_LANES || undefined];
  return {
    source: field,
    lanes: list === undefined ? [] : parseLaneNames(field, list).map((name) => ({ name })),
    tasks: [],
    namespace,
    adapter: undefined,
    maxPayloadBytes: undefined,
    fromConfig: false,
  };
}

/** Import a config module and check its shape (the lanes and tasks themselves: core does). */
export async function loadConfigModule(
  field: string,
  path: string,
  cwd: string,
): Promise<TasklaneCliConfig> {
  const file = isAbsolute(path) ? path : resolve(cwd, path);
  if (!existsSync(file)) throw new UsageError(field, `no such file: ${file}`);
  const module = (await import(pathToFileURL(file).href)) as Record<string, unknown>;
  let exported: unknown = module.default ?? module;
  if (typeof exported === "function") exported = await (exported as () => unknown)();
  if (typeof exported !== "object" || exported === null) {
    throw new UsageError(field, `${path} must export { lanes, tasks? } (as default or by name)`);
  }
  const config = exported as Record<string, unknown>;
  if (!Array.isArray(config.lanes)) {
    throw new UsageError(
      `${field} lanes`,
      `${path} must export lanes: an array of lane configs like [{ name: "default" }]`,
    );
  }
  if (config.tasks !== undefined && !Array.isArray(config.tasks)) {
    throw new UsageError(`${field} tasks`, `${path} exports tasks that are not an array`);
  }
  if (config.namespace !== undefined && typeof config.namespace !== "string") {
    throw new UsageError(`${field} namespace`, `${path} exports a namespace that is not a string`);
  }
  const adapter = config.adapter;
  if (
    adapter !== undefined &&
    typeof adapter !== "function" &&
    (typeof adapter !== "object" || adapter === null || !("lane" in adapter))
  ) {
    throw new UsageError(
      `${field} adapter`,
      `${path} exports an adapter that is neither an adapter nor a function creating one`,
    );
  }
  return config as unknown as TasklaneCliConfig;
}
