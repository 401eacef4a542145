/**
 * The selector simulator: `npm run simulate -- [options]` (see --help and README.md in
 * this folder). Prints a table per workload and the goal check, and writes
 * selectors.json, selectors.svg and selectors.png to bench/out/ (git-ignored), or with
 * --save, the reference settings' run to bench/results/.
 */
import { mkdir, writeFile } from "node:fs/promises";
import { join, relative, resolve } from "node:path";
import { parseArgs } from "node:util";
import { OUT_DIR, REFERENCE_DIR, REPO_DIR } from "../machine.ts";
import { averageRuns } from "./aggregate.ts";
import { renderPng, renderWaitChart } from "./chart.ts";
import { type RunResult, simulate } from "./engine.ts";
import { FAIRNESS, formatFairness, runFairness } from "./fairness.ts";
import type { BackendKind, SimulationOptions } from "./model.ts";
import { checkGoal, formatGoal, formatTable } from "./report.ts";
import { DEFAULT_VARIANTS, resolveVariant, type SelectorVariant } from "./variants.ts";
import { workloads } from "./workloads.ts";

const BASELINE = "reduced-lottery";

/**
 * The committed reference in bench/results/: every workload and selector, the mean of
 * seeds 1..5, every other option at its default. `--save` runs exactly this.
 */
const REFERENCE = { seed: "1", seeds: "5" } as const;

const usage = `Usage: npm run simulate -- [options]
  --seed N           first seed of every random stream (default 1)
  --seeds K          run seeds N..N+K-1 and report the mean of each figure (default 1)
  --workload NAME    one workload, or "all" (default all): ${workloads(1)
    .map((w) => w.name)
    .join(", ")}
  --duration S       simulated seconds per run (default 600)
  --selectors LIST   comma-separated (default ${DEFAULT_VARIANTS.join(",")});
                     "hinted-stride+aging=MS" is hinted-stride with agingMs MS;
                     "oracle[+tau=MS[/MS...]][+beta=B]" reads the lanes: a bound, not a
                     selector (see oracle.ts)
  --backend KIND     "sqs" (a reserve returns no ready count; default) or "exact" (memory, Redis)
  --request-ms MS    round trip of one backend request (default 10)
  --hint-ttl-ms MS   how long the worker trusts a ready count (default 1000, as the worker)
  --prefetch N       jobs a worker may reserve beyond its concurrency (default: the worker's,
                     max(B, 2B - concurrency) for the largest batch size B; 0: none)
  --stay-on-short    model the older worker loop that stays on a lane after a short batch
                     (default: leave on a short batch, as tasklane's worker does)
  --out DIR          where selectors.json, .svg and .png go (default bench/out, git-ignored)
  --fairness         the fairness workload instead: one lane, a big tenant's backlog and a
                     small tenant's trickle, run by the real worker on the memory adapter in
                     virtual time, without and with fair groups (fairness.ts)
  --save             refresh the committed reference in bench/results/: every workload and
                     selector, seeds 1..5 (--seeds defaults to 5 here), every other option
                     at its default; refused with any option that changes those, and with --out
  --help`;

function fail(message: string): never {
  console.error(`${message}\n\n${usage}`);
  process.exit(2);
}

function number(name: string, text: string | undefined, fallback: number, integer = false): number {
  if (text === undefined) return fallback;
  const value = Number(text);
  if (
    text.trim() === "" ||
    !Number.isFinite(value) ||
    value < 0 ||
    (integer && !Number.isInteger(value))
  ) {
    fail(`--${name} must be a non-negative ${integer ? "integer" : "number"}, got "${text}"`);
  }
  return value;
}

const { values } = parseFlags();
if (values.help) {
  console.log(usage);
  process.exit(0);
}
if (values.fairness) {
  const results = [await runFairness(FAIRNESS, false), await runFairness(FAIRNESS, true)];
  console.log(formatFairness(FAIRNESS, results));
  process.exit(0);
}
const save = values.save === true;
if (save) {
  // The reference stands for one set of settings: a run with any other would replace it
  // with figures the READMEs do not describe (a 1-seed run, one workload, another backend).
  const changed = Object.entries(values)
    .filter(([name, value]) => {
      if (name === "save" || value === undefined) return false;
      const reference = REFERENCE[name as keyof typeof REFERENCE];
      return reference === undefined || Number(value) !== Number(reference);
    })
    .map(([name]) => `--${name}`);
  if (changed.length > 0) {
    fail(
      `--save refused with ${changed.join(", ")}: the reference in bench/results/ is ` +
        "`npm run simulate -- --save` (every workload and selector, seeds 1..5, defaults). " +
        "Without --save a run writes to bench/out/.",
    );
  }
  values.seeds ??= REFERENCE.seeds;
}

