/** tasklane on the in-process memory adapter (compared with bare p-queue). */
import { createMemoryAdapter } from "@tasklane/adapter-memory";
import type { BenchSystem } from "../types.ts";
import { tasklaneSystem } from "./tasklane-common.ts";

export const system: BenchSystem = {
  async setup(env) {
    return tasklaneSystem(createMemoryAdapter(), env.queueName);
  },
};
