/**
 * The Lua scripts: one file per script in ./lua, each prefixed with the parts of the shared
 * prelude (./lua/_common.lua) it uses. They reach the server in one of two forms:
 *
 * - functions (Redis 7+, Valkey): one library holding every script as a function
 *   (FUNCTION LOAD once per server, FCALL by name). The prelude's helpers are created once,
 *   when the library loads; a call only runs its script's per-call set-up (the prelude's
 *   `--{ ... --}` blocks: keys, arguments, TIME, the meta hash) and its body, not the
 *   closures an EVAL creates on every call (what that saves: DESIGN.md, "A function
 *   library").
 * - EVAL scripts (Redis 6.2, or where FUNCTION is refused): each script's whole source,
 *   its first line naming it with the package version, called by EVALSHA; a NOSCRIPT reply
 *   (SCRIPT FLUSH, a restarted or failed-over server) is answered by one EVAL.
 *
 * Names carry the package version and a hash of the code, so two versions of tasklane on
 * one server never share a script or a function.
 */
import { createHash } from "node:crypto";
import { existsSync, readFileSync } from "node:fs";
import { Cluster, Command, type Redis } from "ioredis";
import {
  isFunctionMissing,
  isLibraryMissing,
  isNoScript,
  isUnknownCommand,
  mapRedisError,
} from "./errors.ts";
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
  "schedule",
  "fire",
  "watch",
  "set-priority",
  "promote",
  "workers",
  "report",
  "move-out",
  "move-in",
  "move-done",
  "search",
  "failures",
  "flow",
  "link",
  "deliver",
] as const;

export type ScriptName = (typeof SCRIPT_NAMES)[number];

/**
 * Function flags (Redis 7). Under OOM (maxmemory reached, noeviction) a function without
 * `allow-oom` is refused whole: put then fails with nothing written, while every script a
 * worker or an operator needs to drain the lane runs (reserve, ack, ...). None is
 * read-only: get and probe, like every script, first apply the jobs that fell due and the
 * leases that ran out (see maintain() in lua/_common.lua).
 */
const FLAGS: Readonly<Record<ScriptName, readonly string[]>> = {
  put: [],
  reserve: ["allow-oom"],
  ack: ["allow-oom"],
  nack: ["allow-oom"],
  release: ["allow-oom"],
  extend: ["allow-oom"],
  cancel: ["allow-oom"],
  "retry-failed": ["allow-oom"],
  delete: ["allow-oom"],
  pause: ["allow-oom"],
  counts: ["allow-oom"],
  probe: ["allow-oom"],
  get: ["allow-oom"],
  // Schedules grow memory as puts do: refused whole under OOM.
  schedule: [],
  fire: [],
  watch: ["allow-oom"],
  "set-priority": ["allow-oom"],
  promote: ["allow-oom"],
  workers: ["allow-oom"],
  report: ["allow-oom"],
  "move-out": ["allow-oom"],
  "move-in": ["allow-oom"],
  "move-done": ["allow-oom"],
  search: ["allow-oom"],
  failures: ["allow-oom"],
  // flows (FLOWS in lua/_common.lua): flow stores jobs, as put does (refused under OOM);
  // link and deliver complete what a flow or a job's end began
  flow: [],
  link: ["allow-oom"],
  deliver: ["allow-oom"],
};

/**
 * What `allow-oom` is to a function, for the EVAL form: Redis refuses a script's
 * memory-growing command under OOM only while the script has not written yet, and a write
 * command counts even when it changes nothing (see _common.lua).
 */
const ALLOW_OOM = 'redis.call("HDEL", KM, "-") -- allow-oom (EVAL form)\n';

export interface Script {
  /** Versioned name, e.g. "tasklane@0.1.0:reserve". */
  name: string;
  /** The EVAL form: the whole script. */
  source: string;
  sha: string;
  /** The function's name in the library, e.g. "tasklane_0_1_0_<hash>_reserve". */
  fn: string;
}

export interface Library {
  /** e.g. "tasklane_0_1_0_<hash>": the version and a hash of the code. */
  name: string;
  /** FUNCTION LOAD's argument. */
  source: string;
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
  /** Its per-call blocks (`--{` ... `--}`), joined. */
  perCall: string;
}

const identifiers = (text: string): Set<string> => new Set(text.match(/[A-Za-z_]\w*/g) ?? []);

const PER_CALL = /^--\{\n([\s\S]*?)^--\}\n/gm;

/** Redis 6.2's opt-in to effects replication: EVAL form only (see _common.lua). */
const REPLICATE = /^pcall\(function\(\) redis\.replicate_commands\(\) end\)\n/m;

const perCallOf = (text: string): string =>
  [...text.matchAll(PER_CALL)].map((m) => m[1] ?? "").join("");

