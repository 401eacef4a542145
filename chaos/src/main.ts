/**
 * `npm run chaos [-- --profile fast|full] [-- --scenario <name>[,...]] [-- --strict] [-- --save]`
 *
 * Runs the fault scenarios one after another, checks every run and prints the report.
 * Writes chaos/out/<run>/report.md and report.json (git-ignored; the ledgers too, kept
 * only when the run fails or with --keep); with --save, chaos/reports/<profile>.md (or
 * depth.md), the committed reference. Exits 1 on a lost job, an unattributed duplicate
 * run or a double ack (with --strict, also on a missed target).
 */
import { copyFileSync, mkdirSync, rmSync, writeFileSync } from "node:fs";
import { loadavg } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { DEFAULT_SCENARIOS, PROFILES, SCENARIOS } from "./profiles.ts";
import { renderReport, verdictOf } from "./report.ts";
import type { ProfileName, ScenarioResult } from "./scenario.ts";

const HELP = `Usage: npm run chaos -- [options]

  --profile <fast|full>  fast (default): every scenario, small, a few minutes (npm test
                         runs it); full: the issue's sizes, run by hand
  --scenario <list>      comma-separated scenarios (default: all but depth):
                         ${Object.keys(SCENARIOS).join(", ")}
  --strict               also fail when a target is missed (the targets are printed anyway)
  --depth-jobs <n>       jobs for the depth scenario (default 1000000)
  --keep                 keep the ledgers of a passing run
  --save                 write the report to chaos/reports/<profile>.md (all of a
                         profile's scenarios) or chaos/reports/depth.md (--scenario depth)
  --help                 this text
`;

const { values } = parseArgs({
  options: {
    profile: { type: "string", default: "fast" },
    scenario: { type: "string", multiple: true },
    strict: { type: "boolean", default: false },
    "depth-jobs": { type: "string" },
    keep: { type: "boolean", default: false },
    save: { type: "boolean", default: false },
    help: { type: "boolean", default: false },
  },
  strict: true,
  allowPositionals: false,
});

const fail = (message: string): never => {
  process.stderr.write(`${message}\n`);
  process.exit(2);
};

if (values.help) {
  process.stdout.write(HELP);
  process.exit(0);
}
const profile = values.profile as ProfileName;
if (profile !== "fast" && profile !== "full")
  fail(`--profile must be fast or full, got "${profile}"`);
const names = (values.scenario ?? []).flatMap((s) => s.split(",")).filter((s) => s !== "");
for (const name of names) if (!(name in SCENARIOS)) fail(`unknown scenario "${name}"; see --help`);
const scenarios = names.length === 0 ? DEFAULT_SCENARIOS : names;
const params = structuredClone(PROFILES[profile]);
if (values["depth-jobs"] !== undefined) {
  const n = Number(values["depth-jobs"]);
  if (!Number.isInteger(n) || n < 1) fail("--depth-jobs must be a positive integer");
  params.depth.jobs = n;
}
const depthOnly = scenarios.length === 1 && scenarios[0] === "depth";
let saveAs: string | undefined;
if (values.save) {
  if (depthOnly && values["depth-jobs"] === undefined) saveAs = "depth.md";
  else if (names.length === 0) saveAs = `${profile}.md`;
  else fail("--save needs a whole profile, or --scenario depth alone at its default size");
}

const chaosDir = new URL("..", import.meta.url).pathname;
const startedAt = new Date();
const loadAtStart = loadavg()[0] ?? 0;
const runName = `${depthOnly ? "depth" : profile}-${startedAt.toISOString().replace(/[:.]/g, "-")}`;
const runDir = join(chaosDir, "out", runName);
mkdirSync(runDir, { recursive: true });
const t0 = Date.now();
const log = (message: string) => {
  process.stderr.write(`[chaos ${((Date.now() - t0) / 1_000).toFixed(1)} s] ${message}\n`);
};

const results: ScenarioResult[] = [];
for (const name of scenarios) {
  const runner = SCENARIOS[name];
  if (runner === undefined) continue;
  try {
    const result = await runner({ runDir, profile, log }, params);
    results.push(result);
    log(
      `${name}: ${result.failures.length === 0 ? "ok" : `FAILED: ${result.failures.join("; ")}`}`,
    );
  } catch (error) {
    log(`${name}: error: ${error instanceof Error ? error.stack : String(error)}`);
    results.push({
      name,
      title: name,
      backend: "",
      params: {},
      durationMs: 0,
      figures: [],
      notes: [],
      failures: [`the scenario threw: ${error instanceof Error ? error.message : String(error)}`],
    });
  }
}

const verdict = verdictOf(results, values.strict);
const command = [
  "npm run chaos",
  ...(process.argv.length > 2 ? ["--", ...process.argv.slice(2)] : []),
].join(" ");
const markdown = renderReport(
  {
    profile: depthOnly ? "depth" : `${profile} profile`,
    command,
    startedAt,
    durationMs: Date.now() - t0,
    strict: values.strict,
    load: [loadAtStart, loadavg()[0] ?? 0],
  },
  results,
  verdict,
);
writeFileSync(join(runDir, "report.md"), `${markdown}\n`);
writeFileSync(
  join(runDir, "report.json"),
  `${JSON.stringify({ profile, scenarios, verdict, results }, (key, value) => (key === "duplicateRuns" ? undefined : value), 2)}\n`,
);
copyFileSync(join(runDir, "report.md"), join(chaosDir, "out", "latest.md"));
// The committed reference is a passing run's: a failed run's report stays in chaos/out.
if (saveAs !== undefined && verdict.failures.length === 0) {
  mkdirSync(join(chaosDir, "reports"), { recursive: true });
  writeFileSync(join(chaosDir, "reports", saveAs), `${markdown}\n`);
} else if (saveAs !== undefined) {
  process.stderr.write(`chaos: not saved to chaos/reports/${saveAs}: the run failed\n`);
}
process.stdout.write(`${markdown}\n`);
if (verdict.pass && !values.keep) {
  for (const name of scenarios) rmSync(join(runDir, name), { recursive: true, force: true });
}
process.stderr.write(
  verdict.pass
    ? `chaos: passed (report: ${join(runDir, "report.md")})\n`
    : `chaos: FAILED (ledgers kept in ${runDir})\n${[...verdict.failures, ...(values.strict ? verdict.missed : [])].map((f) => `  ${f}`).join("\n")}\n`,
);
process.exit(verdict.pass ? 0 : 1);
