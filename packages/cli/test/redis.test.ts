/**
 * The `tasklane` binary against a real redis-server (started by the tests on a free port),
 * managing the jobs of an application that runs in the test process: its tasks come from
 * the same config module the CLI loads (fixtures/app.config.ts), and its worker runs them.
 */
import { randomUUID } from "node:crypto";
import { existsSync } from "node:fs";
import { createRedisAdapter } from "@tasklane/adapter-redis";
import { createTasklane, type JobInfo, type Tasklane } from "@tasklane/core";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { type RedisServer, startRedis } from "../../adapter-redis/test/helpers.ts";
import { failing, flaky, lanes, ran, report, tasks } from "./fixtures/app.config.ts";
import { CONFIG, launchCli, MAIN, ndjson, runCli, waitFor } from "./helpers.ts";

let redis: RedisServer;
const apps: Tasklane[] = [];

beforeAll(async () => {
  redis = await startRedis();
});
afterEach(async () => {
  failing.clear();
  await Promise.all(apps.splice(0).map((tl) => tl.close({ graceMs: 1_000 })));
});
afterAll(async () => {
  await redis?.stop();
});

/** A key prefix of its own per test: the tests share one server. */
const newPrefix = () => `cli${randomUUID().slice(0, 8)}`;

/** The application: publishes and runs jobs, announcing their lifecycle to every process. */
function createApp(prefix: string, namespace?: string): Tasklane {
  const tl = createTasklane({
    adapter: createRedisAdapter({ connection: redis.url, prefix, lifecycleEvents: true }),
    lanes,
    tasks,
    ...(namespace !== undefined ? { namespace } : {}),
  });
  apps.push(tl);
  return tl;
}

/** The CLI's environment for an application on `prefix`. */
const cliEnv = (prefix: string, extra: Record<string, string> = {}) => ({
  TASKLANE_ADAPTER: "redis",
  REDIS_URL: redis.url,
  REDIS_PREFIX: prefix,
  TASKLANE_CONFIG: CONFIG,
  ...extra,
});

let nextN = 1_000;
/** A payload number no other test uses (`ran` is shared by the file's tests). */
const freshN = () => nextN++;

const counts = (tl: Tasklane, lane = "default") => tl.lane(lane).counts();

