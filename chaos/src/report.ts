/** The run's report: markdown for people (and the README), JSON for tools. */
import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { cpus, totalmem } from "node:os";
import { INJECTED } from "./checker.ts";
import { type Figure, meets, type ScenarioResult } from "./scenario.ts";

export interface RunInfo {
  profile: string;
  command: string;
  startedAt: Date;
  durationMs: number;
  strict: boolean;
  /** The machine's 1-minute load average at the start and the end (other work shares it). */
  load: [number, number];
}

export interface Verdict {
  pass: boolean;
  failures: string[];
  /** Targets missed (failures only under --strict). */
  missed: string[];
}

export function verdictOf(results: ScenarioResult[], strict: boolean): Verdict {
  const failures: string[] = [];
  const missed: string[] = [];
  for (const r of results) {
    for (const f of r.failures) failures.push(`${r.name}: ${f}`);
    for (const fig of r.figures) {
      if (!meets(fig))
        missed.push(
          `${r.name}: ${fig.name} = ${num(fig.value)} ${fig.unit}, target ${fig.targetText}`,
        );
    }
  }
  return { pass: failures.length === 0 && (!strict || missed.length === 0), failures, missed };
}

export function machineLine(): string {
  const commit = (() => {
    try {
      const sha = execFileSync("git", ["rev-parse", "--short", "HEAD"], {
        encoding: "utf8",
      }).trim();
      // The committed reports are what a run writes: they do not make the code differ.
      const dirty = execFileSync(
        "git",
        ["status", "--porcelain", "--untracked-files=no", "--", ".", ":!chaos/reports"],
        { encoding: "utf8" },
      ).trim();
      return dirty === "" ? sha : `${sha} (with uncommitted changes)`;
    } catch {
      return "unknown";
    }
  })();
  const cpu = cpus();
  const fauxqs = (() => {
    try {
      const url = new URL("../../node_modules/fauxqs/package.json", import.meta.url);
      return (JSON.parse(readFileSync(url, "utf8")) as { version: string }).version;
    } catch {
      return "?";
    }
  })();
  return [
    `commit ${commit}`,
    `${cpu.length} cores (${cpu[0]?.model.trim() ?? "?"})`,
    `${(totalmem() / 2 ** 30).toFixed(1)} GiB`,
    `Node ${process.versions.node}`,
    `fauxqs ${fauxqs}`,
  ].join(", ");
}

export function num(value: number | undefined): string {
  if (value === undefined || Number.isNaN(value)) return "–";
  if (Number.isInteger(value)) return value.toLocaleString("en-US");
  if (Math.abs(value) >= 100) return Math.round(value).toLocaleString("en-US");
  return value.toFixed(2);
}

function figureRow(f: Figure): string {
  const target =
    f.targetText === undefined ? "" : `${f.targetText} ${meets(f) ? "(met)" : "(**missed**)"}`;
  const n = f.samples === undefined ? "" : ` (n = ${num(f.samples)})`;
  return `| ${f.name} | ${num(f.value)} ${f.unit}${n} | ${target} |`;
}

function causes(r: ScenarioResult): string {
  const by = r.check?.byAttribution ?? {};
  const parts = Object.entries(by)
    .filter(([k]) => k !== "unattributed")
    .map(([k, v]) => `${k} ${num(v)}${INJECTED.has(k as never) ? "" : " (observed)"}`);
  return parts.length === 0 ? "0" : `${num(r.check?.duplicateRuns.length)}: ${parts.join(", ")}`;
}

export function renderReport(info: RunInfo, results: ScenarioResult[], verdict: Verdict): string {
  const lines: string[] = [];
  const minutes = Math.floor(info.durationMs / 60_000);
  const seconds = Math.round((info.durationMs % 60_000) / 1_000);
  lines.push(`# tasklane fault suite: ${info.profile}`, "");
  lines.push(
    `${info.startedAt.toISOString().slice(0, 16).replace("T", " ")} UTC, ${machineLine()}. ` +
      `\`${info.command}\`, ${minutes} min ${seconds} s, load average ${info.load[0].toFixed(1)} at the start and ${info.load[1].toFixed(1)} at the end.`,
    "",
  );
  const checked = results.filter((r) => r.check !== undefined);
  if (checked.length > 0) {
    lines.push(
      verdict.failures.length === 0
        ? "**No acknowledged job lost, no unattributed duplicate run, no double ack, no late ack accepted.**"
        : `**FAILED**: ${verdict.failures.length} failure(s), listed under each scenario.`,
      "",
    );
    lines.push(
      "| scenario | acked jobs | runs | lost | unexpected | not in one terminal state | duplicate runs, by cause | unattributed | double acks / fencing failures |",
      "| --- | --: | --: | --: | --: | --: | --- | --: | --: |",
    );
    for (const r of checked) {
      const c = r.check;
      if (c === undefined) continue;
      const lost = c.lost.length + c.lostAfterSuccess.length;
      lines.push(
        `| ${r.name} | ${num(c.acked)} | ${num(c.runs)} | ${num(lost)} | ${num(c.unexpected.length)} | ${num(c.notExactlyOneTerminal.length)} | ${causes(r)} | ${num(c.unattributed.length)} | ${num(c.doublyAcked.length + c.historyDoubleSucceeded.length)} / ${num(c.fencingFailures.length)} |`,
      );
    }
    lines.push("");
  }
  const targeted = results.flatMap((r) =>
    r.figures.filter((f) => f.target !== undefined).map((f) => ({ r, f })),
  );
  if (targeted.length > 0) {
    lines.push(
      `Targets (printed; asserted with \`--strict\`${info.strict ? ", as in this run" : ""}):`,
      "",
      "| scenario | figure | value | target |",
      "| --- | --- | --: | --- |",
    );
    for (const { r, f } of targeted) {
      lines.push(
        `| ${r.name} | ${f.name} | ${num(f.value)} ${f.unit} | ${f.targetText} ${meets(f) ? "met" : "**missed**"} |`,
      );
    }
    lines.push("");
  }
  for (const r of results) {
    lines.push(`## ${r.name}: ${r.title}`, "");
    const params = Object.entries(r.params)
      .map(([k, v]) => `${k} ${typeof v === "number" ? num(v) : v}`)
      .join(", ");
    lines.push(`${r.backend}; ${params}. ${(r.durationMs / 1_000).toFixed(0)} s.`, "");
    lines.push("| figure | value | target |", "| --- | --: | --- |");
    for (const f of r.figures) lines.push(figureRow(f));
    lines.push("");
    const c = r.check;
    if (c !== undefined && (c.unknownOutcomes > 0 || c.lostAfterSuccess.length > 0)) {
      lines.push(
        `Settling calls whose answer never came (a dropped connection, a killed process): ${num(c.unknownOutcomes)}.` +
          (c.lostAfterSuccess.length > 0
            ? ` Jobs run and acked whose record the crash then lost: ${num(c.lostAfterSuccess.length)}.`
            : ""),
        "",
      );
    }
    for (const note of r.notes) lines.push(`- ${note}`);
    if (r.notes.length > 0) lines.push("");
    if (r.failures.length > 0) {
      lines.push("Failures:", "");
      for (const f of r.failures) lines.push(`- ${f}`);
      lines.push("");
    }
  }
  return `${lines.join("\n")}`;
}
