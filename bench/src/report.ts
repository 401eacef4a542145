/**
 * Medians over the repeats of each case, ratios to each backend's baseline, and the
 * Markdown tables of latest.md (and of bench/README.md on a saved reference run).
 */
import type { MachineInfo } from "./machine.ts";
import { SCENARIOS } from "./profiles.ts";
import { median } from "./stats.ts";
import { BASELINES, SYSTEMS } from "./systems/index.ts";
import type { Backend, CaseResult, Metrics, Profile, ScenarioName } from "./types.ts";

/** Medians of one (system, scenario) over its successful runs. */
export interface Summary {
  system: string;
  backend: Backend;
  scenario: ScenarioName;
  runs: number;
  failed: number;
  /** The first failure's message, for the report. */
  error?: string;
  medians: Metrics;
  /** Per metric: (max − min) / median over the successful runs (0 with one run). */
  spreads: Metrics;
  /** Per metric: how many successful runs reported a finite value. */
  measuredRuns: Metrics;
}

export function summarise(results: CaseResult[]): Summary[] {
  const groups = new Map<string, CaseResult[]>();
  for (const result of results) {
    const key = `${result.system}\u0000${result.scenario}`;
    const group = groups.get(key) ?? [];
    group.push(result);
    groups.set(key, group);
  }
  const summaries: Summary[] = [];
  for (const group of groups.values()) {
    const first = group[0];
    if (!first) continue;
    const ok = group.filter((result) => result.ok);
    const keys = new Set(ok.flatMap((result) => Object.keys(result.metrics)));
    const medians: Metrics = {};
    const spreads: Metrics = {};
    const measuredRuns: Metrics = {};
    for (const key of keys) {
      const values = ok.map((result) => result.metrics[key] ?? Number.NaN);
      const mid = median(values);
      medians[key] = mid;
      const finite = values.filter((value) => Number.isFinite(value));
      measuredRuns[key] = finite.length;
      spreads[key] =
        finite.length > 1 && mid !== 0
          ? (Math.max(...finite) - Math.min(...finite)) / Math.abs(mid)
          : 0;
    }
    const failure = group.find((result) => !result.ok);
    summaries.push({
      system: first.system,
      backend: first.backend,
      scenario: first.scenario,
      runs: ok.length,
      failed: group.length - ok.length,
      ...(failure?.error ? { error: failure.error.split("\n")[0] ?? "" } : {}),
      medians,
      spreads,
      measuredRuns,
    });
  }
  return summaries;
}

export interface ReportContext {
  runId: string;
  date: string;
  machine: MachineInfo;
  loadAtEnd: number[];
  versions: Record<string, string>;
  profile: Profile;
  command: string;
  /** Why the targets are not judged on this run (a quick or partial run); undefined: judged. */
  notJudged: string | undefined;
  durationSec: number;
}

type Format = (value: number) => string;

const integer: Format = (value) => Math.round(value).toLocaleString("en-US");
const decimal: Format = (value) =>
  value >= 100 ? integer(value) : value >= 10 ? value.toFixed(1) : value.toFixed(2);

function ratio(value: number, baseline: number | undefined): string {
  if (
    baseline === undefined ||
    !Number.isFinite(value) ||
    !Number.isFinite(baseline) ||
    baseline === 0
  ) {
    return "";
  }
  const r = value / baseline;
  return ` (${r >= 10 ? r.toFixed(0) : r >= 1 ? r.toFixed(1) : r.toFixed(2)}×)`;
}

class Lookup {
  private readonly map = new Map<string, Summary>();
  constructor(summaries: Summary[]) {
    for (const summary of summaries) this.map.set(`${summary.system}/${summary.scenario}`, summary);
  }
  get(system: string, scenario: ScenarioName): Summary | undefined {
    return this.map.get(`${system}/${scenario}`);
  }
}

/** A cell whose case did not run. */
const NOT_RUN = "–";

/** One table cell: the median, the ratio to the baseline's median, failures flagged. */
function cell(
  lookup: Lookup,
  system: string,
  baseline: string,
  scenario: ScenarioName,
  metric: string,
  format: Format,
  withRatio = true,
): string {
  const summary = lookup.get(system, scenario);
  if (!summary) return NOT_RUN;
  const value = summary.medians[metric];
  if (summary.runs === 0 || value === undefined || !Number.isFinite(value)) {
    return summary.failed > 0 ? "failed" : "n/a";
  }
  const base = lookup.get(baseline, scenario)?.medians[metric];
  const flag = summary.failed > 0 ? ` ⚠${summary.failed} failed` : "";
  const showRatio = withRatio && system !== baseline;
  return `${format(value)}${showRatio ? ratio(value, base) : ""}${flag}`;
}

