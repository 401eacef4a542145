import { createManualClock, createMemoryAdapter } from "@tasklane/adapter-memory";
import { runConformanceSuite } from "@tasklane/conformance";

// Real time: the memory adapter on the system clock, as an embedded service uses it.
runConformanceSuite({
  name: "memory (system clock)",
  createAdapter: async () => createMemoryAdapter(),
});

// Virtual time: every lease, delay and backoff happens instantly.
const clock = createManualClock();
runConformanceSuite({
  name: "memory (manual clock)",
  createAdapter: async () => createMemoryAdapter({ clock }),
  advance: (ms) => clock.advance(ms),
  now: () => clock.now(),
  clock,
});
