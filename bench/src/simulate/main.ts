/**
 * The selector simulator: `npm run simulate -- [--seed N] [--workload NAME] [--duration S]
 * [--selectors a,b] [--backend sqs|exact] [--out DIR]`. See README.md in this folder.
 */
import { mkdir, writeFile } from "node:fs/promises";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { isSelectorName, SELECTOR_NAMES } from "@tasklane/core";
import { renderWaitChart } from "./chart.ts";
import { type RunResult, simulate } from "./engine.ts";
import type { BackendKind, SimulationOptions } from "./model.ts";
import { formatTable } from "./report.ts";
import { workloads } from "./workloads.ts";

const usage = `Usage: npm run simulate -- [options]
  --seed N           seed of every random stream (default 1)
  --workload NAME    one workload, or "all" (default all): ${workloads(1)
    .map((w) => w.name)
    .join(", ")}
  --duration S       simulated seconds per run (default 600)
  --selectors LIST   comma-separated selector names (default all): ${SELECTOR_NAMES.join(", ")}
  --backend KIND     "sqs" (a reserve returns no ready count; default) or "exact" (memory, Redis)
  --request-ms MS    round trip of one backend request (default 10)
  --hint-ttl-ms MS   how long the worker trusts a ready count (default 1000, as the worker)
  --out DIR          where selectors.json and selectors.svg go (default bench/results)
  --help`;

function fail(message: string): never {
  console.error(`${message}\n\n${usage}`);
  process.exit(2);
}

function positive(
  name: string,
  text: string | undefined,
  fallback: number,
  integer = false,
): number {
  if (text === undefined) return fallback;
  const value = Number(text);
  if (!Number.isFinite(value) || value < 0 || (integer && !Number.isInteger(value))) {
    fail(
      `--${name} must be a ${integer ? "non-negative integer" : "non-negative number"}, got "${text}"`,
    );
  }
  return value;
}

const { values } = parseArgs({
  options: {
    seed: { type: "string" },
    workload: { type: "string" },
    duration: { type: "string" },
    selectors: { type: "string" },
    backend: { type: "string" },
    "request-ms": { type: "string" },
    "hint-ttl-ms": { type: "string" },
    out: { type: "string" },
    help: { type: "boolean" },
  },
  strict: true,
});
if (values.help) {
  console.log(usage);
  process.exit(0);
}

const backend = (values.backend ?? "sqs") as BackendKind;
if (backend !== "sqs" && backend !== "exact")
  fail(`--backend must be sqs or exact, got "${backend}"`);
const options: SimulationOptions = {
  seed: positive("seed", values.seed, 1, true),
  durationMs: positive("duration", values.duration, 600) * 1000,
  backend,
  requestMs: positive("request-ms", values["request-ms"], 10),
  hintTtlMs: positive("hint-ttl-ms", values["hint-ttl-ms"], 1_000),
};
if (options.durationMs <= 0) fail("--duration must be more than 0");

const selectors = values.selectors?.split(",").map((s) => s.trim()) ?? [...SELECTOR_NAMES];
for (const name of selectors) if (!isSelectorName(name)) fail(`unknown selector "${name}"`);

const all = workloads(options.durationMs);
const chosen =
  values.workload === undefined || values.workload === "all"
    ? all
    : all.filter((w) => w.name === values.workload);
if (chosen.length === 0) fail(`unknown workload "${values.workload}"`);

const here = dirname(fileURLToPath(import.meta.url));
const outDir = resolve(values.out ?? join(here, "../../results"));

const started = performance.now();
const results: RunResult[] = [];
for (const workload of chosen) {
  const runs: RunResult[] = [];
  for (const selector of selectors) runs.push(await simulate(workload, selector, options));
  results.push(...runs);
  console.log(`\n${formatTable(workload, runs, options)}`);
}
const elapsedMs = performance.now() - started;
console.log(
  `\nlongest: oldest wait seen, including jobs still waiting at the end (marked *). share: of all worker slot-time.` +
    `\n${results.length} runs in ${(elapsedMs / 1000).toFixed(1)} s of real time.`,
);

await mkdir(outDir, { recursive: true });
const json = {
  generatedBy: "npm run simulate",
  options,
  selectors,
  workloads: chosen,
  results,
};
await writeFile(join(outDir, "selectors.json"), `${JSON.stringify(json, replacer, 2)}\n`);
const svg = await renderWaitChart(
  results,
  `tasklane selector simulation (seed ${options.seed}, ${options.backend})`,
);
await writeFile(join(outDir, "selectors.svg"), svg);
console.log(`wrote ${join(outDir, "selectors.json")} and ${join(outDir, "selectors.svg")}`);

/** JSON has no Infinity: write it as null. Round long fractions. */
function replacer(_key: string, value: unknown): unknown {
  if (typeof value === "number") {
    if (!Number.isFinite(value)) return null;
    return Number.isInteger(value) ? value : Number(value.toPrecision(6));
  }
  return value;
}
