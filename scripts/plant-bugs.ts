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
import { execFileSync, spawn } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
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

/** Each suite's vitest project, test file, and how long it may run before it counts as hung. */
const SUITES: Record<Suite, { project: string; file: string; timeoutMs: number }> = {
  memory: {
    project: "adapter-memory",
    file: "packages/adapter-memory/test/conformance.test.ts",
    timeoutMs: 3 * 60_000,
  },
  redis: {
    project: "adapter-redis",
    file: "packages/adapter-redis/test/conformance.test.ts",
    timeoutMs: 8 * 60_000,
  },
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
  {
    name: "schedule-catch-up-one",
    breaks: 'catchUp "one" runs the earliest missed slot instead of the latest',
    file: "packages/core/src/schedule.ts",
    find: 'else if (spec.catchUp === "one") slots = [latest];',
    replace: 'else if (spec.catchUp === "one") slots = due.slice(0, 1);',
    suites: ["memory", "redis"],
  },
  {
    name: "memory-schedule-fire-cas",
    breaks: "the memory adapter fires a schedule whose revision moved on",
    file: "packages/adapter-memory/src/memory-lane.ts",
    find: 'if (!this.schedules.matches(record.id, expectRevision)) return { status: "stale" };',
    replace: "",
    suites: ["memory"],
  },
  {
    name: "redis-schedule-cas",
    breaks: "a Redis schedule write ignores the revision it expects",
    file: "packages/adapter-redis/src/lua/_common.lua",
    find: 'if expect ~= "" and tonumber(expect) ~= revision then return -1 end',
    replace: "",
    suites: ["redis"],
  },
];

interface SuiteRun {
  /** Full names of the tests that failed. */
  failed: string[];
  /** The run did not finish in time (a bug can make a suite hang): it was killed. */
  hung: boolean;
}

/** Run the conformance suite of `suite` and collect the tests that failed. */
async function runSuite(suite: Suite): Promise<SuiteRun> {
  const { project, file, timeoutMs } = SUITES[suite];
  const dir = mkdtempSync(join(tmpdir(), "plant-bugs-"));
  const out = join(dir, "failed.txt");
  try {
    // Its own process group, so a hung run is killed with every worker it started.
    const child = spawn(
      "npx",
      [
        "vitest",
        "run",
        "--project",
        project,
        file,
        "--reporter=./scripts/failed-tests-reporter.ts",
      ],
      {
        detached: true,
        stdio: ["ignore", "ignore", "inherit"],
        env: { ...process.env, PLANT_BUGS_FAILED: out },
      },
    );
    let hung = false;
    const timer = setTimeout(() => {
      hung = true;
      if (child.pid !== undefined) process.kill(-child.pid, "SIGKILL");
    }, timeoutMs);
    await new Promise((resolve) => child.on("exit", resolve));
    clearTimeout(timer);
    const failed = existsSync(out) ? readFileSync(out, "utf8").split("\n").filter(Boolean) : [];
    return { failed, hung };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

async function main(): Promise<number> {
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
  for (const suite of new Set<Suite>(bugs.flatMap((b) => b.suites))) {
    const { failed, hung } = await runSuite(suite);
    if (failed.length > 0 || hung) {
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
    const onSignal = () => {
      restore();
      process.exit(130);
    };
    process.once("SIGINT", onSignal);
    process.once("SIGTERM", onSignal);
    writeFileSync(bug.file, original.replace(bug.find, bug.replace));
    try {
      for (const suite of bug.suites) {
        const { failed, hung } = await runSuite(suite);
        const caught = failed.length > 0 || hung;
        if (!caught) missed++;
        console.log(`${caught ? "caught" : "MISSED"}  ${bug.name} (${bug.breaks}) on ${suite}`);
        for (const name of failed) console.log(`          by: ${name}`);
        if (hung)
          console.log(
            `          and the suite hung: killed after ${SUITES[suite].timeoutMs / 1000} s`,
          );
      }
    } finally {
      restore();
      process.off("SIGINT", onSignal);
      process.off("SIGTERM", onSignal);
    }
  }
  return missed > 0 ? 1 : 0;
}

process.exitCode = await main();