describe("enqueue", () => {
  it("publishes a job the application runs; --job-id makes it idempotent", async () => {
    const prefix = newPrefix();
    const app = createApp(prefix);
    const n = freshN();
    const first = await runCli(["enqueue", "flaky", `{"n":${n}}`, "--job-id", `job-${n}`], {
      env: cliEnv(prefix),
    });
    expect(first).toEqual({
      code: 0,
      stdout: `created job job-${n} in lane default\n`,
      stderr: "",
    });
    const again = await runCli(["enqueue", "flaky", `{"n":${n}}`, "--job-id", `job-${n}`], {
      env: cliEnv(prefix),
    });
    expect(again).toEqual({
      code: 0,
      stdout: `duplicate: job job-${n} already exists in lane default (nothing written)\n`,
      stderr: "",
    });
    const json = await runCli(
      ["enqueue", "flaky", `{"n":${n}}`, "--job-id", `job-${n}`, "--json"],
      { env: cliEnv(prefix) },
    );
    expect(ndjson(json.stdout)).toEqual([
      { id: `job-${n}`, status: "duplicate", lane: "default", task: "flaky" },
    ]);
    expect(await counts(app)).toMatchObject({ waiting: 1 });
    const job = await app.lane("default").get(`job-${n}`);
    expect(job).toMatchObject({ task: "flaky", payload: `{"n":${n}}`, state: "waiting" });

    await app.worker().start();
    await waitFor(async () => (await counts(app)).succeeded === 1, "the job to run");
    expect(ran.filter((x) => x === n)).toEqual([n]);
  });

  it("--delay, --priority and --app-data reach the job; stdin gives the payload", async () => {
    const prefix = newPrefix();
    const app = createApp(prefix);
    const before = Date.now();
    const { code, stdout } = await runCli(
      [
        "enqueue",
        "report",
        "-",
        "--delay",
        "1h",
        "--priority",
        "7",
        "--app-data",
        '{"by":"ops"}',
        "--json",
      ],
      { env: cliEnv(prefix), input: '{"day":"2026-11-26"}' },
    );
    expect(code).toBe(0);
    const [out] = ndjson<{ id: string }>(stdout);
    const job = (await app.lane("low").get(out?.id ?? "")) as JobInfo;
    expect(job).toMatchObject({
      state: "delayed",
      priority: 7,
      appData: '{"by":"ops"}',
      payload: '{"day":"2026-11-26"}',
    });
    expect(job.runAt).toBeGreaterThanOrEqual(before + 3_600_000);
    expect(job.runAt).toBeLessThan(Date.now() + 3_600_000 + 1_000);
  });

  it("--debounce collapses publishes of one key across CLI runs; --group on a lane without groups exits 2", async () => {
    const prefix = newPrefix();
    const app = createApp(prefix);
    const publish = (n: number, ...extra: string[]) =>
      runCli(
        ["enqueue", "report", `{"day":"d${n}"}`, "--debounce", "daily", "--window", "1h", ...extra],
        {
          env: cliEnv(prefix),
        },
      );
    const first = await publish(1);
    expect(first.code).toBe(0);
    const id = /^created job (\S+) in lane low$/.exec(first.stdout.trim())?.[1] as string;
    expect(id).toBeDefined();
    expect(await publish(2)).toEqual({
      code: 0,
      stdout: `debounced into job ${id} in lane low (its payload replaced)\n`,
      stderr: "",
    });
    expect((await publish(3, "--keep", "first")).stdout).toBe(
      `debounced into job ${id} in lane low (its payload kept)\n`,
    );
    expect(await counts(app, "low")).toMatchObject({ waiting: 0, delayed: 1 });
    // keep "last" replaced the payload; the later keep "first" did not.
    expect((await app.lane("low").get(id))?.payload).toBe('{"day":"d2"}');

    const grouped = await runCli(["enqueue", "report", '{"day":"x"}', "--group", "acme"], {
      env: cliEnv(prefix),
    });
    // Redis has fair groups: the capability check passes, and core refuses the group on a
    // lane opened without `groups`
    expect(grouped).toEqual({
      code: 2,
      stdout: "",
      stderr: 'error: Invalid option options.group = "acme": lane "low" has no groups option\n',
    });
    expect(await counts(app, "low")).toMatchObject({ waiting: 0, delayed: 1 });
  });

  it("a task no config defines goes to --lane unvalidated, with a warning", async () => {
    const prefix = newPrefix();
    const app = createApp(prefix);
    const { code, stdout, stderr } = await runCli(
      ["enqueue", "resize", '{"url":"s3://bucket/a.png"}', "--lane", "high", "--job-id", "r1"],
      { env: cliEnv(prefix, { TASKLANE_CONFIG: "", TASKLANE_LANES: "high" }) },
    );
    expect({ code, stdout, stderr }).toEqual({
      code: 0,
      stdout: "created job r1 in lane high\n",
      stderr:
        'warning: task "resize" has no definition here: its payload is published unvalidated\n',
    });
    expect(await app.lane("high").get("r1")).toMatchObject({
      task: "resize",
      payload: '{"url":"s3://bucket/a.png"}',
    });
  });
});

