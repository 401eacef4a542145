/**
 * The behaviour every tasklane adapter promises, as one vitest suite.
 *
 * An adapter's test file is a few lines:
 *
 *   import { runConformanceSuite } from "@tasklane/conformance";
 *   runConformanceSuite({ name: "memory", createAdapter: async () => createMemoryAdapter() });
 *
 * Every test opens its own lane under a unique name, so tests never see each other's
 * jobs. Optional behaviour is skipped only through what the adapter declares in
 * `capabilities`. Time passes through `advance` (a manual clock) when given; otherwise the
 * suite waits in real time with short leases, polling instead of sleeping where it can.
 */
import type { Adapter } from "@tasklane/core";
import { afterAll, beforeAll, describe } from "vitest";
import { createHarness, type Harness } from "./harness.ts";
import { registerLaneTests } from "./lane-tests.ts";
import { registerWorkerTests } from "./worker-tests.ts";

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
  clock?: import("@tasklane/core").Clock;
}

export type { Harness };

export function runConformanceSuite(options: ConformanceOptions): void {
  describe(`conformance: ${options.name}`, { timeout: 120_000 }, () => {
    const box: { h?: Harness } = {};
    beforeAll(async () => {
      box.h = await createHarness(options);
    });
    afterAll(async () => {
      await box.h?.adapter.close();
    });
    const harness = (): Harness => {
      if (!box.h) throw new Error("conformance harness not ready");
      return box.h;
    };
    registerLaneTests(harness, options);
    registerWorkerTests(harness, options);
  });
}
