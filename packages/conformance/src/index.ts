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
import { afterAll, beforeAll, describe } from "vitest";
import { registerContractTests } from "./contract-tests.ts";
import { registerDebounceTests } from "./debounce-tests.ts";
import { registerFlowTests } from "./flow-tests.ts";
import { registerGroupRateLimitTests } from "./group-rate-limit-tests.ts";
import { registerGroupTests } from "./group-tests.ts";
import { registerGroupedRateLimitTests } from "./grouped-rate-limit-tests.ts";
import { createHarness, type Harness } from "./harness.ts";
import { registerLaneTests } from "./lane-tests.ts";
import { type KnownDefect, type ModelSuiteOptions, runModelSuite } from "./model-suite.ts";
import { registerOperatorTests } from "./operator-tests.ts";
import type { ConformanceOptions } from "./options.ts";
import { mostStartsInAWindow, registerRateLimitTests } from "./rate-limit-tests.ts";
import { registerRetryAfterTests } from "./retry-after-tests.ts";
import { registerScheduleTests } from "./schedule-tests.ts";
import { registerTraceContextTests } from "./trace-context-tests.ts";
import { registerWorkerFaultTests } from "./worker-fault-tests.ts";
import { registerWorkerTests } from "./worker-tests.ts";

export type { ConformanceOptions, Harness, KnownDefect, ModelSuiteOptions };
export { mostStartsInAWindow, runModelSuite };

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
    registerWorkerFaultTests(harness, options);
    registerTraceContextTests(harness);
    registerOperatorTests(harness, options);
    registerContractTests(harness, options);
    registerScheduleTests(harness, options);
    registerRetryAfterTests(harness, options);
    registerGroupTests(harness, options);
    registerRateLimitTests(harness, options);
    registerDebounceTests(harness, options);
    registerGroupedRateLimitTests(harness, options);
    registerGroupRateLimitTests(harness, options);
    registerFlowTests(harness, options);
  });
}