const backend = (values.backend ?? "sqs") as BackendKind;
if (backend !== "sqs" && backend !== "exact") {
  fail(`--backend must be sqs or exact, got "${backend}"`);
}
const options: SimulationOptions = {
  seed: number("seed", values.seed, 1, true),
  durationMs: number("duration", values.duration, 600) * 1000,
  backend,
  requestMs: number("request-ms", values["request-ms"], 10),
  hintTtlMs: number("hint-ttl-ms", values["hint-ttl-ms"], 1_000),
  ...(values["stay-on-short"] === true ? { leaveOnShortBatch: false } : {}),
  ...(values.prefetch === undefined
    ? {}
    : { prefetch: number("prefetch", values.prefetch, 0, true) }),
};
if (options.durationMs <= 0) fail("--duration must be more than 0");
const seeds = number("seeds", values.seeds, 1, true);
if (seeds < 1) fail("--seeds must be at least 1");

const specs = values.selectors?.split(",").map((s) => s.trim()) ?? [...DEFAULT_VARIANTS];
const variants: SelectorVariant[] = specs.map(
  (spec) => resolveVariant(spec) ?? fail(`unknown selector "${spec}"`),
);

const all = workloads(options.durationMs);
const chosen =
  values.workload === undefined || values.workload === "all"
    ? all
    : all.filter((w) => w.name === values.workload);
if (chosen.length === 0) fail(`unknown workload "${values.workload}"`);

const outDir = save ? REFERENCE_DIR : resolve(values.out ?? OUT_DIR);

const started = performance.now();
const results: RunResult[] = [];
const perSeed: RunResult[] = [];
for (const workload of chosen) {
  const rows: RunResult[] = [];
  for (const variant of variants) {
    const runs: RunResult[] = [];
    for (let k = 0; k < seeds; k++) {
      const run = await simulate(
        workload,
        variant.label,
        { ...options, seed: options.seed + k },
        variant.make,
      );
      runs.push(run);
    }
    perSeed.push(...runs);
    rows.push(averageRuns(runs));
  }
  results.push(...rows);
  console.log(`\n${formatTable(workload, rows, options, seeds)}`);
}
const elapsedMs = performance.now() - started;
console.log(
  "\nlongest: the longest wait seen, counting jobs still waiting at the end (* when one of those is the longest)." +
    "\nshare: of all worker slot-time (the shares add up to util); set by the jobs, so the same for every selector that runs them." +
    "\nreq/s: backend requests per second, all workers.",
);
const goal = specs.includes(BASELINE) ? checkGoal(results, BASELINE) : [];
if (goal.length > 0) console.log(`\n${formatGoal(goal, BASELINE)}`);
console.log(`\n${perSeed.length} runs in ${(elapsedMs / 1000).toFixed(1)} s of real time.`);

await mkdir(outDir, { recursive: true });
const argv = process.argv.slice(2);
const json = {
  generatedBy: `npm run simulate${argv.length > 0 ? ` -- ${argv.join(" ")}` : ""}`,
  options,
  seeds,
  selectors: specs,
  workloads: chosen,
  results,
  goal,
  ...(seeds > 1 ? { perSeed } : {}),
};
await writeFile(join(outDir, "selectors.json"), `${JSON.stringify(json, replacer, 2)}\n`);
const seedText = seeds === 1 ? `seed ${options.seed}` : `mean of ${seeds} seeds`;
const svg = await renderWaitChart(
  results,
  `tasklane selector simulation (${seedText}, backend ${options.backend})`,
);
await writeFile(join(outDir, "selectors.svg"), svg);
await writeFile(join(outDir, "selectors.png"), renderPng(svg));
const shown = relative(REPO_DIR, join(outDir, "selectors"));
console.log(
  `wrote ${shown}.json, .svg and .png${save ? "" : " (--save refreshes the reference in bench/results/)"}`,
);

/** JSON has no Infinity or NaN: write them as null. Round long fractions. */
function replacer(_key: string, value: unknown): unknown {
  if (typeof value === "number") {
    if (!Number.isFinite(value)) return null;
    return Number.isInteger(value) ? value : Number(value.toPrecision(6));
  }
  return value;
}

function parseFlags() {
  try {
    return parseArgs({
      options: {
        seed: { type: "string" },
        seeds: { type: "string" },
        workload: { type: "string" },
        duration: { type: "string" },
        selectors: { type: "string" },
        backend: { type: "string" },
        "request-ms": { type: "string" },
        "hint-ttl-ms": { type: "string" },
        prefetch: { type: "string" },
        out: { type: "string" },
        "stay-on-short": { type: "boolean" },
        fairness: { type: "boolean" },
        save: { type: "boolean" },
        help: { type: "boolean" },
      },
      strict: true,
    });
  } catch (error) {
    fail((error as Error).message);
  }
}
