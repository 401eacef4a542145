export {
  RedisOutOfMemoryError,
  RedisPermissionError,
  RedisUnavailableError,
} from "./errors.ts";
export { decodeId, encodeId } from "./id-codec.ts";
export { eventsChannel, laneKeys } from "./keys.ts";
export type { RedisAdapter, RedisAdapterOptions } from "./redis-adapter.ts";
export { createRedisAdapter, redisCapabilities } from "./redis-adapter.ts";
export type { RedisLane } from "./redis-lane.ts";
export type { Library, Script, ScriptingMode, ScriptName } from "./scripts.ts";
export { deleteStaleLibraries, LIBRARY, SCRIPT_NAMES, SCRIPTS } from "./scripts.ts";
export { VERSION } from "./version.ts";
