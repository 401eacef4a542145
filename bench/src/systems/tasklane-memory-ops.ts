/**
 * tasklane on the memory adapter with the operator features in use on every job: two
 * tags and an expiry at publish, a result and one progress report from the handler.
 * Beside tasklane-memory, it shows what they cost per job.
 */
import { createMemoryAdapter } from "@tasklane/adapter-memory";
import type { BenchSystem } from "../types.ts";
import { tasklaneSystem } from "./tasklane-common.ts";

export const system: BenchSystem = {
  async setup(env) {
    return tasklaneSystem(createMemoryAdapter(), env.queueName, undefined, {
      tags: ["bench", "customer:42"],
      expiresInMs: 3_600_000,
      resultAndProgress: true,
    });
  },
};