describe("status", () => {
  it("prints a table of counts per lane, paused lanes marked, and notes on what the numbers are", async () => {
    const prefix = newPrefix();
    const app = createApp(prefix);
    await app.publishMany(flaky, [{ payload: { n: freshN() } }, { payload: { n: freshN() } }]);
    await app.publish(flaky, { n: freshN() }, { delayMs: 3_600_000 });
    await app.publish(report, { day: "2026-11-26" });
    expect(await runCli(["pause", "low"], { env: cliEnv(prefix) })).toEqual({
      code: 0,
      stdout: "paused lane low\n",
      stderr: "",
    });

    const { code, stdout, stderr } = await runCli(["status"], { env: cliEnv(prefix) });
    expect(stderr).toBe("");
    expect(code).toBe(0);
    const [table, notes] = stdout.split("\n\n");
    expect(table).toBe(
      [
        "lane          waiting  delayed  blocked  active  failed  succeeded  canceled  expired  finished/s  failed/s  wait p50  wait p99  run p50  run p99",
        "high                0        0        0       0       0          0         0        0        0.00      0.00         -         -        -        -",
        "default             2        1        0       0       0          0         0        0        0.00      0.00         -         -        -        -",
        "low (paused)        1        0        0       0       0          0         0        0        0.00      0.00         -         -        -        -",
      ].join("\n"),
    );
    expect(notes).toMatch(
      /^rates: today's average \(\d{4}-\d\d-\d\d UTC, over the [\d.]+ (ms|s|min|h) since midnight\); --interval 10s measures them now\npercentiles: \d{4}-\d\d-\d\d \(UTC\); wait is due → started, run is started → finished\n$/,
    );

    const json = await runCli(["status", "--json", "--lane", "default,low"], {
      env: cliEnv(prefix),
    });
    expect(json.code).toBe(0);
    const rows = ndjson(json.stdout);
    expect(rows.map((r) => [r.lane, r.paused, r.counts])).toEqual([
      [
        "default",
        false,
        {
          waiting: 2,
          delayed: 1,
          blocked: 0,
          active: 0,
          failed: 0,
          succeeded: 0,
          canceled: 0,
          expired: 0,
        },
      ],
      [
        "low",
        true,
        {
          waiting: 1,
          delayed: 0,
          blocked: 0,
          active: 0,
          failed: 0,
          succeeded: 0,
          canceled: 0,
          expired: 0,
        },
      ],
    ]);
    expect(rows[0]).toMatchObject({
      approximate: false,
      rates: { window: "today", finishedPerSec: 0, failedPerSec: 0 },
      wait: { count: 0, p50Ms: null, p99Ms: null },
      run: { count: 0, p50Ms: null, p99Ms: null },
    });

    expect(await runCli(["resume", "low", "--json"], { env: cliEnv(prefix) })).toMatchObject({
      code: 0,
      stdout: '{"lane":"low","paused":false}\n',
    });
    expect(await app.lane("low").isPaused()).toBe(false);
  });

  it("--interval measures the jobs that ran during it; percentiles come from the day's stats", async () => {
    const prefix = newPrefix();
    const app = createApp(prefix);
    await app.worker({ concurrency: 5 }).start();
    const cli = launchCli(["status", "--interval", "4s", "--json", "--lane", "default"], {
      env: cliEnv(prefix),
    });
    await cli.waitFor("stderr", /measuring rates over 4 s…/);
    await app.publishMany(
      flaky,
      Array.from({ length: 20 }, () => ({ payload: { n: freshN() } })),
    );
    await waitFor(async () => (await counts(app)).succeeded === 20, "20 jobs to run");
    const { code, stdout } = await cli.done;
    expect(code).toBe(0);
    const [row] = ndjson<{
      rates: {
        window: string;
        seconds: number;
        finishedPerSec: number;
        startedPerSec: number;
        failedPerSec: number;
      };
      wait: { count: number; p50Ms: number; p99Ms: number };
      run: { count: number; p50Ms: number; p99Ms: number };
      counts: { succeeded: number };
    }>(stdout);
    expect(row?.counts.succeeded).toBe(20);
    expect(row?.rates.window).toBe("interval");
    expect(row?.rates.seconds).toBeGreaterThanOrEqual(4);
    expect(Math.round((row?.rates.finishedPerSec ?? 0) * (row?.rates.seconds ?? 0))).toBe(20);
    expect(Math.round((row?.rates.startedPerSec ?? 0) * (row?.rates.seconds ?? 0))).toBe(20);
    expect(row?.rates.failedPerSec).toBe(0);
    expect(row?.wait.count).toBe(20);
    expect(row?.run.count).toBe(20);
    expect(row?.run.p50Ms).toBeGreaterThanOrEqual(0);
    expect(row?.run.p99Ms).toBeGreaterThanOrEqual(row?.run.p50Ms ?? 0);

    // Without --interval: today's count over the time since midnight UTC
    const today = ndjson<{ rates: { window: string; seconds: number; finishedPerSec: number } }>(
      (await runCli(["status", "--json", "--lane", "default"], { env: cliEnv(prefix) })).stdout,
    )[0];
    expect(today?.rates.window).toBe("today");
    expect(Math.round((today?.rates.finishedPerSec ?? 0) * (today?.rates.seconds ?? 0))).toBe(20);
  });
});

