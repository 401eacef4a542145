export { createManualClock, type ManualClock } from "@tasklane/core";
export {
  createMemoryAdapter,
  type MemoryAdapter,
  type MemoryAdapterOptions,
  memoryCapabilities,
} from "./memory-adapter.ts";
export type { MemoryLane } from "./memory-lane.ts";
