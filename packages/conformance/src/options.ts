import type { Adapter, Clock } from "@tasklane/core";

/** What `runConformanceSuite` takes: the adapter under test and how its time passes. */
export interface ConformanceOptions {
  /** Title of the top-level describe block, e.g. "redis". */
  name: string;
  /**
   * Make a fresh adapter. Called once per suite (beforeAll) and again by the tests that
   * close an adapter. Every test opens its own lane under a unique name.
   */
  createAdapter(): Promise<Adapter>;
  /**
   * Move the adapter's time forward by `ms`. Given for adapters on a manual clock (memory);
   * omitted for real backends, where the suite waits in real time with short leases.
   */
  advance?(ms: number): Promise<void>;
  /** Time source matching the adapter's clock, epoch ms. Default Date.now. */
  now?(): number;
  /** The clock to hand to createTasklane in worker tests (the adapter's manual clock). */
  clock?: Clock;
}
