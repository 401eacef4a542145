import { createMemoryAdapter } from "@tasklane/adapter-memory";
import { runConformanceSuite } from "@tasklane/conformance";
import { waitingPolls } from "./helpers.ts";

// Real time: the memory adapter on the system clock, as an embedded service uses it.
runConformanceSuite({
  name: "memory (system clock)",
  createAdapter: async () => createMemoryAdapter(),
  waitingPolls,
});
