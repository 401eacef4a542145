import { execFileSync } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { cpus, loadavg, totalmem } from "node:os";
import { dirname, join } from "node:path";

/** bench/ (this file is bench/src/machine.ts). */
export const BENCH_DIR = join(import.meta.dirname, "..");
/** The repository root (bench's parent). */
export const REPO_DIR = dirname(BENCH_DIR);
/**
 * Where runs write by default: bench/out/, git-ignored, so trying something never touches
 * the committed results.
 */
export const OUT_DIR = join(BENCH_DIR, "out");
/** The committed reference results, written only by an explicit `--save`. */
export const REFERENCE_DIR = join(BENCH_DIR, "results");

/** Installed version of a package, looked up in bench/node_modules then the root's. */
export function packageVersion(name: string): string {
  for (const base of [BENCH_DIR, REPO_DIR]) {
    const file = join(base, "node_modules", name, "package.json");
    if (existsSync(file)) {
      return (JSON.parse(readFileSync(file, "utf8")) as { version: string }).version;
    }
  }
  return "missing";
}

export interface MachineInfo {
  cores: number;
  cpuModel: string;
  memoryGiB: number;
  loadAverage: number[];
  node: string;
  commit: string;
}

export function machineInfo(): MachineInfo {
  const cpuList = cpus();
  let commit = "unknown";
  try {
    commit = execFileSync("git", ["rev-parse", "--short", "HEAD"], {
      cwd: REPO_DIR,
      encoding: "utf8",
      stdio: ["ignore", "pipe", "ignore"],
    }).trim();
  } catch {
    // not a git checkout
  }
  return {
    cores: cpuList.length,
    cpuModel: cpuList[0]?.model.trim() ?? "unknown",
    memoryGiB: Math.round((totalmem() / 2 ** 30) * 10) / 10,
    loadAverage: loadavg().map((value) => Math.round(value * 100) / 100),
    node: process.version,
    commit,
  };
}