describe("jobs", () => {
  it("a failed job: list --state failed shows it, get shows its error, retry re-queues it and the worker runs it", async () => {
    const prefix = newPrefix();
    const app = createApp(prefix);
    const [ok, bad, ok2] = [freshN(), freshN(), freshN()];
    failing.add(bad);
    const published = await app.publishMany(
      flaky,
      [ok, bad, ok2].map((n) => ({ payload: { n } })),
    );
    const badId = published[1]?.id as string;
    await app.worker().start();
    await waitFor(async () => {
      const c = await counts(app);
      return c.succeeded === 2 && c.failed === 1;
    }, "two jobs to succeed and one to fail");

    const listed = await runCli(["jobs", "list", "--state", "failed", "--json"], {
      env: cliEnv(prefix),
    });
    expect(listed.code).toBe(0);
    const jobs = ndjson<JobInfo>(listed.stdout);
    expect(jobs).toHaveLength(1);
    expect(jobs[0]).toMatchObject({
      id: badId,
      lane: "default",
      task: "flaky",
      state: "failed",
      attempt: 1,
      payload: `{"n":${bad}}`,
      error: {
        name: "UnrecoverableError",
        message: `job ${bad} was told to fail`,
        reason: "unrecoverable",
      },
    });

    const human = await runCli(["jobs", "list", "--state", "failed", "--lane", "default"], {
      env: cliEnv(prefix),
    });
    const lines = human.stdout.trimEnd().split("\n");
    expect(lines).toHaveLength(2);
    expect(lines[0]).toBe(
      "id                                    lane          state      task              attempt  priority  published                 error",
    );
    expect(lines[1]).toMatch(
      new RegExp(
        `^${badId}  default       failed     flaky                   1         0  \\d{4}-\\d\\d-\\d\\dT[\\d:.]+Z  UnrecoverableError: job ${bad} was told to fail$`,
      ),
    );

    const shown = await runCli(["jobs", "get", badId], { env: cliEnv(prefix) });
    expect(shown.code).toBe(0);
    expect(shown.stdout).toContain(
      `id         ${badId}\nlane       default\ntask       flaky\nstate      failed\nattempt    1\n`,
    );
    expect(shown.stdout).toContain(
      `error      UnrecoverableError: job ${bad} was told to fail (reason: unrecoverable)\n`,
    );
    expect(shown.stdout).toMatch(/^history {4}\S+ {2}published$/m);
    expect(shown.stdout).toMatch(/^ {11}\S+ {2}failed {2}unrecoverable$/m);

    failing.delete(bad);
    const retried = await runCli(["jobs", "retry", badId, "--lane", "default"], {
      env: cliEnv(prefix),
    });
    expect(retried).toEqual({ code: 0, stdout: "default: retried 1 of 1 job\n", stderr: "" });
    await waitFor(async () => (await counts(app)).succeeded === 3, "the retried job to run");
    expect(ran.filter((n) => n === bad)).toEqual([bad, bad]);
    expect((await app.lane("default").get(badId))?.state).toBe("succeeded");

    const again = await runCli(["jobs", "retry", badId, "--lane", "default"], {
      env: cliEnv(prefix),
    });
    expect(again).toEqual({
      code: 1,
      stdout: "default: retried 0 of 1 job\n",
      stderr: "error: 1 of 1 jobs were not retried: not failed, or not found in lane default\n",
    });

    const missing = await runCli(["jobs", "get", "no-such-job"], { env: cliEnv(prefix) });
    expect(missing).toEqual({
      code: 1,
      stdout: "",
      stderr: "error: job no-such-job not found in lanes high, default, low\n",
    });
  });

  it("retry --all walks the failed jobs in batches and retries each once, though the worker fails them again", async () => {
    const prefix = newPrefix();
    const app = createApp(prefix);
    const numbers = Array.from({ length: 250 }, freshN);
    for (const n of numbers) failing.add(n);
    await app.publishMany(
      flaky,
      numbers.map((n) => ({ payload: { n } })),
    );
    await app.worker({ concurrency: 20 }).start();
    await waitFor(async () => (await counts(app)).failed === 250, "250 jobs to fail");

    // --limit and --task first: ten of them
    const some = await runCli(
      ["jobs", "retry", "--all", "--lane", "default", "--task", "flaky", "--limit", "10", "--json"],
      { env: cliEnv(prefix) },
    );
    expect(some.code).toBe(0);
    expect(ndjson(some.stdout)).toEqual([
      { lane: "default", action: "retry", matched: 10, changed: 10 },
    ]);
    const noneOfThatTask = await runCli(
      ["jobs", "retry", "--all", "--lane", "default", "--task", "report", "--json"],
      { env: cliEnv(prefix) },
    );
    expect(ndjson(noneOfThatTask.stdout)).toEqual([
      { lane: "default", action: "retry", matched: 0, changed: 0 },
    ]);
    await waitFor(async () => (await counts(app)).failed === 250, "the ten to fail again");

    // The worker keeps failing them: every retried job is back among the failed at once.
    // Small pages and batches make the walk slow enough for the worker to fail retried jobs
    // again behind the cursor while it goes on: they are not retried a second time.
    const all = await runCli(
      ["jobs", "retry", "--all", "--lane", "default", "--batch-size", "5", "--page-size", "5"],
      { env: cliEnv(prefix) },
    );
    expect(all).toEqual({
      code: 0,
      stdout: "default: retried 250 jobs (250 matched)\n",
      stderr: "",
    });
    await waitFor(async () => (await counts(app)).failed === 250, "them to fail again");
    expect(ran.filter((x) => numbers.includes(x))).toHaveLength(250 + 10 + 250);
  });

  it("cancel by ids prints each result and exits 1 for what was not canceled; cancel --all and delete --all", async () => {
    const prefix = newPrefix();
    const app = createApp(prefix);
    for (const id of ["a", "b", "c"]) await app.publish(flaky, { n: freshN() }, { jobId: id });
    await app.publish(flaky, { n: freshN() }, { jobId: "d", delayMs: 3_600_000 });

    const byIds = await runCli(["jobs", "cancel", "a", "b", "nope", "--lane", "default"], {
      env: cliEnv(prefix),
    });
    expect(byIds).toEqual({
      code: 1,
      stdout: "a  canceled\nb  canceled\nnope  not_found\n",
      stderr: "error: 1 of 3 not canceled: nope (not found)\n",
    });
    const rest = await runCli(["jobs", "cancel", "--all", "--lane", "default"], {
      env: cliEnv(prefix),
    });
    expect(rest).toEqual({ code: 0, stdout: "default: canceled 2 jobs (2 matched)\n", stderr: "" });
    expect(await counts(app)).toMatchObject({ waiting: 0, delayed: 0, canceled: 4 });

    const deleted = await runCli(
      ["jobs", "delete", "--all", "--state", "canceled", "--lane", "default", "--json"],
      { env: cliEnv(prefix) },
    );
    expect(ndjson(deleted.stdout)).toEqual([
      { lane: "default", action: "delete", matched: 4, changed: 4 },
    ]);
    expect(await counts(app)).toMatchObject({ canceled: 0 });
    const gone = await runCli(["jobs", "delete", "a", "--lane", "default"], {
      env: cliEnv(prefix),
    });
    expect(gone).toEqual({
      code: 1,
      stdout: "default: deleted 0 of 1 job\n",
      stderr:
        "error: 1 of 1 jobs were not deleted: active (cancel them first), or not found in lane default\n",
    });
    const noLane = await runCli(["jobs", "cancel", "a"], { env: cliEnv(prefix) });
    expect(noLane).toEqual({
      code: 2,
      stdout: "",
      stderr: "error: --lane: which lane are the jobs in? (lanes: high, default, low)\n",
    });
  });

  it("Ctrl-C during a bulk operation stops after the batch in flight: exit 130, and what it printed is what changed", async () => {
    const prefix = newPrefix();
    const app = createApp(prefix);
    await app.publishMany(
      flaky,
      Array.from({ length: 10_000 }, () => ({ payload: { n: freshN() } })),
    );
    const cli = launchCli(
      ["jobs", "cancel", "--all", "--lane", "default", "--batch-size", "5", "--page-size", "5"],
      { env: cliEnv(prefix) },
    );
    await waitFor(async () => (await counts(app)).canceled >= 100, "the cancel to be under way");
    cli.child.kill("SIGINT");
    const { code, stdout, stderr } = await cli.done;
    expect(stderr).toBe(
      "error: interrupted: stopped after the batch in flight (see the counts above)\n",
    );
    expect(code).toBe(130);
    const printed = /^default: canceled (\d+) jobs \((\d+) matched\)\n$/.exec(stdout);
    const changed = Number(printed?.[1]);
    expect(printed?.[2]).toBe(printed?.[1]);
    expect(changed).toBeLessThan(10_000);
    // nothing half-done and nothing lost: every job is either canceled (and counted) or waiting
    expect(await counts(app)).toMatchObject({ canceled: changed, waiting: 10_000 - changed });
  });

  it("list pages through 2,000 jobs in small pages, --limit stops early, and a reader that goes away ends it with exit 0", async () => {
    const prefix = newPrefix();
    const app = createApp(prefix);
    await app.publishMany(
      flaky,
      Array.from({ length: 2_000 }, () => ({ payload: { n: freshN() } })),
    );
    const all = await runCli(
      ["jobs", "list", "--lane", "default", "--state", "waiting", "--page-size", "7", "--json"],
      { env: cliEnv(prefix) },
    );
    expect(all.code).toBe(0);
    const ids = ndjson<JobInfo>(all.stdout).map((j) => j.id);
    expect(new Set(ids).size).toBe(2_000);

    const five = await runCli(["jobs", "list", "--limit", "5", "--json"], { env: cliEnv(prefix) });
    expect(ndjson<JobInfo>(five.stdout).map((j) => j.id)).toEqual(ids.slice(0, 5));

    // `tasklane jobs list | head -1`: the pipe closes after the first line
    const cli = launchCli(["jobs", "list", "--json", "--page-size", "50"], { env: cliEnv(prefix) });
    await cli.waitFor("stdout", /\n/);
    cli.child.stdout.destroy();
    const { code, stderr } = await cli.done;
    expect(stderr).toBe("");
    expect(code).toBe(0);
  });

  it("bulk operations draw a progress bar on a terminal", async () => {
    if (!existsSync("/usr/bin/script")) throw new Error("needs /usr/bin/script (util-linux)");
    const prefix = newPrefix();
    const app = createApp(prefix);
    await app.publishMany(
      flaky,
      Array.from({ length: 150 }, () => ({ payload: { n: freshN() } })),
    );
    // script(1) gives the CLI a pseudo-terminal, as a person's shell would
    const command = [
      process.execPath,
      "--conditions=source",
      MAIN,
      "jobs",
      "cancel",
      "--all",
      "--lane",
      "default",
      "--batch-size",
      "50",
    ]
      .map((word) => `'${word}'`)
      .join(" ");
    const { spawn } = await import("node:child_process");
    const child = spawn("/usr/bin/script", ["-qec", command, "/dev/null"], {
      env: { ...process.env, ...cliEnv(prefix), NODE_OPTIONS: "" },
    });
    let output = "";
    child.stdout.on("data", (chunk: Buffer) => {
      output += chunk;
    });
    const code = await new Promise<number | null>((resolve) => child.on("close", resolve));
    expect(code).toBe(0);
    expect(output).toContain("cancel ");
    expect(output).toContain("100% | 150/150 jobs | default");
    expect(output).toContain("default: canceled 150 jobs (150 matched)");
    expect(await counts(app)).toMatchObject({ waiting: 0, canceled: 150 });
  });
});

