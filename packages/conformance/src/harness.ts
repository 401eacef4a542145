import { randomUUID } from "node:crypto";
import { createTasklane, systemClock, type Tasklane, type TasklaneOptions } from "@tasklane/core";
import type {
  Adapter,
  Capabilities,
  Clock,
  LaneStore,
  LaneStoreOptions,
  NewJob,
  ReservedJob,
  ReserveOptions,
  ReserveResult,
} from "@tasklane/core/adapter";
import type { ConformanceOptions } from "./options.ts";

/** The capabilities that say whether an adapter can do something (not its limits). */
export type CapabilityFlag = {
  [K in keyof Capabilities]-?: NonNullable<Capabilities[K]> extends boolean ? K : never;
}[keyof Capabilities];

/** The LaneStore methods an adapter may leave out, by capability. */
export type OptionalLaneMethod =
  | "get"
  | "list"
  | "cancel"
  | "retryFailed"
  | "delete"
  | "pause"
  | "resume"
  | "isPaused"
  | "stats"
  | "setPriority"
  | "promote";

/** The adapter's subscribe, bound; fails the test when the capability has no method. */
export function subscribeOf(adapter: Adapter): NonNullable<Adapter["subscribe"]> {
  const fn = adapter.subscribe;
  if (typeof fn !== "function") {
    throw new Error(`adapter "${adapter.name}" has no subscribe() although it declares it`);
  }
  return fn.bind(adapter);
}

/** What a test needs of vitest's test context to skip itself. */
export interface SkipContext {
  skip(note?: string): never;
}

/**
 * Skip the test, naming the capability, unless the adapter declares every one of `flags`.
 * Never a silent `return`: a test of something the adapter cannot do is reported skipped.
 */
export function need(caps: Capabilities, ctx: SkipContext, ...flags: CapabilityFlag[]): void {
  const missing = flags.filter((flag) => !caps[flag]);
  if (missing.length > 0) ctx.skip(`adapter lacks capability ${missing.join(", ")}`);
}

/**
 * The optional method `name` of `lane`, bound. An adapter that declares the capability but
 * has no such method fails the test here (it would otherwise pass by doing nothing).
 */
export function method<K extends OptionalLaneMethod>(
  lane: LaneStore,
  name: K,
): NonNullable<LaneStore[K]> {
  const fn = lane[name];
  if (typeof fn !== "function") {
    throw new Error(
      `lane "${lane.name}" has no ${name}() although its adapter declares the capability`,
    );
  }
  return (fn as (...args: unknown[]) => unknown).bind(lane) as NonNullable<LaneStore[K]>;
}

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
  /** How many reserves wait in a long poll now (see ConformanceOptions.waitingPolls). */
  waitingPolls(lane: LaneStore): Promise<number>;
  /**
   * Start `reserve` as a long poll on `lane` and resolve once the backend shows it
   * waiting (a count of waiting polls above the one before it was sent), with the
   * pending reserve and that count before it. Throws when the reserve returns without
   * having waited.
   */
  pollUntilWaiting(
    lane: LaneStore,
    options: ReserveOptions,
  ): Promise<{ poll: Promise<ReserveResult>; before: number }>;
  /** A fresh lane under a unique name. */
  freshLane(options?: Partial<LaneStoreOptions>): Promise<LaneStore>;
  /** A unique name (for lanes, namespaces). */
  uniqueName(prefix?: string): string;
  /**
   * A client on the harness's adapter and clock, in a namespace of its own, that leaves
   * the adapter open when it closes (the test closes the client).
   */
  client(
    options: Omit<TasklaneOptions, "adapter" | "clock" | "namespace" | "closeAdapter">,
  ): Tasklane;
  /** A job ready to put. */
  job(overrides?: Partial<NewJob>): NewJob;
  /** Reserve until `count` jobs were taken (several calls on backends that return fewer). */
  reserveAll(lane: LaneStore, count: number, leaseMs: number): Promise<ReservedJob[]>;
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

  const waitingPolls = (lane: LaneStore) => options.waitingPolls(lane);

  return {
    adapter,
    caps,
    unit,
    clock,
    now,
    pass,
    waitFor,
    uniqueName,
    waitingPolls,
    async pollUntilWaiting(lane, reserveOptions) {
      const before = await waitingPolls(lane);
      const poll = lane.reserve(reserveOptions);
      // A poll that returns before it was seen waiting (nothing is due) did not wait.
      let ended = false;
      poll.then(
        () => {
          ended = true;
        },
        () => {
          ended = true;
        },
      );
      // Another test's poll that is still being let go may leave while ours arrives: count
      // from the lowest reading since.
      let low = before;
      const seen = await waitFor(
        async () => {
          if (ended) return "ended";
          const n = await waitingPolls(lane);
          low = Math.min(low, n);
          return n > low && "waiting";
        },
        "the long poll to wait on the backend",
        Math.min(reserveOptions.waitMs, 10 * unit),
      );
      if (seen === "ended") {
        const { jobs } = await poll;
        throw new Error(
          `a long poll of ${reserveOptions.waitMs} ms returned ${jobs.length} jobs without waiting`,
        );
      }
      return { poll, before: low };
    },
    client: (clientOptions) =>
      createTasklane({
        adapter,
        closeAdapter: false,
        clock,
        namespace: uniqueName("ns").replace(/[^A-Za-z0-9_-]/g, ""),
        ...clientOptions,
      }),
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
      const taken: ReservedJob[] = [];
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