/** The prelude's head (always included) and its "--@" sections, in file order. */
export function splitPrelude(common: string): { head: Section; sections: Section[] } {
  const [head = "", ...parts] = common.split(/^--@\n/m);
  const section = (text: string): Section => {
    const names: string[] = [];
    for (const m of text.matchAll(/^(?:local function|function|local)\s+([\w, ]+)/gm)) {
      for (const name of (m[1] ?? "").split(",")) if (name.trim()) names.push(name.trim());
    }
    return { names, uses: identifiers(text), text, perCall: perCallOf(text) };
  };
  return { head: section(head), sections: parts.map(section) };
}

/**
 * The sections a body needs, directly or through another section, in file order (a
 * section refers only to earlier ones, or to forward-declared locals).
 */
function needed(body: string, prelude: ReturnType<typeof splitPrelude>): Section[] {
  const { head, sections } = prelude;
  const taken = new Set<number>();
  const pending = [identifiers(body), head.uses];
  for (let uses = pending.pop(); uses !== undefined; uses = pending.pop()) {
    sections.forEach((section, i) => {
      if (taken.has(i) || !section.names.some((name) => uses.has(name))) return;
      taken.add(i);
      pending.push(section.uses);
    });
  }
  return sections.filter((_, i) => taken.has(i));
}

/** The EVAL form's prelude: the head plus every section the body needs, in file order. */
export function assemble(
  common: string,
  body: string,
  prelude: ReturnType<typeof splitPrelude> = splitPrelude(common),
): string {
  return (
    prelude.head.text +
    needed(body, prelude)
      .map((section) => section.text)
      .join("")
  );
}

/** A Lua identifier from a name part ("retry-failed" -> "retry_failed"). */
const ident = (text: string) => text.replace(/\W/g, "_");

/**
 * The library: the whole prelude without its per-call blocks (helpers are created once,
 * at load), then per script a set-up function running the per-call blocks of the head and
 * of the sections the script needs (in file order, as in the EVAL form), and the script
 * registered as a function whose body runs after its set-up. KEYS and ARGV become locals
 * of the library that each call's set-up assigns (helpers such as lockIds read ARGV).
 */
function buildLibrary(
  bodies: ReadonlyArray<readonly [ScriptName, string]>,
  prelude: ReturnType<typeof splitPrelude>,
): Library {
  const strip = (text: string) => text.replace(PER_CALL, "").replace(REPLICATE, "");
  const parts = [
    "local KEYS, ARGV\n",
    strip(prelude.head.text),
    ...prelude.sections.map((section) => strip(section.text)),
    // The set-ups are fields of one table, not locals: Lua allows a function (the
    // library's main chunk) 200 locals, and the prelude's helpers take most of them.
    "local SET_UP = {}\n",
  ];
  const registrations: string[] = [];
  for (const [file, body] of bodies) {
    const setUp = `SET_UP.${ident(file)}`;
    const perCall = [prelude.head, ...needed(body, prelude)].map((s) => s.perCall).join("");
    parts.push(
      `${setUp} = function(keys, args)\nKEYS, ARGV = keys, args\n${perCall}end -- ${setUp}\n`,
    );
    const flags = FLAGS[file].map((flag) => `"${flag}"`).join(", ");
    registrations.push(
      `redis.register_function{function_name = LIBRARY_NAME .. "_${ident(file)}", flags = {${flags}}, callback = function(KEYS, ARGV)\n${setUp}(KEYS, ARGV)\n${body}\nend}\n`,
    );
  }
  const code = parts.join("") + registrations.join("");
  const name = `tasklane_${ident(VERSION)}_${createHash("sha1").update(code).digest("hex").slice(0, 12)}`;
  return {
    name,
    source: `#!lua name=${name}\n-- tasklane@${VERSION}\nlocal LIBRARY_NAME = "${name}"\n${code}`,
  };
}

function loadScripts(): { scripts: Record<ScriptName, Script>; library: Library } {
  const dir = luaDir();
  const common = readFileSync(new URL("_common.lua", dir), "utf8");
  const prelude = splitPrelude(common);
  const read = (file: string) => readFileSync(new URL(`${file}.lua`, dir), "utf8");
  // fire is a prologue (the schedule's compare-and-set) in front of put's body.
  const bodies = SCRIPT_NAMES.map(
    (file) => [file, file === "fire" ? `${read("fire")}\n${read("put")}` : read(file)] as const,
  );
  const library = buildLibrary(bodies, prelude);
  const scripts = {} as Record<ScriptName, Script>;
  for (const [file, body] of bodies) {
    const name = `tasklane@${VERSION}:${file}`;
    const allowOom = FLAGS[file].includes("allow-oom") ? ALLOW_OOM : "";
    const source = `-- ${name}\n${assemble(common, body, prelude)}\n${allowOom}${body}`;
    scripts[file] = {
      name,
      source,
      sha: createHash("sha1").update(source).digest("hex"),
      fn: `${library.name}_${ident(file)}`,
    };
  }
  return { scripts, library };
}