describe("tail", () => {
  it("prints the events of other processes' jobs and exits 0 on SIGINT", async () => {
    const prefix = newPrefix();
    const app = createApp(prefix);
    await app.worker().start();
    const cli = launchCli(["tail", "--json"], { env: cliEnv(prefix) });
    expect(await cli.waitFor("stderr", /\n/)).toBe(
      "watching lanes high, default, low on redis; Ctrl-C to stop\n",
    );
    const { id } = await app.publish(flaky, { n: freshN() });
    await cli.waitFor("stdout", /"type":"succeeded"/);
    cli.child.kill("SIGINT");
    const { code, stdout } = await cli.done;
    expect(code).toBe(0);
    const events = ndjson<{ at: string; type: string; lane: string; jobId: string }>(stdout);
    expect(events.map((e) => [e.type, e.lane, e.jobId])).toEqual([
      ["published", "default", id],
      ["started", "default", id],
      ["succeeded", "default", id],
    ]);
    for (const e of events) expect(Date.parse(e.at)).toBeGreaterThan(0);
  });

  it("--type and --count: waits for the next failure, prints it and ends by itself", async () => {
    const prefix = newPrefix();
    const app = createApp(prefix);
    await app.worker().start();
    const cli = launchCli(
      ["tail", "--lane", "default", "--type", "failed,retried", "--count", "2"],
      {
        env: cliEnv(prefix),
      },
    );
    await cli.waitFor("stderr", /Ctrl-C to stop/);
    const n = freshN();
    failing.add(n);
    const { id } = await app.publish(flaky, { n });
    await cli.waitFor("stdout", /failed/);
    failing.delete(n);
    // The CLI's own actions are announced too: its retry is the second event.
    expect(
      await runCli(["jobs", "retry", id, "--lane", "default"], { env: cliEnv(prefix) }),
    ).toMatchObject({ code: 0 });
    const { code, stdout } = await cli.done;
    expect(code).toBe(0);
    expect(stdout).toMatch(
      new RegExp(
        `^\\d{4}-\\d\\d-\\d\\dT[\\d:.]+Z  failed     default  ${id}\n\\S+  retried    default  ${id}\n$`,
      ),
    );
  });
});

