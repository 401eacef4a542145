// Placeholder: the suite itself is being written. The exported shape below is stable.
import type { Adapter } from "@tasklane/core";

export interface ConformanceOptions {
  /** Title of the top-level describe block, e.g. "redis". */
  name: string;
  /**
   * Make a fresh adapter. Called once per test file (beforeAll); every test opens its own
   * queue under a unique name, so tests never see each other's jobs.
   */
  createAdapter(): Promise<Adapter>;
  /**
   * Move the adapter's time forward by `ms`. Given for adapters on a manual clock (memory);
   * omitted for real backends, where the suite waits in real time with short leases.
   */
  advance?(ms: number): Promise<void>;
  /** Time source matching the adapter's clock. Default Date.now. */
  now?(): number;
}

export function runConformanceSuite(_options: ConformanceOptions): void {
  throw new Error("conformance suite not written yet");
}