function latencyCell(
  lookup: Lookup,
  system: string,
  baseline: string,
  scenario: ScenarioName,
): string {
  const summary = lookup.get(system, scenario);
  if (!summary) return NOT_RUN;
  const { p50Ms, p90Ms, p99Ms } = summary.medians;
  if (summary.runs === 0 || p50Ms === undefined || p90Ms === undefined || p99Ms === undefined) {
    return summary.failed > 0 ? "failed" : "n/a";
  }
  const base = lookup.get(baseline, scenario)?.medians.p99Ms;
  const flag = summary.failed > 0 ? ` ⚠${summary.failed} failed` : "";
  const r = system === baseline ? "" : ratio(p99Ms, base);
  return `${decimal(p50Ms)} / ${decimal(p90Ms)} / ${decimal(p99Ms)}${r}${flag}`;
}

/** A Markdown table with padded columns (as Biome formats Markdown, so the README stays lint-clean). */
function table(header: string[], rows: string[][]): string {
  const widths = header.map((cell, column) =>
    Math.max(3, [...cell].length, ...rows.map((row) => [...(row[column] ?? "")].length)),
  );
  const line = (cells: string[]) =>
    `| ${cells.map((cell, column) => cell + " ".repeat((widths[column] ?? 0) - [...cell].length)).join(" | ")} |`;
  return [line(header), line(widths.map((width) => "-".repeat(width))), ...rows.map(line)].join(
    "\n",
  );
}

/** Rows with at least one measured cell: a system that ran none of a table's cases is left out. */
const measured = (rows: string[][]): string[][] =>
  rows.filter((row) => row.slice(1).some((cell) => cell !== NOT_RUN));

/** Above this relative range of the runs, a case is listed as noisy. */
const NOISY_SPREAD = 0.5;

const BACKEND_TITLES: Record<Backend, string> = {
  memory: "In-process (memory)",
  redis: "Redis",
  sqs: "SQS (fauxqs)",
};

