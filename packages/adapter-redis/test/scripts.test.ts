import { describe, expect, it } from "vitest";
import { assemble, LIBRARY, SCRIPT_NAMES, SCRIPTS, splitPrelude } from "../src/scripts.ts";

const COMMON = [
  "local A = 1",
  "--@",
  "local function one() return A end",
  "--@",
  "local function two() return one() end",
  "--@",
  "local three, four = 3, 4",
  "",
].join("\n");

describe("prelude sections", () => {
  it("finds each section's top-level locals", () => {
    const { head, sections } = splitPrelude(COMMON);
    expect(head.text).toBe("local A = 1\n");
    expect(sections.map((s) => s.names)).toEqual([["one"], ["two"], ["three", "four"]]);
  });

  it("takes what a body names, what those sections name in turn, in file order", () => {
    expect(assemble(COMMON, "return two()")).toBe(
      "local A = 1\nlocal function one() return A end\nlocal function two() return one() end\n",
    );
    expect(assemble(COMMON, "return four")).toBe("local A = 1\nlocal three, four = 3, 4\n");
    expect(assemble(COMMON, "return 1")).toBe("local A = 1\n");
  });

  it("gives every script every prelude local it names", () => {
    for (const script of Object.values(SCRIPTS)) {
      const defined = new Set(
        [...script.source.matchAll(/^(?:local function|function|local)\s+([\w, ]+)/gm)].flatMap(
          (m) => (m[1] ?? "").split(",").map((n) => n.trim()),
        ),
      );
      for (const name of [
        "load",
        "flushRecords",
        "maintain",
        "maintainNow",
        "makeWaiting",
        "flushStats",
        "infoJson",
      ]) {
        if (new RegExp(`\\b${name}\\(`).test(script.source)) {
          expect(defined.has(name), `${script.name} defines ${name}`).toBe(true);
        }
      }
    }
    // a one-job ack needs far less than the whole prelude
    expect(SCRIPTS.ack.source).not.toMatch(/local function infoJson/);
    expect(SCRIPTS.extend.source).not.toMatch(/local function maintain/);
  });
});

describe("the function library", () => {
  it("registers every script under the library's name, put alone without allow-oom", () => {
    expect(LIBRARY.source.startsWith(`#!lua name=${LIBRARY.name}\n`)).toBe(true);
    const registered = [
      ...LIBRARY.source.matchAll(
        /function_name = LIBRARY_NAME \.\. "_(\w+)", flags = \{([^}]*)\}/g,
      ),
    ].map((m) => [m[1], m[2]]);
    expect(registered.map(([name]) => name)).toEqual(SCRIPT_NAMES.map((n) => n.replace("-", "_")));
    const flags = Object.fromEntries(registered);
    expect(flags.put).toBe("");
    expect(flags.reserve).toBe('"allow-oom"');
    // get and probe apply due jobs and expired leases first: they write
    expect(flags.get).toBe('"allow-oom"');
    for (const script of Object.values(SCRIPTS)) {
      expect(script.fn.startsWith(`${LIBRARY.name}_`)).toBe(true);
    }
  });

  it("moves per-call set-up into each script's set-up function, none of it at load", () => {
    const { head, sections } = splitPrelude(
      [
        "local A, B",
        "--{",
        "A = KEYS[1]",
        "--}",
        "--@",
        "local C",
        "--{",
        "C = {}",
        "--}",
        "",
      ].join("\n"),
    );
    expect(head.perCall).toBe("A = KEYS[1]\n");
    expect(sections[0]?.perCall).toBe("C = {}\n");
    // the library's load runs without string, math or redis.call (FUNCTION LOAD's sandbox)
    const load = LIBRARY.source.replace(
      /^(SET_UP\.\w+) = function\(keys, args\)\n[\s\S]*?^end -- \1\n/gm,
      "",
    );
    expect(load).not.toMatch(/redis\.call\("TIME"\)/);
    expect(load).not.toMatch(/^meta = \{\}/m);
    expect(load).not.toMatch(/replicate_commands/);
    expect(LIBRARY.source).toMatch(
      /^SET_UP\.reserve = function\(keys, args\)\n[\s\S]*redis\.call\("TIME"\)/m,
    );
    // the EVAL form keeps its set-up inline, and its opt-in to effects replication
    expect(SCRIPTS.reserve.source).toMatch(/replicate_commands/);
    expect(SCRIPTS.put.source).not.toMatch(/allow-oom \(EVAL form\)/);
    expect(SCRIPTS.ack.source).toMatch(/allow-oom \(EVAL form\)/);
  });
});
