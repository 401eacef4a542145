import type { LaneStore, LaneStoreOptions, NewJob, ReserveResult } from "@tasklane/core/adapter";
import { createManualClock, createMemoryAdapter, type MemoryAdapterOptions } from "../src/index.ts";
import type { MemoryLaneImpl } from "../src/memory-lane.ts";

export const START = Date.UTC(2026, 0, 1);

/** A job for `put`, published at START unless told otherwise. */
export function job(id: string, extra: Partial<NewJob> = {}): NewJob {
  return {
    id,
    task: "t",
    payload: JSON.stringify({ id }),
    priority: 0,
    publishedAt: START,
    ...extra,
  };
}

/** A manual clock, an adapter on it and one lane. */
export async function setup(
  laneOptions: Partial<LaneStoreOptions> = {},
  adapterOptions: Omit<MemoryAdapterOptions, "clock"> = {},
) {
  const clock = createManualClock(START);
  const adapter = createMemoryAdapter({ clock, ...adapterOptions });
  const lane = await adapter.lane("q", { maxStalls: 1, historyLimit: 50, ...laneOptions });
  return { clock, adapter, lane };
}

/** Reserve without waiting. */
export const now = { limit: 100, leaseMs: 30_000, waitMs: 0 };

/** The conformance suites' `waitingPolls`: the lane's own list of waiting long polls. */
export const waitingPolls = async (lane: LaneStore): Promise<number> =>
  (lane as MemoryLaneImpl).waitingPolls;

/** Track a promise so a test can ask whether it settled yet. */
export function track(p: Promise<ReserveResult>) {
  const state: { result: ReserveResult | undefined } = { result: undefined };
  void p.then((r) => {
    state.result = r;
  });
  return state;
}

/** The error a call threw (or the rejection of the promise it returned). */
export async function errorOf(fn: () => unknown): Promise<Record<string, unknown>> {
  try {
    await fn();
  } catch (err) {
    return err as Record<string, unknown>;
  }
  throw new Error("expected an error");
}

/** GroupedReady's room: a group's free slots under a per-group concurrency `limit`. */
export const roomOf =
  (active: Map<string, number>, limit: number) =>
  (group: string): number =>
    limit - (active.get(group) ?? 0);
