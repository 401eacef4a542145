/**
 * Not public API; for this repository's benchmarks and tests; may change in any release.
 */
export { decodeId, encodeId } from "./id-codec.ts";
export { eventsChannel, laneKeys } from "./keys.ts";
export type { Script, ScriptingMode, ScriptName } from "./scripts.ts";
export { SCRIPT_NAMES, SCRIPTS } from "./scripts.ts";
