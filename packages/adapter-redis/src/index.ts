export {
  RedisOutOfMemoryError,
  RedisPermissionError,
  RedisReplicationError,
  RedisUnavailableError,
} from "./errors.ts";
export type { DurabilityOptions, RedisAdapter, RedisAdapterOptions } from "./redis-adapter.ts";
export { createRedisAdapter, redisCapabilities } from "./redis-adapter.ts";
export type { RedisLane } from "./redis-lane.ts";
export type { Library } from "./scripts.ts";
export { deleteStaleLibraries, LIBRARY } from "./scripts.ts";
export { VERSION } from "./version.ts";
