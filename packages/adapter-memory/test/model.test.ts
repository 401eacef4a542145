import { createManualClock, createMemoryAdapter } from "@tasklane/adapter-memory";
import { runModelSuite } from "@tasklane/conformance";

// The lane-store contract against its reference model, on a manual clock: time moves as a
// command, so leases run out and delayed jobs fall due mid-sequence, exactly.
const clock = createManualClock();
runModelSuite({
  name: "memory (manual clock)",
  createAdapter: async () => createMemoryAdapter({ clock }),
  advance: (ms) => clock.advance(ms),
  now: () => clock.now(),
  timeoutMs: 300_000,
});
