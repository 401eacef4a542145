import { createManualClock, createMemoryAdapter } from "@tasklane/adapter-memory";
import { runConformanceSuite } from "@tasklane/conformance";
import type { LaneStore } from "@tasklane/core/adapter";
import type { MemoryLaneImpl } from "../src/memory-lane.ts";

/** The lane's own list of waiting long polls (the memory adapter's lanes are MemoryLaneImpl). */
const waitingPolls = async (lane: LaneStore) => (lane as MemoryLaneImpl).waitingPolls;

// Real time: the memory adapter on the system clock, as an embedded service uses it.
runConformanceSuite({
  name: "memory (system clock)",
  createAdapter: async () => createMemoryAdapter(),
  waitingPolls,
});

// Virtual time: every lease, delay and backoff happens instantly.
const clock = createManualClock();
runConformanceSuite({
  name: "memory (manual clock)",
  createAdapter: async () => createMemoryAdapter({ clock }),
  advance: (ms) => clock.advance(ms),
  now: () => clock.now(),
  clock,
  waitingPolls,
});
