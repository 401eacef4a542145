import { randomUUID } from "node:crypto";
import { systemClock } from "@tasklane/core";
import type {
  Adapter,
  Capabilities,
  Clock,
  LaneStore,
  LaneStoreOptions,
  NewJob,
} from "@tasklane/core/adapter";
import type { ConformanceOptions } from "./options.ts";

/** What every conformance test gets. */
export interface Harness {
  adapter: Adapter;
  caps: Capabilities;
  /** The smallest duration the suite uses, ms: a short lease on this backend. */
  unit: number;
  clock: Clock;
  now(): number;
  /** Let `ms` pass (manual clock: instantly; real backends: a real wait). */
  pass(ms: number): Promise<void>;
  /** Poll `check` until it returns a truthy value, letting time pass between tries. */
  waitFor<T>(
    check: () => Promise<T | undefined | false> | T | undefined | false,
    what: string,
    timeoutMs?: number,
  ): Promise<T>;
  /** A fresh lane under a unique name. */
  freshLane(options?: Partial<LaneStoreOptions>): Promise<LaneStore>;
  /** A unique name (for lanes, namespaces). */
  uniqueName(prefix?: string): string;
  /** A job ready to put. */
  job(overrides?: Partial<NewJob>): NewJob;
  /** Reserve until `count` jobs were taken (several calls on backends that return fewer). */
  reserveAll(
    lane: LaneStore,
    count: number,
    leaseMs: number,
  ): Promise<import("@tasklane/core/adapter").ReservedJob[]>;
}

export async function createHarness(options: ConformanceOptions): Promise<Harness> {
  const adapter = await options.createAdapter();
  const caps = adapter.capabilities;
  const manual = options.advance !== undefined;
  // Real backends need leases long enough to survive a round trip and their resolution.
  const unit = manual ? 1_000 : Math.max(caps.timeResolutionMs, 400);
  const now = options.now ?? (() => Date.now());
  const clock = options.clock ?? systemClock;
  const pass = async (ms: number) => {
    if (options.advance) await options.advance(ms);
    else await new Promise((r) => setTimeout(r, ms));
  };
  let seq = 0;
  const uniqueName = (prefix = "q") => `${prefix}-${randomUUID().slice(0, 8)}-${++seq}`;

  const waitFor: Harness["waitFor"] = async (check, what, timeoutMs = 30 * unit + 10_000) => {
    const step = manual ? Math.max(1, Math.floor(unit / 10)) : 25;
    let waited = 0;
    for (;;) {
      const value = await check();
      if (value) return value;
      if (waited >= timeoutMs) throw new Error(`Timed out after ${waited} ms waiting for ${what}`);
      await pass(step);
      waited += step;
    }
  };

  return {
    adapter,
    caps,
    unit,
    clock,
    now,
    pass,
    waitFor,
    uniqueName,
    freshLane: (overrides = {}) =>
      adapter.lane(uniqueName(), { maxStalls: 3, historyLimit: 20, ...overrides }),
    job: (overrides = {}) => ({
      id: randomUUID(),
      task: "conformance",
      payload: JSON.stringify({ n: seq++ }),
      priority: 0,
      publishedAt: now(),
      ...overrides,
    }),
    async reserveAll(lane, count, leaseMs) {
      const taken: import("@tasklane/core/adapter").ReservedJob[] = [];
      await waitFor(async () => {
        const r = await lane.reserve({
          limit: Math.min(count - taken.length, caps.maxBatch),
          leaseMs,
          waitMs: 0,
        });
        taken.push(...r.jobs);
        return taken.length >= count;
      }, `${count} jobs to be reserved`);
      return taken;
    },
  };
}
