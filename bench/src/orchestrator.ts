/**
 * Plans the cases, owns the servers, runs each case in a fresh child process, and
 * writes the results. Systems alternate inside each repetition (and the order reverses
 * every other repetition) so slow drift of the machine does not favour one system.
 */
import { fork } from "node:child_process";
import { appendFileSync, existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { loadavg } from "node:os";
import { join, relative } from "node:path";
import {
  BENCH_DIR,
  machineInfo,
  OUT_DIR,
  packageVersion,
  REFERENCE_DIR,
  REPO_DIR,
} from "./machine.ts";
import { FULL, QUICK, SCENARIOS } from "./profiles.ts";
import { renderLatest, renderTables, renderTargets, summarise } from "./report.ts";
import { type FauxqsServer, startFauxqsServer } from "./servers/fauxqs.ts";
import { type RedisServer, startRedisServer } from "./servers/redis.ts";
import { SYSTEMS } from "./systems/index.ts";
import type { CaseResult, CaseSpec, Profile, ScenarioName, SystemEntry } from "./types.ts";

export interface OrchestrateOptions {
  quick: boolean;
  only: string[];
  repeats: number | undefined;
  jobs: number | undefined;
  sqsJobs: number | undefined;
  list: boolean;
  /** Run every child with --cpu-prof into this directory. */
  cpuProfDir: string | undefined;
  /** Write the committed reference (results/, the README's tables) instead of out/. */
  save: boolean;
  argv: string[];
}

const README = join(BENCH_DIR, "README.md");
const README_START = "<!-- latest-results:start -->";
const README_END = "<!-- latest-results:end -->";

interface Selection {
  systems: SystemEntry[];
  scenarios: ScenarioName[];
}

/** `--only` tokens: a system, a backend, a scenario, or a scenario prefix. */
export function select(only: string[]): Selection {
  const systemTokens = new Set<string>();
  const scenarioTokens = new Set<ScenarioName>();
  for (const token of only) {
    const systems = SYSTEMS.filter((s) => s.name === token || s.backend === token);
    const scenarios = SCENARIOS.filter((s) => s === token || s.startsWith(`${token}-`));
    if (systems.length === 0 && scenarios.length === 0) {
      throw new Error(
        `--only "${token}" matches no system, backend or scenario ` +
          `(systems: ${SYSTEMS.map((s) => s.name).join(", ")}; scenarios: ${SCENARIOS.join(", ")})`,
      );
    }
    for (const system of systems) systemTokens.add(system.name);
    for (const scenario of scenarios) scenarioTokens.add(scenario);
  }
  return {
    systems: systemTokens.size === 0 ? SYSTEMS : SYSTEMS.filter((s) => systemTokens.has(s.name)),
    scenarios:
      scenarioTokens.size === 0 ? SCENARIOS : SCENARIOS.filter((s) => scenarioTokens.has(s)),
  };
}

/**
 * Why a run is not a full run of every case, or undefined when it is. Only a full run
 * is judged against the targets and may be saved as the reference: the targets are set
 * for its sizes, and the reference tables stand for every case.
 */
export function partialRun(
  options: Pick<
    OrchestrateOptions,
    "quick" | "only" | "repeats" | "jobs" | "sqsJobs" | "cpuProfDir"
  >,
): string | undefined {
  if (options.quick) return "quick run";
  if (options.only.length > 0) return `partial run: --only ${options.only.join(",")}`;
  const overrides = [
    options.repeats === undefined ? "" : "--repeats",
    options.jobs === undefined ? "" : "--jobs",
    options.sqsJobs === undefined ? "" : "--sqs-jobs",
  ].filter((flag) => flag !== "");
  if (overrides.length > 0) return `sizes overridden: ${overrides.join(", ")}`;
  if (options.cpuProfDir !== undefined) return "CPU-profiled run";
  return undefined;
}

export function applies(system: SystemEntry, scenario: ScenarioName): boolean {
  if (system.scenarios !== undefined && !system.scenarios.includes(scenario)) return false;
  if (scenario === "latency-priority") return system.priorities;
  // Nothing to count in process: an in-process queue makes no backend requests.
  if (scenario === "idle") return system.backend !== "memory";
  return true;
}

function versions(redis: RedisServer | undefined, systems: SystemEntry[]): Record<string, string> {
  const out: Record<string, string> = { "@tasklane/core": packageVersion("@tasklane/core") };
  for (const name of new Set(systems.map((system) => system.packageName))) {
    out[name] = packageVersion(name);
  }
  if (systems.some((system) => system.backend === "sqs")) {
    out["@aws-sdk/client-sqs"] = packageVersion("@aws-sdk/client-sqs");
    out.fauxqs = packageVersion("fauxqs");
  }
  if (systems.some((system) => system.backend === "redis")) {
    out.ioredis = packageVersion("ioredis");
    if (redis) out["redis-server"] = redis.version;
  }
  return out;
}

export async function orchestrate(options: OrchestrateOptions): Promise<number> {
  const base = options.quick ? QUICK : FULL;
  const profile: Profile = {
    ...base,
    repeats: options.repeats ?? base.repeats,
    jobs: options.jobs ?? base.jobs,
    sqsJobs: options.sqsJobs ?? base.sqsJobs,
  };
  const { systems, scenarios } = select(options.only);
  if (options.list) {
    for (const system of SYSTEMS) {
      process.stdout.write(
        `${system.name.padEnd(16)} ${system.backend.padEnd(7)} ${system.description}\n`,
      );
    }
    process.stdout.write(`\nscenarios: ${SCENARIOS.join(", ")}\n`);
    return 0;
  }
  const partial = partialRun(options);
  if (options.save && partial !== undefined) {
    process.stderr.write(
      `--save refused: this is a ${partial}. The reference in bench/results/ is a full run of ` +
        "every case (`npm run bench -- --save`, no other options); without --save this run " +
        "writes to bench/out/.\n",
    );
    return 2;
  }
  const outDir = options.save ? REFERENCE_DIR : OUT_DIR;
  const shown = (file: string) => relative(REPO_DIR, join(outDir, file));

  const startedAt = Date.now();
  const runId = new Date(startedAt).toISOString().replace(/[-:]/g, "").replace(/\..*/, "Z");
  const machine = machineInfo();
  mkdirSync(outDir, { recursive: true });

  let redis: RedisServer | undefined;
  let fauxqs: FauxqsServer | undefined;
  const children = new Set<import("node:child_process").ChildProcess>();
  const cleanup = async () => {
    for (const child of children) child.kill("SIGKILL");
    await Promise.allSettled([redis?.stop(), fauxqs?.stop()]);
  };
  const onSignal = () => {
    void cleanup().then(() => process.exit(130));
  };
  process.once("SIGINT", onSignal);
  process.once("SIGTERM", onSignal);

  try {
    if (systems.some((system) => system.backend === "redis")) redis = await startRedisServer();
    if (systems.some((system) => system.backend === "sqs")) fauxqs = await startFauxqsServer();
    const runVersions = versions(redis, systems);
    const command = `npm run bench${options.argv.length > 0 ? ` -- ${options.argv.join(" ")}` : ""}`;
    // What reproduces the figures: the same run, saved or not.
    const rerun = options.argv.filter((arg) => arg !== "--save");
    const reproduce = `npm run bench${rerun.length > 0 ? ` -- ${rerun.join(" ")}` : ""}`;
    appendFileSync(
      join(outDir, "results.jsonl"),
      `${JSON.stringify({ type: "run", runId, at: new Date(startedAt).toISOString(), command, machine, versions: runVersions, profile })}\n`,
    );

    const plan: CaseSpec[] = [];
    for (let repeat = 0; repeat < profile.repeats; repeat++) {
      for (const scenario of scenarios) {
        const ordered = repeat % 2 === 0 ? systems : [...systems].reverse();
        for (const system of ordered) {
          if (!applies(system, scenario)) continue;
          plan.push({
            runId,
            system: system.name,
            scenario,
            repeat,
            profile,
            queueName: `bench-${runId.slice(9, 15)}-${plan.length}`,
            ...(redis ? { redis: { host: redis.host, port: redis.port } } : {}),
            ...(fauxqs ? { sqs: { endpoint: fauxqs.endpoint, region: fauxqs.region } } : {}),
            seed: 1 + repeat,
          });
        }
      }
    }
    process.stdout.write(
      `tasklane bench ${runId}: ${plan.length} cases (${profile.name}, ${profile.repeats} run(s) each), ` +
        `${machine.cores} cores, load ${machine.loadAverage.join(" ")}\n`,
    );

    const results: CaseResult[] = [];
    for (const [index, spec] of plan.entries()) {
      const system = SYSTEMS.find((s) => s.name === spec.system);
      if (system?.backend === "redis") await redis?.reset();
      const result = await runChild(
        spec,
        children,
        system?.backend ?? "memory",
        options.cpuProfDir,
      );
      results.push(result);
      // The 1-minute load average after the case: a busy machine explains an outlier.
      const load1m = Math.round((loadavg()[0] ?? 0) * 100) / 100;
      appendFileSync(
        join(outDir, "results.jsonl"),
        `${JSON.stringify({ type: "case", load1m, ...result })}\n`,
      );
      process.stdout.write(`[${index + 1}/${plan.length}] ${describe(result)}\n`);
    }

    const summaries = summarise(results);
    appendFileSync(
      join(outDir, "results.jsonl"),
      summaries
        .map((summary) => `${JSON.stringify({ type: "summary", runId, ...summary })}\n`)
        .join(""),
    );
    const context = {
      runId,
      date: new Date(startedAt).toISOString().replace("T", " ").replace(/\..*/, " UTC"),
      machine,
      loadAtEnd: loadavg().map((value) => Math.round(value * 100) / 100),
      versions: runVersions,
      profile,
      command: reproduce,
      notJudged: partial,
      durationSec: (Date.now() - startedAt) / 1000,
    };
    const latest = renderLatest(summaries, context);
    writeFileSync(join(outDir, "latest.md"), latest);
    process.stdout.write(
      `\n${renderTables(summaries, profile)}\n\n${renderTargets(summaries, profile, partial)}\n\n` +
        `wrote ${shown("latest.md")} and ${shown("results.jsonl")}` +
        (options.save
          ? " and the tables in bench/README.md\n"
          : " (--save refreshes the reference in bench/results/)\n"),
    );
    if (options.save) updateReadme(latest);
    return results.every((result) => result.ok) ? 0 : 1;
  } finally {
    process.off("SIGINT", onSignal);
    process.off("SIGTERM", onSignal);
    await cleanup();
  }
}

function describe(result: CaseResult): string {
  const head = `${result.system} ${result.scenario} #${result.repeat + 1}`;
  if (!result.ok) return `${head}: FAILED ${result.error?.split("\n")[0] ?? ""}`;
  const m = result.metrics;
  const parts: string[] = [];
  if (m.jobsPerSec !== undefined) parts.push(`${Math.round(m.jobsPerSec)} jobs/s`);
  if (m.p50Ms !== undefined) {
    parts.push(
      `p50 ${m.p50Ms.toFixed(2)} p90 ${(m.p90Ms ?? 0).toFixed(2)} p99 ${(m.p99Ms ?? 0).toFixed(2)} ms`,
    );
  }
  if (m.requestsPerJob !== undefined && Number.isFinite(m.requestsPerJob)) {
    parts.push(`${m.requestsPerJob.toFixed(2)} req/job`);
  }
  if (m.idleRequestsPerSec !== undefined)
    parts.push(`${m.idleRequestsPerSec.toFixed(2)} req/s idle`);
  if (m.backendBytesPerJob !== undefined && Number.isFinite(m.backendBytesPerJob)) {
    parts.push(`${Math.round(m.backendBytesPerJob)} B/job`);
  }
  return `${head}: ${parts.join(", ")} (${(result.wallMs / 1000).toFixed(1)} s)`;
}

/** One case in a fresh Node process running this entry with `--child`. */
async function runChild(
  spec: CaseSpec,
  children: Set<import("node:child_process").ChildProcess>,
  backend: CaseResult["backend"],
  cpuProfDir: string | undefined,
): Promise<CaseResult> {
  const startedAt = performance.now();
  const child = fork(join(BENCH_DIR, "src", "main.ts"), ["--child", JSON.stringify(spec)], {
    execPath: process.execPath,
    execArgv: [
      "--conditions=source",
      "--expose-gc",
      "--disable-warning=ExperimentalWarning",
      ...(cpuProfDir
        ? [
            "--cpu-prof",
            `--cpu-prof-dir=${cpuProfDir}`,
            `--cpu-prof-name=${spec.system}-${spec.scenario}-${spec.repeat + 1}.cpuprofile`,
          ]
        : []),
    ],
    stdio: ["ignore", "pipe", "pipe", "ipc"],
  });
  children.add(child);
  let output = "";
  const keep = (chunk: Buffer) => {
    output = (output + chunk.toString()).slice(-4_000);
  };
  child.stdout?.on("data", keep);
  child.stderr?.on("data", keep);
  const failure = (error: string): CaseResult => ({
    runId: spec.runId,
    at: new Date().toISOString(),
    system: spec.system,
    backend,
    scenario: spec.scenario,
    repeat: spec.repeat,
    profile: spec.profile.name,
    ok: false,
    error: `${error}${output ? `\n${output}` : ""}`,
    metrics: {},
    wallMs: performance.now() - startedAt,
  });
  try {
    return await new Promise<CaseResult>((resolve) => {
      let result: CaseResult | undefined;
      const timer = setTimeout(() => {
        child.kill("SIGKILL");
        resolve(failure(`timed out after ${spec.profile.caseTimeoutMs} ms`));
      }, spec.profile.caseTimeoutMs);
      child.on("message", (message) => {
        result = message as CaseResult;
      });
      child.on("exit", (code, signal) => {
        clearTimeout(timer);
        resolve(result ?? failure(`child exited (${signal ?? code}) without a result`));
      });
    });
  } finally {
    children.delete(child);
  }
}

function updateReadme(latest: string): void {
  if (!existsSync(README)) return;
  const text = readFileSync(README, "utf8");
  const start = text.indexOf(README_START);
  const end = text.indexOf(README_END);
  if (start < 0 || end < start) return;
  const body = latest.replace(/^# .*\n\n/, "");
  writeFileSync(
    README,
    `${text.slice(0, start + README_START.length)}\n${body}\n${text.slice(end)}`,
  );
}