describe("configuration", () => {
  it("TASKLANE_BACKEND, the old name, still picks the adapter", async () => {
    const prefix = newPrefix();
    const app = createApp(prefix);
    await app.publish(flaky, { n: freshN() });
    const env = cliEnv(prefix);
    const { TASKLANE_ADAPTER: _, ...withoutAdapter } = env;
    const { code, stdout } = await runCli(["status", "--json", "--lane", "default"], {
      env: { ...withoutAdapter, TASKLANE_BACKEND: "redis" },
    });
    expect(code).toBe(0);
    expect(ndjson(stdout)[0]).toMatchObject({ lane: "default", counts: { waiting: 1 } });
  });

  it("--namespace (or TASKLANE_NAMESPACE) reaches the application's namespaced lanes", async () => {
    const prefix = newPrefix();
    const app = createApp(prefix, "v42");
    await app.publish(flaky, { n: freshN() }, { jobId: "ns-1" });
    const plain = await runCli(["jobs", "list", "--json"], { env: cliEnv(prefix) });
    expect(plain.stdout).toBe("");
    const namespaced = await runCli(["jobs", "list", "--json", "--namespace", "v42"], {
      env: cliEnv(prefix),
    });
    expect(ndjson<JobInfo>(namespaced.stdout).map((j) => [j.id, j.lane])).toEqual([
      ["ns-1", "default"],
    ]);
    const fromEnv = await runCli(["jobs", "get", "ns-1", "--json"], {
      env: cliEnv(prefix, { TASKLANE_NAMESPACE: "v42" }),
    });
    expect(ndjson<JobInfo>(fromEnv.stdout).map((j) => j.id)).toEqual(["ns-1"]);
  });

  it("a config module may export the adapter itself", async () => {
    const prefix = newPrefix();
    const app = createApp(prefix);
    await app.publish(flaky, { n: freshN() }, { jobId: "from-config" });
    const adapterConfig = new URL("./fixtures/adapter.config.ts", import.meta.url).pathname;
    const { code, stdout, stderr } = await runCli(["jobs", "get", "from-config", "--json"], {
      env: { TASKLANE_CONFIG: adapterConfig, APP_REDIS_URL: redis.url, APP_REDIS_PREFIX: prefix },
    });
    expect(stderr).toBe("");
    expect(code).toBe(0);
    expect(ndjson<JobInfo>(stdout).map((j) => j.id)).toEqual(["from-config"]);
  });

  it("failures, --tag, --error-name and --since search the Redis indexes; retry by group; enqueue --tag", async () => {
    const prefix = newPrefix();
    const app = createApp(prefix);
    const [ok, bad1, bad2] = [freshN(), freshN(), freshN()];
    failing.add(bad1);
    failing.add(bad2);
    const published = await app.publishMany(flaky, [
      { payload: { n: ok }, tags: ["vip"] },
      { payload: { n: bad1 }, tags: ["vip", "batch:7"] },
      { payload: { n: bad2 } },
    ]);
    const [okId, bad1Id, bad2Id] = published.map((p) => p.id);
    const worker = app.worker();
    await worker.start();
    await waitFor(async () => (await counts(app)).failed === 2, "two jobs to fail");
    await worker.stop();
    const env = { env: cliEnv(prefix) };

    const groups = await runCli(["failures", "--json"], env);
    expect(groups.code).toBe(0);
    const [group] = ndjson<{
      lane: string;
      group: string;
      count: number;
      sample: { jobId: string };
    }>(groups.stdout);
    expect(group).toMatchObject({ lane: "default", group: "UnrecoverableError", count: 2 });
    expect([bad1Id, bad2Id]).toContain(group?.sample.jobId);

    const ids = async (args: string[]) => {
      const r = await runCli(["jobs", "list", ...args, "--json"], env);
      expect(r.stderr).toBe("");
      return ndjson<JobInfo>(r.stdout)
        .map((j) => j.id)
        .sort();
    };
    expect(await ids(["--tag", "vip"])).toEqual([okId, bad1Id].sort());
    expect(await ids(["--tag", "batch:7", "--state", "failed"])).toEqual([bad1Id]);
    expect(
      await ids(["--state", "failed", "--error-name", "UnrecoverableError", "--since", "1h"]),
    ).toEqual([bad1Id, bad2Id].sort());
    expect(await ids(["--state", "failed", "--error-name", "TypeError"])).toEqual([]);

    failing.delete(bad1);
    failing.delete(bad2);
    const retried = await runCli(
      [
        "jobs",
        "retry",
        "--all",
        "--lane",
        "default",
        "--error-name",
        "UnrecoverableError",
        "--json",
      ],
      env,
    );
    expect(ndjson(retried.stdout)).toEqual([
      { lane: "default", action: "retry", matched: 2, changed: 2 },
    ]);
    expect(await counts(app)).toMatchObject({ failed: 0, waiting: 2 });
    expect((await runCli(["failures"], env)).stderr).toBe("no failed jobs\n");

    const n = freshN();
    const enqueued = await runCli(
      ["enqueue", "flaky", `{"n":${n}}`, "--job-id", `tagged-${n}`, "--tag", "vip,new"],
      env,
    );
    expect(enqueued.code).toBe(0);
    expect(await ids(["--tag", "new"])).toEqual([`tagged-${n}`]);
    expect((await app.lane("default").get(`tagged-${n}`))?.tags).toEqual(["vip", "new"]);
  });

  it("schedules lists every lane's recurring schedules, as a table or NDJSON", async () => {
    const prefix = newPrefix();
    const app = createApp(prefix);
    const none = await runCli(["schedules"], { env: cliEnv(prefix) });
    expect(none).toMatchObject({ code: 0, stdout: "" });
    expect(none.stderr).toContain("no schedules");
    const startAt = Date.UTC(2030, 0, 1);
    await app.schedules.upsert("daily", { cron: "0 6 * * *", timezone: "Europe/Berlin" }, report, {
      day: "today",
    });
    await app.schedules.upsert("often", { everyMs: 60_000, startAt }, report, { day: "x" });
    const json = await runCli(["schedules", "--json"], { env: cliEnv(prefix) });
    expect(json.code).toBe(0);
    const rows = ndjson<{ id: string; lane: string; task: string; nextAt: number | null }>(
      json.stdout,
    );
    expect(rows.map((r) => [r.id, r.lane, r.task])).toEqual([
      ["daily", "low", "report"],
      ["often", "low", "report"],
    ]);
    expect(rows[1]?.nextAt).toBe(startAt);
    const table = await runCli(["schedules"], { env: cliEnv(prefix) });
    expect(table.code).toBe(0);
    expect(table.stdout).toContain("daily");
    expect(table.stdout).toContain(new Date(startAt).toISOString().slice(0, 16));
  });

  it("workers lists the running workers from the Redis registry, and none once they stop", async () => {
    const prefix = newPrefix();
    const app = createApp(prefix);
    const worker = app.worker({ lanes: ["default"], concurrency: 2 });
    await worker.start();
    try {
      const { code, stdout, stderr } = await runCli(["workers", "--json"], {
        env: cliEnv(prefix),
      });
      expect({ code, stderr }).toEqual({ code: 0, stderr: "" });
      expect(ndjson(stdout)).toMatchObject([
        { id: worker.id, concurrency: 2, held: 0, pid: process.pid },
      ]);
    } finally {
      await worker.stop();
    }
    expect(await runCli(["workers", "--json"], { env: cliEnv(prefix) })).toEqual({
      code: 0,
      stdout: "",
      stderr: "",
    });
  });
});
