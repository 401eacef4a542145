import type { NewJob, QueueOptions } from "@tasklane/core";
import { createManualClock, createMemoryAdapter, type MemoryAdapterOptions } from "../src/index.ts";

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

/** A manual clock, an adapter on it and one queue. */
export async function setup(
  queueOptions: Partial<QueueOptions> = {},
  adapterOptions: Omit<MemoryAdapterOptions, "clock"> = {},
) {
  const clock = createManualClock(START);
  const adapter = createMemoryAdapter({ clock, ...adapterOptions });
  const queue = await adapter.queue("q", { maxStalls: 1, historyLimit: 50, ...queueOptions });
  return { clock, adapter, queue };
}

/** Reserve without waiting. */
export const now = { limit: 100, leaseMs: 30_000, waitMs: 0 };
