/**
 * Does the conformance suite catch small bugs? Plants each bug below, one at a time, in
 * this working tree, runs the conformance suite of the adapters it concerns, records
 * which tests failed, and puts the file back (also on Ctrl-C or an error).
 *
 *   npm run plant-bugs                 # every bug
 *   npm run plant-bugs -- backoff ack  # the bugs whose names contain "backoff" or "ack"
 *
 * A bug that no test catches is printed as MISSED, and the script exits 1. Run it on a
 * clean tree: it refuses when a file it would touch has uncommitted changes.
 */
import { execFileSync, spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

interface Bug {
  name: string;
  /** What the bug breaks, in a few words. */
  breaks: string;
  file: string;
  find: string;
  replace: string;
  /** The conformance runs that must catch it: vitest project and test file. */
  suites: Suite[];
}

type Suite = "memory" | "redis";

const SUITES: Record<Suite, { project: string; file: string }> = {
  memory: { project: "adapter-memory", file: "packages/adapter-memory/test/conformance.test.ts" },
  redis: { project: "adapter-redis", file: "packages/adapter-redis/test/conformance.test.ts" },
};

export const BUGS: Bug[] = [
  {
    name: "backoff-attempt",
    breaks: "the worker computes the backoff of the next attempt, not of the one that failed",
    file: "packages/core/src/worker/settler.ts",
    find: "backoffMs(task.retry, h.job.attempt, random)",
    replace: "backoffMs(task.retry, h.job.attempt + 1, random)",
    suites: ["memory", "redis"],
  },
  {
    name: "dead-letter-at-max-attempts",
    breaks: "a job gets one attempt more than maxAttempts",
    file: "packages/core/src/worker/settler.ts",
    find: "h.job.attempt >= task.retry.maxAttempts",
    replace: "h.job.attempt > task.retry.maxAttempts",
    suites: ["memory", "redis"],
  },
  {
    name: "stop-release-loop",
    breaks: "stop keeps prefetched jobs until the running ones end",
    file: "packages/core/src/worker/create-worker.ts",
    find: `    for (const h of held) {
      if (!h.running && !h.settled) settler.settle(h, { kind: "release" });
    }
`,
    replace: "",
    suites: ["memory", "redis"],
  },
  {
    name: "release-not-sent",
    breaks: "the worker's release answers ok without calling the adapter",
    file: "packages/core/src/worker/settler.ts",
    find: "(b) => ls.store.release(b.map((h) => ({ lock: h.job.lock, uncounted: true as const }))),",
    replace: 'async (b) => b.map(() => "ok" as const),',
    suites: ["memory", "redis"],
  },
  {
    name: "redis-ack-fast-path-token",
    breaks: "Redis ack's fast path does not compare the token",
    file: "packages/adapter-redis/src/lua/ack.lua",
    find: "if exp > NOW and token == tokenAt(tokens, i) then",
    replace: "if exp > NOW then",
    suites: ["redis"],
  },
  {
    name: "memory-max-stalls",
    breaks: "the memory adapter tolerates one stall more than maxStalls",
    file: "packages/adapter-memory/src/memory-lane.ts",
    find: "if (rec.stalls > this.maxStalls) {",
    replace: "if (rec.stalls > this.maxStalls + 1) {",
    suites: ["memory"],
  },
  {
    name: "redis-max-stalls",
    breaks: "the Redis adapter tolerates one stall more than maxStalls",
    file: "packages/adapter-redis/src/lua/_common.lua",
    find: "if rec.stalls > maxStalls() then",
    replace: "if rec.stalls > maxStalls() + 1 then",
    suites: ["redis"],
  },
  {
    name: "memory-long-poll",
    breaks: "the memory adapter's reserve ignores waitMs",
    file: "packages/adapter-memory/src/memory-lane.ts",
    find: "const waitMs = Math.min(options.waitMs, MAX_TIMER_MS);",
    replace: "const waitMs = 0;",
    suites: ["memory"],
  },
];

interface JsonReport {
  testResults: Array<{
    assertionResults: Array<{ fullName: string; status: string }>;
  }>;
}

/** The full names of the tests that failed in one vitest run of `suite`. */
function failedTests(suite: Suite): string[] {
  const { project, file } = SUITES[suite];
  const dir = mkdtempSync(join(tmpdir(), "plant-bugs-"));
  const out = join(dir, "report.json");
  try {
    spawnSync(
      "npx",
      ["vitest", "run", "--project", project, file, "--reporter=json", `--outputFile=${out}`],
      { stdio: ["ignore", "ignore", "inherit"] },
    );
    const report = JSON.parse(readFileSync(out, "utf8")) as JsonReport;
    return report.testResults.flatMap((r) =>
      r.assertionResults.filter((a) => a.status === "failed").map((a) => a.fullName),
    );
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

function main(): number {
  const filters = process.argv.slice(2);
  const bugs = BUGS.filter((b) => filters.length === 0 || filters.some((f) => b.name.includes(f)));
  const dirty = execFileSync("git", ["status", "--porcelain", "--", ...bugs.map((b) => b.file)], {
    encoding: "utf8",
  }).trim();
  if (dirty) {
    console.error(`Uncommitted changes in files this would plant bugs in:\n${dirty}`);
    return 2;
  }
  // A clean suite first: a failure it already has would be counted as a catch.
  const baseline = new Set<Suite>(bugs.flatMap((b) => b.suites));
  for (const suite of baseline) {
    const failed = failedTests(suite);
    if (failed.length > 0) {
      console.error(`The ${suite} suite fails without any planted bug:\n  ${failed.join("\n  ")}`);
      return 2;
    }
  }
  let missed = 0;
  for (const bug of bugs) {
    const original = readFileSync(bug.file, "utf8");
    const at = original.indexOf(bug.find);
    if (at < 0 || original.indexOf(bug.find, at + 1) >= 0) {
      console.error(`${bug.name}: the text to change is not in ${bug.file} exactly once`);
      return 2;
    }
    const restore = () => writeFileSync(bug.file, original);
    process.once("SIGINT", () => {
      restore();
      process.exit(130);
    });
    writeFileSync(bug.file, original.replace(bug.find, bug.replace));
    try {
      for (const suite of bug.suites) {
        const failed = failedTests(suite);
        if (failed.length === 0) missed++;
        console.log(
          `${failed.length > 0 ? "caught" : "MISSED"}  ${bug.name} (${bug.breaks}) on ${suite}`,
        );
        for (const name of failed) console.log(`          by: ${name}`);
      }
    } finally {
      restore();
      process.removeAllListeners("SIGINT");
    }
  }
  return missed > 0 ? 1 : 0;
}

process.exitCode = main();
