/**
 * One command's connection to the backend: the tasklane client built from the setup
 * (config module or lane names) and the adapter (the config module's or the
 * environment's), closed when the command ends.
 */
import { type AnyTask, createTasklane, type LaneHandle, type Tasklane } from "@tasklane/core";
import type { Setup } from "./config.ts";
import { adapterKindFrom, createAdapterFromEnvironment, type Environment } from "./environment.ts";
import { UsageError } from "./errors.ts";

export interface Session {
  readonly tl: Tasklane;
  /** Every configured lane, by config name, in configuration order. */
  readonly laneNames: readonly string[];
  readonly tasks: ReadonlyMap<string, AnyTask>;
  readonly setup: Setup;
  /** The handles of the lanes `--lane` names (all lanes when it names none). */
  lanes(selected: readonly string[] | undefined, field?: string): LaneHandle[];
  close(): Promise<void>;
}

export interface ConnectOptions {
  /** `--adapter`. */
  adapter: string | undefined;
  /** Tasks to add to the setup's (enqueue's stand-in for a task no config defines). */
  extraTasks?: AnyTask[];
}

/** Create the client. Nothing touches the backend until a command calls it. */
export async function connect(
  setup: Setup,
  env: Environment,
  options: ConnectOptions,
): Promise<Session> {
  if (setup.lanes.length === 0) {
    throw new UsageError(
      "--lanes",
      "the CLI needs the application's lanes: pass --config <module> (or TASKLANE_CONFIG) " +
        "exporting { lanes, tasks }, or --lanes a,b,c (or TASKLANE_LANES)",
    );
  }
  let adapter: Awaited<ReturnType<typeof createAdapterFromEnvironment>>;
  const kind = adapterKindFrom(options.adapter, env);
  if (kind !== undefined || setup.adapter === undefined) {
    if (kind === undefined) {
      throw new UsageError(
        "TASKLANE_ADAPTER",
        "which backend? set TASKLANE_ADAPTER (or --adapter) to redis or sqs, " +
          "or export an adapter from the config module",
      );
    }
    adapter = await createAdapterFromEnvironment(kind, env);
  } else {
    adapter = await setup.adapter();
  }
  const tasks = [...setup.tasks, ...(options.extraTasks ?? [])];
  let tl: Tasklane;
  try {
    tl = createTasklane({
      adapter,
      lanes: setup.lanes,
      tasks,
      ...(setup.namespace !== undefined ? { namespace: setup.namespace } : {}),
      ...(setup.maxPayloadBytes !== undefined ? { maxPayloadBytes: setup.maxPayloadBytes } : {}),
    });
  } catch (error) {
    await adapter.close();
    throw error;
  }
  const laneNames = setup.lanes.map((lane) => lane.name);
  return {
    tl,
    laneNames,
    tasks: new Map(tasks.map((task) => [task.name, task])),
    setup,
    lanes(selected, field = "--lane") {
      if (selected === undefined || selected.length === 0) return laneNames.map(tl.lane);
      for (const name of selected) {
        if (!laneNames.includes(name)) {
          throw new UsageError(
            field,
            `no lane "${name}" in ${setup.source} (lanes: ${laneNames.join(", ")})`,
          );
        }
      }
      return selected.map((name) => tl.lane(name));
    },
    close: () => tl.close(),
  };
}
