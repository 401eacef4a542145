/**
 * The Lua scripts: one file per script in ./lua, each prefixed with the shared prelude
 * (./lua/_common.lua) and a first line naming it with the package version, so two
 * versions of tasklane on one server never share a SHA. Scripts are called by EVALSHA;
 * a NOSCRIPT reply (first use on a node, SCRIPT FLUSH, a restarted or failed-over server)
 * is answered by one EVAL, which also caches the script again.
 */
import { createHash } from "node:crypto";
import { existsSync, readFileSync } from "node:fs";
import type { Cluster, Redis } from "ioredis";
import { isNoScript, mapRedisError } from "./errors.ts";
import { VERSION } from "./version.ts";

export const SCRIPT_NAMES = [
  "put",
  "reserve",
  "ack",
  "nack",
  "release",
  "extend",
  "cancel",
  "retry-failed",
  "delete",
  "pause",
  "counts",
  "probe",
  "get",
  "list",
] as const;

export type ScriptName = (typeof SCRIPT_NAMES)[number];

export interface Script {
  /** Versioned name, e.g. "tasklane@0.1.0:reserve". */
  name: string;
  source: string;
  sha: string;
}

function luaDir(): URL {
  // Sources run directly (src/lua); a build (dist/) reads the shipped src/lua.
  const here = new URL("./lua/", import.meta.url);
  if (existsSync(new URL("_common.lua", here))) return here;
  return new URL("../src/lua/", import.meta.url);
}

function loadScripts(): Record<ScriptName, Script> {
  const dir = luaDir();
  const common = readFileSync(new URL("_common.lua", dir), "utf8");
  const out = {} as Record<ScriptName, Script>;
  for (const file of SCRIPT_NAMES) {
    const name = `tasklane@${VERSION}:${file}`;
    const body = readFileSync(new URL(`${file}.lua`, dir), "utf8");
    const source = `-- ${name}\n${common}\n${body}`;
    out[file] = { name, source, sha: createHash("sha1").update(source).digest("hex") };
  }
  return out;
}

/** Loaded once per process. */
export const SCRIPTS: Readonly<Record<ScriptName, Script>> = loadScripts();

type Arg = string | number;

/** Run a script by SHA, recovering from NOSCRIPT; errors mapped through the error table. */
export async function runScript(
  client: Redis | Cluster,
  script: Script,
  keys: readonly string[],
  args: readonly Arg[],
  what: string,
): Promise<unknown> {
  try {
    return await client.evalsha(script.sha, keys.length, ...keys, ...args);
  } catch (error) {
    if (!isNoScript(error)) throw mapRedisError(what, error);
  }
  try {
    return await client.eval(script.source, keys.length, ...keys, ...args);
  } catch (error) {
    throw mapRedisError(what, error);
  }
}
