import type { Adapter, LaneStore } from "../adapter.ts";
import type { Clock } from "../clock.ts";
import type { TasklaneEventBus } from "../events.ts";
import type { Instrumentation } from "../instrumentation.ts";
import type { LaneConfig } from "../lane-config.ts";
import type { RandomSource, Selector } from "../selectors/selector.ts";
import type { AnyTask } from "../task.ts";

/**
 * What a worker needs from the client that creates it. The client implements it; the
 * worker knows nothing else of the client, so neither imports the other's internals.
 */
export interface WorkerHost {
  /** The backend: its capabilities, and cross-process events where it has them. */
  readonly adapter: Adapter;
  readonly clock: Clock;
  readonly random: RandomSource;
  /** Where the worker reports what it does. */
  readonly events: TasklaneEventBus;
  /** The tasks the worker can run, by name. */
  readonly tasks: ReadonlyMap<string, AnyTask>;
  /**
   * The client's limit on a job's payload + appData, bytes. A worker dead-letters a larger
   * job it finds (written by a foreign producer) with reason "payload_too_large", unparsed.
   */
  readonly maxPayloadBytes: number;
  /** The client's telemetry hooks, if any. */
  readonly instrumentation: Instrumentation | undefined;
  /** Largest encoded handler return value, bytes (the client's `maxResultBytes`). */
  readonly maxResultBytes: number;
  /** Every configured lane, by config name. */
  readonly configs: ReadonlyMap<string, LaneConfig>;
  /** A fresh selector: built-in selectors keep per-worker state. */
  makeSelector(): Selector;
  /** A lane's config name from its full (namespaced) name; an unknown one as it is. */
  configName(full: string): string;
  /** The backend's handle of a lane, opened once per client. */
  openLane(name: string): Promise<LaneStore>;
  /** Put the due runs of the schedules stored in `lane` (config name). */
  fireDueSchedules(lane: string): Promise<void>;
  /**
   * Call `listener` with a lane's config name when this process writes one of its
   * schedules a next slot (upsert, resume), so the worker's timer is set to it at once.
   * Returns the function that stops it.
   */
  onLocalSchedule(listener: (lane: string) => void): () => void;
  /**
   * Call `listener` with a lane's config name whenever this process publishes to it (or
   * resumes it), so an idle worker wakes at once; `dueAt` when every job published was
   * delayed: the earliest runAt (the worker wakes then instead). Returns the function
   * that stops it.
   */
  onLocalPublish(listener: (lane: string, dueAt?: number) => void): () => void;
}