/** The tables for every backend that has results. */
export function renderTables(summaries: Summary[], profile: Profile): string {
  const lookup = new Lookup(summaries);
  const sections: string[] = [];
  for (const backend of ["memory", "redis", "sqs"] as const) {
    const systems = SYSTEMS.filter(
      (system) => system.backend === backend && summaries.some((s) => s.system === system.name),
    ).map((system) => system.name);
    if (systems.length === 0) continue;
    const baseline = BASELINES[backend];
    const jobs = backend === "sqs" ? profile.sqsJobs : profile.jobs;
    const label = (name: string) => (name === baseline ? `${name} (baseline)` : name);
    sections.push(`### ${BACKEND_TITLES[backend]}: baseline ${baseline}`);
    sections.push(
      `Throughput, jobs/s (${integer(jobs)} no-op jobs; ratio to ${baseline}, higher is better)`,
    );
    sections.push(
      table(
        [
          "system",
          "publish 1-by-1",
          "publish bulk",
          "process c=1",
          "process c=10",
          "process c=100",
        ],
        systems.map((system) => [
          label(system),
          cell(lookup, system, baseline, "publish-single", "jobsPerSec", integer),
          cell(lookup, system, baseline, "publish-bulk", "jobsPerSec", integer),
          cell(lookup, system, baseline, "process-c1", "jobsPerSec", integer),
          cell(lookup, system, baseline, "process-c10", "jobsPerSec", integer),
          cell(lookup, system, baseline, "process-c100", "jobsPerSec", integer),
        ]),
      ),
    );
    sections.push(
      `Latency publish → start at ${profile.latencyRatePerSec} jobs/s into an idle worker ` +
        `(concurrency ${profile.latencyConcurrency}), ms p50 / p90 / p99 (ratio of p99, lower is better)`,
    );
    sections.push(
      table(
        ["system", "latency", "latency, random priorities 1–10"],
        measured(
          systems.map((system) => [
            label(system),
            latencyCell(lookup, system, baseline, "latency"),
            latencyCell(lookup, system, baseline, "latency-priority"),
          ]),
        ),
      ),
    );
    const memoryLabel =
      backend === "memory" ? "heap bytes / waiting job" : "backend bytes / waiting job";
    const requestLabel =
      backend === "sqs" ? "SQS requests / job" : backend === "redis" ? "Redis commands / job" : "";
    const costHeader = ["system"];
    if (backend !== "sqs") costHeader.push(memoryLabel);
    if (backend !== "memory") {
      costHeader.push(`${requestLabel} c=10`, `${requestLabel} c=100`);
      if (backend === "redis") {
        costHeader.push(
          "round trips / job c=10",
          "round trips / job c=100",
          "redis-server CPU µs / job c=100",
        );
      }
    }
    if (backend !== "memory") costHeader.push("idle requests / s");
    costHeader.push("worker RSS peak MB c=100", "heap peak MB c=100");
    sections.push(
      "Cost (publish in bulk + process; lower is better; Redis commands include those run inside scripts)",
    );
    sections.push(
      table(
        costHeader,
        measured(
          systems.map((system) => {
            const row = [label(system)];
            if (backend !== "sqs") {
              row.push(
                cell(lookup, system, baseline, "process-c100", "backendBytesPerJob", integer),
              );
            }
            if (backend !== "memory") {
              row.push(
                cell(lookup, system, baseline, "process-c10", "requestsPerJob", decimal),
                cell(lookup, system, baseline, "process-c100", "requestsPerJob", decimal),
              );
              if (backend === "redis") {
                row.push(
                  cell(lookup, system, baseline, "process-c10", "roundTripsPerJob", decimal),
                  cell(lookup, system, baseline, "process-c100", "roundTripsPerJob", decimal),
                  cell(lookup, system, baseline, "process-c100", "backendCpuUsPerJob", decimal),
                );
              }
            }
            if (backend !== "memory") {
              row.push(
                cell(lookup, system, baseline, "idle", "idleRequestsPerSec", decimal, false),
              );
            }
            row.push(
              cell(lookup, system, baseline, "process-c100", "rssPeakMb", integer, false),
              cell(lookup, system, baseline, "process-c100", "heapPeakMb", integer, false),
            );
            return row;
          }),
        ),
      ),
    );
  }
  const headline: Record<string, string> = {
    latency: "p99Ms",
    "latency-priority": "p99Ms",
    idle: "idleRequestsPerSec",
  };
  const noisy = summaries
    .map((summary) => {
      const key = headline[summary.scenario] ?? "jobsPerSec";
      return { summary, key, spread: summary.spreads[key] ?? 0 };
    })
    .filter((entry) => entry.spread > NOISY_SPREAD && entry.summary.scenario !== "idle")
    .sort((a, b) => b.spread - a.spread);
  if (noisy.length > 0) {
    sections.push(
      `Noisy cases: the runs' range exceeds ${NOISY_SPREAD * 100}% of the median ` +
        "(a busy machine; rerun before quoting): " +
        noisy
          .map(
            (e) =>
              `${e.summary.system} ${e.summary.scenario} ${e.key} ±${Math.round((e.spread * 100) / 2)}%`,
          )
          .join("; "),
    );
  }
  const failures = summaries.filter((summary) => summary.failed > 0);
  if (failures.length > 0) {
    sections.push("Failures (first error of each case; details in results.jsonl):");
    sections.push(
      failures
        .map((f) => `- ${f.system} / ${f.scenario}: ${f.failed} failed: ${f.error ?? "?"}`)
        .join("\n"),
    );
  }
  return sections.join("\n\n");
}

/** One case a target reads: a system in a scenario. */
interface CaseRef {
  system: string;
  scenario: ScenarioName;
}

/** What a target measures: a metric of one case, or its ratio to a baseline's case. */
interface Measure {
  /** The target's own case first, then the baseline's for a ratio. */
  cases: CaseRef[];
  key: string;
  /** The value from the medians, or undefined when a case has no finite median. */
  value: (lookup: Lookup) => number | undefined;
}

interface Target {
  issue: string;
  what: string;
  measure: Measure;
  format: Format;
  /** Pass when `value <= limit` (lower is better) or `value >= limit`. */
  compare: "<=" | ">=";
  limit: number;
  /** A stretch goal, shown but not judged. */
  aim?: number;
}

const medianOf = (lookup: Lookup, { system, scenario }: CaseRef, key: string) => {
  const value = lookup.get(system, scenario)?.medians[key];
  return value !== undefined && Number.isFinite(value) ? value : undefined;
};

function metric(system: string, scenario: ScenarioName, key: string): Measure {
  const own = { system, scenario };
  return { cases: [own], key, value: (lookup) => medianOf(lookup, own, key) };
}

