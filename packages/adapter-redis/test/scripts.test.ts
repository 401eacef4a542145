import { describe, expect, it } from "vitest";
import { assemble, SCRIPTS, splitPrelude } from "../src/scripts.ts";

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
    expect(head).toBe("local A = 1\n");
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
      for (const name of ["load", "flushRecords", "maintain", "flushStats", "infoJson"]) {
        if (new RegExp(`\\b${name}\\(`).test(script.source)) {
          expect(defined.has(name), `${script.name} defines ${name}`).toBe(true);
        }
      }
    }
    // a one-job ack needs far less than the whole prelude
    expect(SCRIPTS.ack.source).not.toMatch(/local function infoJson/);
    expect(SCRIPTS.get.source).not.toMatch(/local function maintain/);
  });
});