const loaded = loadScripts();

/** Loaded once per process. */
export const SCRIPTS: Readonly<Record<ScriptName, Script>> = loaded.scripts;

/** Every script as one function library (see above). */
export const LIBRARY: Readonly<Library> = loaded.library;

/** How an adapter runs scripts: decided when it starts (see RedisAdapterOptions.scripting). */
export type ScriptingMode = "functions" | "eval";

type Arg = string | number | Buffer;

/** The servers that hold data: each master of a Cluster, or the one server. */
export function masters(client: Redis | Cluster): Redis[] {
  return client instanceof Cluster ? client.nodes("master") : [client];
}

/**
 * FUNCTION LOAD the library on every master. "already exists" is success: the name holds
 * a hash of the code, so a library of that name is this one.
 */
export async function loadLibrary(client: Redis | Cluster): Promise<void> {
  await Promise.all(
    masters(client).map((node) =>
      node.call("FUNCTION", "LOAD", LIBRARY.source).catch((error: unknown) => {
        if (error instanceof Error && /already exists/i.test(error.message)) return;
        throw error;
      }),
    ),
  );
}

/**
 * Delete tasklane's function libraries of other versions and builds (every library whose
 * name starts with "tasklane_" but LIBRARY's) on every master the client reaches, and
 * return their names, sorted. A library persists and replicates like data, so each
 * upgrade (or change to the scripts) leaves the previous one behind, ~100 kB of source
 * and its compiled functions: run this once a deploy is done. It is safe while processes
 * of another version still run: a call that finds its library gone loads it again and
 * carries on (runScript), so the worst it costs them is one FUNCTION LOAD. Libraries not
 * named "tasklane_…" are left alone, and a server without functions (Redis 6.2) has none
 * to delete. The ACL user needs FUNCTION LIST and FUNCTION DELETE.
 */
export async function deleteStaleLibraries(client: Redis | Cluster): Promise<string[]> {
  const deleted = new Set<string>();
  await Promise.all(
    masters(client).map(async (node) => {
      let list: unknown[];
      try {
        list = (await node.call("FUNCTION", "LIST", "LIBRARYNAME", "tasklane_*")) as unknown[];
      } catch (error) {
        // Redis 6.2 has no functions, so no library to delete
        if (isUnknownCommand(error)) return;
        throw error;
      }
      for (const entry of list) {
        const name = libraryName(entry);
        if (name === undefined || !name.startsWith("tasklane_") || name === LIBRARY.name) continue;
        try {
          await node.call("FUNCTION", "DELETE", name);
          deleted.add(name);
        } catch (error) {
          // another process deleted it first
          if (!isLibraryMissing(error)) throw error;
        }
      }
    }),
  );
  return [...deleted].sort();
}

/** The name in one entry of FUNCTION LIST's reply (RESP2: a flat field/value array). */
function libraryName(entry: unknown): string | undefined {
  if (!Array.isArray(entry)) return undefined;
  const at = entry.indexOf("library_name");
  const name = at >= 0 ? entry[at + 1] : undefined;
  return typeof name === "string" ? name : undefined;
}

/**
 * One lane's calls of one script. What every call repeats (the command, the script's SHA
 * or function name, the key count, the keys and the lane's common arguments: ~20 of a
 * call's ~25 arguments) is encoded to RESP once per scripting mode; a call encodes only
 * its own arguments, into one buffer. ioredis's own methods encode every argument of
 * every call again by concatenating strings: in the bench's latency case (one job at a
 * time: put, reserve, ack) that made ~10 KB of the ~46 KB a job allocated in the process
 * (~37 KB since), the garbage whose collections pause it. The whole argument list still
 * goes with the command (a Cluster computes the slot from its keys; a debug log shows
 * it); only the bytes on the wire come from here.
 */
export class ScriptCall {
  readonly script: Script;
  readonly keys: readonly string[];
  /** Arguments every call carries before its own (the lane's common ones). */
  readonly fixed: readonly Arg[];
  private readonly heads: Partial<Record<ScriptingMode, Head>> = {};

  constructor(script: Script, keys: readonly string[], fixed: readonly Arg[] = []) {
    this.script = script;
    this.keys = keys;
    this.fixed = fixed;
  }