function ratioOf(system: string, baseline: string, scenario: ScenarioName, key: string): Measure {
  const own = { system, scenario };
  const base = { system: baseline, scenario };
  return {
    cases: [own, base],
    key,
    value: (lookup) => {
      const a = medianOf(lookup, own, key);
      const b = medianOf(lookup, base, key);
      return a !== undefined && b !== undefined && b !== 0 ? a / b : undefined;
    },
  };
}

const times: Format = (value) => `${value.toFixed(2)}×`;
const ms: Format = (value) => `${value.toFixed(2)} ms`;

/** The performance targets of issues 3 (Redis), 4 (SQS) and 5 (memory). */
function targets(profile: Profile): Target[] {
  const idleBound = 1 + 1 / profile.idleSeconds;
  return [
    {
      issue: "#5",
      what: "memory: processing c=100 vs p-queue",
      measure: ratioOf("tasklane-memory", "p-queue", "process-c100", "jobsPerSec"),
      format: times,
      compare: ">=",
      limit: 1 / 3,
      aim: 0.5,
    },
    {
      issue: "#3",
      what: "redis: processing c=100 vs BullMQ",
      measure: ratioOf("tasklane-redis", "bullmq", "process-c100", "jobsPerSec"),
      format: times,
      compare: ">=",
      limit: 3,
    },
    {
      issue: "#3",
      what: "redis: processing c=10 vs BullMQ",
      measure: ratioOf("tasklane-redis", "bullmq", "process-c10", "jobsPerSec"),
      format: times,
      compare: ">=",
      limit: 2.5,
    },
    {
      issue: "#3",
      what: "redis: commands per job (publish + process), c=10",
      measure: metric("tasklane-redis", "process-c10", "requestsPerJob"),
      format: decimal,
      compare: "<=",
      limit: 8,
    },
    {
      issue: "#3",
      what: "redis: commands per job (publish + process), c=100",
      measure: metric("tasklane-redis", "process-c100", "requestsPerJob"),
      format: decimal,
      compare: "<=",
      limit: 8,
    },
    {
      issue: "#3",
      what: "redis: round trips per job, c=10",
      measure: metric("tasklane-redis", "process-c10", "roundTripsPerJob"),
      format: decimal,
      compare: "<=",
      limit: 0.25,
    },
    {
      issue: "#3",
      what: "redis: round trips per job, c=100",
      measure: metric("tasklane-redis", "process-c100", "roundTripsPerJob"),
      format: decimal,
      compare: "<=",
      limit: 0.25,
    },
    {
      issue: "#3",
      what: "redis: publishMany (chunks of 1,000) vs addBulk",
      measure: ratioOf("tasklane-redis", "bullmq", "publish-bulk", "jobsPerSec"),
      format: times,
      compare: ">=",
      limit: 10,
    },
    {
      issue: "#3",
      what: "redis: latency p50 at 500 jobs/s",
      measure: metric("tasklane-redis", "latency", "p50Ms"),
      format: ms,
      compare: "<=",
      limit: 0.5,
    },
    {
      issue: "#3",
      what: "redis: latency p99 at 500 jobs/s",
      measure: metric("tasklane-redis", "latency", "p99Ms"),
      format: ms,
      compare: "<=",
      limit: 1.5,
    },
    {
      issue: "#3",
      what: "redis: bytes per waiting job",
      measure: metric("tasklane-redis", "process-c100", "backendBytesPerJob"),
      format: integer,
      compare: "<=",
      limit: 200,
      aim: 150,
    },
    {
      issue: "#21",
      what: "redis: processing c=100 with telemetry on (SDK, no exporter) vs off",
      measure: ratioOf("tasklane-redis-otel", "tasklane-redis", "process-c100", "jobsPerSec"),
      format: times,
      compare: ">=",
      limit: 0.9,
    },
    {
      issue: "#21",
      what: "redis: processing c=100 with metrics only (SDK, no exporter) vs off",
      measure: ratioOf("tasklane-redis-metrics", "tasklane-redis", "process-c100", "jobsPerSec"),
      format: times,
      compare: ">=",
      limit: 0.9,
    },
    {
      issue: "#4",
      what: "sqs: processing c=100 vs sqs-consumer",
      measure: ratioOf("tasklane-sqs", "sqs-consumer", "process-c100", "jobsPerSec"),
      format: times,
      compare: ">=",
      limit: 2.5,
    },
    {
      issue: "#4",
      what: "sqs: requests per job (publish + process), c=100",
      measure: metric("tasklane-sqs", "process-c100", "requestsPerJob"),
      format: decimal,
      compare: "<=",
      limit: 0.35,
    },
    {
      issue: "#4",
      what: `sqs: idle requests per second (one lane, 1 s long poll; ≤ ${idleBound.toFixed(2)} allows the window's edges)`,
      measure: metric("tasklane-sqs", "idle", "idleRequestsPerSec"),
      format: decimal,
      compare: "<=",
      limit: idleBound,
    },
  ];
}

