/**
 * The Lua scripts: one file per script in ./lua, each prefixed with the parts of the shared
 * prelude (./lua/_common.lua) it uses and a first line naming it with the package version,
 * so two versions of tasklane on one server never share a SHA. Scripts are called by EVALSHA;
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

interface Section {
  /** The section's top-level locals (functions included). */
  names: string[];
  /** Every identifier in its text. */
  uses: Set<string>;
  text: string;
}

const identifiers = (text: string): Set<string> => new Set(text.match(/[A-Za-z_]\w*/g) ?? []);

/** The prelude's head (always included) and its "--@" sections, in file order. */
export function splitPrelude(common: string): { head: string; sections: Section[] } {
  const [head = "", ...parts] = common.split(/^--@\n/m);
  const sections = parts.map((text) => {
    const names: string[] = [];
    for (const m of text.matchAll(/^(?:local function|function|local)\s+([\w, ]+)/gm)) {
      for (const name of (m[1] ?? "").split(",")) if (name.trim()) names.push(name.trim());
    }
    return { names, uses: identifiers(text), text };
  });
  return { head, sections };
}

/**
 * The head plus every section the body needs, directly or through another section, in
 * file order (a section refers only to earlier ones, or to forward-declared locals).
 */
export function assemble(
  common: string,
  body: string,
  prelude: ReturnType<typeof splitPrelude> = splitPrelude(common),
): string {
  const { head, sections } = prelude;
  const taken = new Set<number>();
  const pending = [identifiers(body), identifiers(head)];
  for (let uses = pending.pop(); uses !== undefined; uses = pending.pop()) {
    sections.forEach((section, i) => {
      if (taken.has(i) || !section.names.some((name) => uses.has(name))) return;
      taken.add(i);
      pending.push(section.uses);
    });
  }
  return (
    head +
    sections
      .filter((_, i) => taken.has(i))
      .map((section) => section.text)
      .join("")
  );
}

function loadScripts(): Record<ScriptName, Script> {
  const dir = luaDir();
  const common = readFileSync(new URL("_common.lua", dir), "utf8");
  const prelude = splitPrelude(common);
  const out = {} as Record<ScriptName, Script>;
  for (const file of SCRIPT_NAMES) {
    const name = `tasklane@${VERSION}:${file}`;
    const body = readFileSync(new URL(`${file}.lua`, dir), "utf8");
    const source = `-- ${name}\n${assemble(common, body, prelude)}\n${body}`;
    out[file] = { name, source, sha: createHash("sha1").update(source).digest("hex") };
  }
  return out;
}

/** Loaded once per process. */
export const SCRIPTS: Readonly<Record<ScriptName, Script>> = loadScripts();

type Arg = string | number | Buffer;

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
