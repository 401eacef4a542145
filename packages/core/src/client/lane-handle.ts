import type { Adapter, LaneStore } from "../adapter.ts";
import type { Clock } from "../clock.ts";
import { UnsupportedError } from "../errors.ts";
import type { LaneConfig } from "../lane-config.ts";
import type { LaneHandle } from "./tasklane.ts";

export interface LaneHandleDeps {
  adapter: Adapter;
  clock: Clock;
  openLane(name: string): Promise<LaneStore>;
  /** Wake this process's idle workers for the lane (after a resume). */
  notifyLocalPublish(lane: string): void;
}

/**
 * The management view of one lane. An operation the adapter does not declare, or does
 * not implement, throws UnsupportedError naming the adapter and the operation.
 */
export function createLaneHandle(config: LaneConfig, deps: LaneHandleDeps): LaneHandle {
  const { adapter, clock, openLane, notifyLocalPublish } = deps;
  const { name } = config;
  const caps = adapter.capabilities;
  const need = <K extends keyof LaneStore>(
    q: LaneStore,
    method: K,
    capable: boolean,
  ): NonNullable<LaneStore[K]> => {
    const fn = q[method];
    if (!capable || typeof fn !== "function")
      throw new UnsupportedError(adapter.name, String(method));
    return (fn as (...args: unknown[]) => unknown).bind(q) as NonNullable<LaneStore[K]>;
  };
  return {
    name,
    config,
    counts: async () => (await openLane(name)).counts(),
    probe: async () => (await openLane(name)).probe(),
    get: async (id) => need(await openLane(name), "get", caps.get)(id),
    async *list(opts) {
      const q = await openLane(name);
      yield* need(q, "list", caps.list)(opts);
    },
    cancel: async (ids) => need(await openLane(name), "cancel", caps.cancel)(ids),
    retryFailed: async (ids) => need(await openLane(name), "retryFailed", caps.retryFailed)(ids),
    delete: async (ids) => need(await openLane(name), "delete", caps.delete)(ids),
    pause: async () => need(await openLane(name), "pause", caps.pause)(),
    resume: async () => {
      await need(await openLane(name), "resume", caps.pause)();
      notifyLocalPublish(name);
    },
    isPaused: async () => need(await openLane(name), "isPaused", caps.pause)(),
    stats: async (day) =>
      need(
        await openLane(name),
        "stats",
        caps.stats,
      )(day ?? new Date(clock.now()).toISOString().slice(0, 10)),
  };
}