/**
 * How many runs a case had and how many failed or lacked the metric, e.g.
 * "tasklane-redis: 3 runs, 2 failed"; and whether every one of them measured it.
 */
function runsOf(lookup: Lookup, ref: CaseRef, key: string): { text: string; complete: boolean } {
  const summary = lookup.get(ref.system, ref.scenario);
  if (summary === undefined) return { text: `${ref.system}: not run`, complete: false };
  const total = summary.runs + summary.failed;
  const parts = [`${ref.system}: ${total} run${total === 1 ? "" : "s"}`];
  if (summary.failed > 0) parts.push(`${summary.failed} failed`);
  const missing = summary.runs - (summary.measuredRuns[key] ?? 0);
  if (missing > 0) parts.push(`${missing} without ${key}`);
  return { text: parts.join(", "), complete: summary.failed === 0 && missing === 0 && total > 0 };
}

/**
 * The Targets table. A target is judged only on the medians of complete cases: a failed
 * repeat (or one without the metric) would leave a median of the runs that happened to
 * work, so such a target is "not measured", with the counts beside it. Targets are set for
 * the full profile: on a quick or partial run (`notJudged` says which) the figures are
 * shown but not judged. A target none of whose cases ran is left out.
 */
export function renderTargets(
  summaries: Summary[],
  profile: Profile,
  notJudged: string | undefined = profile.name === "quick" ? "quick run" : undefined,
): string {
  const lookup = new Lookup(summaries);
  const rows: string[][] = [];
  for (const target of targets(profile)) {
    const { cases, key } = target.measure;
    if (cases.every((ref) => lookup.get(ref.system, ref.scenario) === undefined)) continue;
    const runs = cases.map((ref) => runsOf(lookup, ref, key));
    const value = target.measure.value(lookup);
    const complete = runs.every((run) => run.complete) && value !== undefined;
    let verdict: string;
    if (!complete) verdict = "**not measured**";
    else if (notJudged !== undefined) verdict = `not judged (${notJudged})`;
    else {
      const pass = target.compare === "<=" ? value <= target.limit : value >= target.limit;
      verdict = pass ? "met" : "**not met**";
    }
    const limit = `${target.compare} ${target.format(target.limit)}${target.aim === undefined ? "" : ` (aim ${target.format(target.aim)})`}`;
    rows.push([
      target.issue,
      target.what,
      limit,
      runs.map((run) => run.text).join("; "),
      value === undefined ? NOT_RUN : target.format(value),
      verdict,
    ]);
  }
  if (rows.length === 0) return "";
  const note =
    notJudged === undefined
      ? ""
      : `\n\nThe targets are set for a full run of every case; this one (${notJudged}) is shown, not judged.`;
  return `### Targets${note}\n\n${table(["issue", "target", "limit", "runs", "measured (median)", "verdict"], rows)}`;
}

export function renderLatest(summaries: Summary[], context: ReportContext): string {
  const { machine, profile } = context;
  const versions = Object.entries(context.versions)
    .map(([name, version]) => `${name} ${version}`)
    .join(", ");
  const scenarios = SCENARIOS.filter((name) => summaries.some((s) => s.scenario === name)).join(
    ", ",
  );
  return [
    "# tasklane benchmarks: latest run",
    "",
    `- Date: ${context.date} (run ${context.runId}, ${Math.round(context.durationSec)} s, profile ${profile.name}${context.notJudged !== undefined && profile.name !== "quick" ? `, ${context.notJudged}` : ""})`,
    `- Machine: ${machine.cores} cores, ${machine.cpuModel}, ${machine.memoryGiB} GiB; load average ${machine.loadAverage.join(" ")} at start, ${context.loadAtEnd.join(" ")} at end`,
    `- Node ${machine.node}; commit ${machine.commit}`,
    `- Versions: ${versions}`,
    `- Each case: median of ${profile.repeats} run(s), each in a fresh process, systems alternating; scenarios: ${scenarios}`,
    `- Reproduce: \`${context.command}\``,
    "",
    renderTargets(summaries, profile, context.notJudged),
    "",
    renderTables(summaries, profile),
    "",
  ].join("\n");
}
