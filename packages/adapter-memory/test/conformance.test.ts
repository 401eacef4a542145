import { createManualClock, createMemoryAdapter } from "@tasklane/adapter-memory";
import { runConformanceSuite } from "@tasklane/conformance";
import { waitingPolls } from "./helpers.ts";

// Virtual time: every lease, delay and backoff happens instantly. (The same suite on the
// system clock is conformance-system-clock.test.ts.)
const clock = createManualClock();
runConformanceSuite({
  name: "memory (manual clock)",
  createAdapter: async () => createMemoryAdapter({ clock }),
  advance: (ms) => clock.advance(ms),
  now: () => clock.now(),
  clock,
  waitingPolls,
});