  /** One call in `mode`, no recovery (runCall recovers). */
  send(client: Redis | Cluster, mode: ScriptingMode, own: readonly Arg[]): Promise<unknown> {
    const options = client.options as { keyPrefix?: string; showFriendlyErrorStack?: boolean };
    const head = this.head(mode);
    // ioredis prefixes keys as it builds a command; only its own path knows how.
    if (options.keyPrefix) return client.call(head.name, ...head.args, ...own);
    const command = new EncodedCommand(
      head.name,
      head.args.concat(own),
      options.showFriendlyErrorStack ? new Error() : undefined,
      encodeCall(head.bytes, head.args.length + 1 + own.length, own),
    );
    client.sendCommand(command);
    return command.promise;
  }

  private head(mode: ScriptingMode): Head {
    let head = this.heads[mode];
    if (head === undefined) {
      const name: Head["name"] = mode === "functions" ? "fcall" : "evalsha";
      const args: Arg[] = [
        mode === "functions" ? this.script.fn : this.script.sha,
        String(this.keys.length),
        ...this.keys,
        ...this.fixed,
      ];
      head = { name, args, bytes: Buffer.concat([name, ...args].map(bulk)) };
      this.heads[mode] = head;
    }
    return head;
  }
}

/** A script call's fixed part in one scripting mode: the command, its arguments, their RESP. */
interface Head {
  name: "fcall" | "evalsha";
  args: Arg[];
  bytes: Buffer;
}

/** A command whose RESP bytes were encoded beforehand (see ScriptCall). */
class EncodedCommand extends Command {
  private readonly bytes: Buffer;

  constructor(name: string, args: Arg[], errorStack: Error | undefined, bytes: Buffer) {
    // "utf8": replies as strings, as ioredis's own evalsha()/fcall() return them
    super(
      name,
      args,
      errorStack ? { replyEncoding: "utf8", errorStack } : { replyEncoding: "utf8" },
    );
    this.bytes = bytes;
  }

  override toWritable(): Buffer {
    return this.bytes;
  }
}

const CRLF = Buffer.from("\r\n");

/** One RESP bulk string. */
function bulk(arg: Arg): Buffer {
  const bytes =
    typeof arg === "string"
      ? Buffer.from(arg)
      : Buffer.isBuffer(arg)
        ? arg
        : Buffer.from(String(arg));
  return Buffer.concat([Buffer.from(`$${bytes.length}\r\n`), bytes, CRLF]);
}

/** The array header, the encoded head, then each own argument as a bulk string. */
function encodeCall(head: Buffer, count: number, own: readonly Arg[]): Buffer {
  const lengths: number[] = [];
  let size = 3 + String(count).length + head.length;
  for (const arg of own) {
    const length =
      typeof arg === "string"
        ? Buffer.byteLength(arg)
        : typeof arg === "number"
          ? String(arg).length
          : arg.length;
    lengths.push(length);
    size += 5 + String(length).length + length;
  }
  const out = Buffer.allocUnsafe(size);
  let at = out.write(`*${count}\r\n`, 0, "latin1");
  at += head.copy(out, at);
  for (let i = 0; i < own.length; i++) {
    const arg = own[i] as Arg;
    const length = lengths[i] as number;
    at += out.write(`$${length}\r\n`, at, "latin1");
    if (typeof arg === "string") at += out.write(arg, at, length, "utf8");
    else if (typeof arg === "number") at += out.write(String(arg), at, "latin1");
    else at += arg.copy(out, at);
    at += out.write("\r\n", at, "latin1");
  }
  return out;
}

/**
 * Run a script, recovering from a server that lacks it (NOSCRIPT: EVAL it; a missing
 * function after FUNCTION FLUSH, a restart without persistence or a new Cluster node: load
 * the library and call again); errors mapped through the error table.
 */
export function runScript(
  client: Redis | Cluster,
  script: Script,
  keys: readonly string[],
  args: readonly Arg[],
  what: string,
  mode: ScriptingMode = "eval",
): Promise<unknown> {
  return runCall(client, new ScriptCall(script, keys), args, what, mode);
}

/** runScript for a lane's prepared call: `own` are the arguments after its fixed ones. */
export async function runCall(
  client: Redis | Cluster,
  call: ScriptCall,
  own: readonly Arg[],
  what: string,
  mode: ScriptingMode,
): Promise<unknown> {
  try {
    return await call.send(client, mode, own);
  } catch (error) {
    if (mode === "functions" ? !isFunctionMissing(error) : !isNoScript(error)) {
      throw mapRedisError(what, error);
    }
  }
  try {
    if (mode === "functions") {
      await loadLibrary(client);
      return await call.send(client, mode, own);
    }
    const { script, keys, fixed } = call;
    return await client.eval(script.source, keys.length, ...keys, ...fixed, ...own);
  } catch (error) {
    throw mapRedisError(what, error);
  }
}
