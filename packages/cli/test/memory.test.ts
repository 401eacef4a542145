/**
 * The operator commands where the backend has every capability: the memory adapter,
 * through a config module that brings its own (fixtures/memory.config.ts). The CLI refuses
 * `TASKLANE_ADAPTER=memory`, since a memory adapter's jobs live in the process that made
 * it; this module makes them inside the CLI's process instead, the same jobs on every run,
 * and with APP_DUMP writes every job to a file when the CLI closes the adapter, so a test
 * sees what a command changed. redis.test.ts runs the same commands against the Redis
 * adapter's indexes; below, the same adapter declaring no search refuses them.
 */
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import type { FailureGroup, JobInfo, WorkerInfo } from "@tasklane/core";
import { afterAll, describe, expect, it } from "vitest";
import { jobDetail } from "../src/commands/jobs.ts";
import { ndjson, runCli } from "./helpers.ts";

const MEMORY_CONFIG = fileURLToPath(new URL("./fixtures/memory.config.ts", import.meta.url));
const dir = mkdtempSync(join(tmpdir(), "tasklane-cli-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

let dumps = 0;
/** Run the CLI on the memory config; `jobs` is every job when it closed, by lane. */
async function run(args: string[], env: Record<string, string> = {}) {
  const dump = join(dir, `jobs-${++dumps}.json`);
  const result = await runCli(args, {
    env: { TASKLANE_CONFIG: MEMORY_CONFIG, APP_DUMP: dump, ...env },
  });
  const jobs = (): Record<string, JobInfo[]> => JSON.parse(readFileSync(dump, "utf8"));
  return { ...result, jobs };
}

const byId = (jobs: Record<string, JobInfo[]>, lane: string, id: string) =>
  jobs[lane]?.find((j) => j.id === id);

describe("jobs get and list", () => {
  it("get shows a job's result, progress with a bar, logs and tags", async () => {
    const { code, stdout, stderr } = await run(["jobs", "get", "resized"]);
    expect(stderr).toBe("");
    expect(code).toBe(0);
    const lines = stdout.trimEnd().split("\n");
    expect(lines).toContain("tags       customer:42");
    expect(lines).toContain(`result     {"url":"https://cdn.example.com/320.png","bytes":3200}`);
    expect(lines).toContain(`progress   [####################] 100%  {"done":2,"total":2}`);
    expect(lines.find((l) => l.startsWith("logs"))).toMatch(
      /^logs {7}\d{4}-\d\d-\d\dT[\d:.]+Z {2}#1 {2}resized to 320$/,
    );
    const json = await run(["jobs", "get", "resized", "--json"]);
    expect(ndjson<JobInfo>(json.stdout)).toEqual([
      expect.objectContaining({
        id: "resized",
        lane: "default",
        state: "succeeded",
        result: '{"url":"https://cdn.example.com/320.png","bytes":3200}',
        progress: '{"done":2,"total":2}',
        logs: [{ at: expect.any(Number), attempt: 1, message: "resized to 320" }],
        tags: ["customer:42"],
      }),
    ]);
  });

  it("list passes --tag, --error-name, --since, --until and --task to the adapter", async () => {
    const ids = async (args: string[]) => {
      const { code, stdout, stderr } = await run(["jobs", "list", "--json", ...args]);
      expect({ code, stderr }, args.join(" ")).toEqual({ code: 0, stderr: "" });
      return ndjson<JobInfo>(stdout).map((j) => j.id);
    };
    expect(await ids(["--tag", "vip"])).toEqual(["note-vip"]);
    expect(await ids(["--error-name", "TypeError"])).toEqual(["type-1", "type-2"]);
    expect(await ids(["--state", "failed", "--task", "fail", "--limit", "2"])).toEqual([
      "type-1",
      "range-1",
    ]);
    expect(await ids(["--lane", "low", "--state", "waiting", "--since", "1h"])).toEqual([
      "note-vip",
      "note-plain",
    ]);
    expect(await ids(["--lane", "low", "--state", "waiting", "--until", "1h"])).toEqual([]);
    const table = await run(["jobs", "list", "--error-name", "RangeError"]);
    const [header, row, ...rest] = table.stdout.trimEnd().split("\n");
    expect(header).toMatch(/^id +lane +state +task +attempt +priority +published +error$/);
    expect(row).toMatch(/^range-1 +default +failed +fail +1 +0 +\S+ +RangeError: far 1$/);
    expect(rest).toEqual([]);
  });
});

describe("status", () => {
  it("has an expired column where the adapter has expiry, a blocked one where it has flows", async () => {
    const { code, stdout } = await run(["status", "--lane", "default,low"]);
    expect(code).toBe(0);
    const [header, def, low] = stdout.split("\n");
    expect(header).toMatch(
      /^lane +waiting +delayed +blocked +active +failed +succeeded +canceled +expired +finished\/s/,
    );
    expect(def).toMatch(/^default +0 +0 +0 +0 +3 +1 +0 +0 /);
    expect(low).toMatch(/^low +2 +1 +0 +0 +0 +0 +0 +0 /);
  });
});

describe("failures and workers", () => {
  it("failures prints the groups, largest first, with how to retry one", async () => {
    const { code, stdout, stderr } = await run(["failures"]);
    expect(code).toBe(0);
    const [header, first, second] = stdout.trimEnd().split("\n");
    expect(header).toMatch(/^lane +group +jobs +last failed +task +latest message$/);
    expect(first).toMatch(/^default +TypeError +2 +\S+Z +fail +bad 2$/);
    expect(second).toMatch(/^default +RangeError +1 +\S+Z +fail +far 1$/);
    expect(stderr).toBe(
      "retry a group: tasklane jobs retry --all --lane default --error-name TypeError (jobs list --state failed --error-name … shows its jobs)\n",
    );
    const json = await run(["failures", "--json", "--lane", "default"]);
    expect(ndjson<FailureGroup>(json.stdout)).toEqual([
      {
        lane: "default",
        group: "TypeError",
        count: 2,
        sample: {
          jobId: "type-2",
          task: "fail",
          message: "bad 2",
          stack: expect.stringContaining("TypeError: bad 2"),
          failedAt: expect.any(Number),
        },
      },
      expect.objectContaining({ group: "RangeError", count: 1 }),
    ]);
    const none = await run(["failures", "--lane", "low"]);
    expect(none).toMatchObject({ code: 0, stdout: "", stderr: "no failed jobs\n" });
  });

  it("workers lists the running worker with its lanes, held and running jobs", async () => {
    const { code, stdout } = await run(["workers"]);
    expect(code).toBe(0);
    const [header, row, ...rest] = stdout.trimEnd().split("\n");
    expect(header).toMatch(
      /^worker +host +pid +lanes +concurrency +held +running +started +heartbeat +lapses$/,
    );
    // Heartbeats every 50 ms: seen a moment ago, lapsing a moment from now (unless this
    // machine is slow enough to print it after).
    expect(row).toMatch(
      /^\S+ +\S+ +\d+ +spare +2 +1 +1 +\S+Z +[\d.]+ m?s ago +(in [\d.]+ m?s|lapsed)$/,
    );
    expect(rest).toEqual([]);
    const json = await run(["workers", "--json"]);
    const [worker] = ndjson<WorkerInfo>(json.stdout);
    expect(worker).toMatchObject({
      lanes: ["spare"],
      concurrency: 2,
      held: 1,
      running: 1,
      jobs: [{ lane: "spare", jobId: "held" }],
      version: expect.any(String),
    });
    expect(worker?.expiresAt).toBeGreaterThan(worker?.lastHeartbeatAt as number);
  });
});

describe("promote, priority, move and acting on a failure group", () => {
  it("promote by ids prints each id's result; one not found exits 1", async () => {
    const { code, stdout, stderr, jobs } = await run([
      "jobs",
      "promote",
      "note-later",
      "nope",
      "--lane",
      "low",
    ]);
    expect(stdout).toBe("note-later  promoted\nnope  not_found\n");
    expect(stderr).toBe("error: 1 of 2 not promoted: nope (not found)\n");
    expect(code).toBe(1);
    expect(byId(jobs(), "low", "note-later")).toMatchObject({ state: "waiting" });
  });

  it("priority --all changes every waiting and delayed job of the lane", async () => {
    const { code, stdout, jobs } = await run([
      "jobs",
      "priority",
      "--priority",
      "-7",
      "--all",
      "--lane",
      "low",
    ]);
    expect({ code, stdout }).toEqual({ code: 0, stdout: "low: prioritized 3 jobs (3 matched)\n" });
    expect((jobs().low ?? []).map((j) => [j.id, j.priority])).toEqual([
      ["note-vip", -7],
      ["note-plain", -7],
      ["note-later", -7],
    ]);
  });

  it("move takes a failed job to another lane, keeping its id", async () => {
    const { code, stdout, jobs } = await run([
      "jobs",
      "move",
      "type-1",
      "--lane",
      "default",
      "--to",
      "low",
    ]);
    expect({ code, stdout }).toEqual({ code: 0, stdout: "type-1  moved\n" });
    expect(byId(jobs(), "default", "type-1")).toBeUndefined();
    expect(byId(jobs(), "low", "type-1")).toMatchObject({ state: "waiting", task: "fail" });
  });

  it("retry --all --error-name retries one failure group and leaves the other", async () => {
    const { code, stdout, jobs } = await run([
      "jobs",
      "retry",
      "--all",
      "--lane",
      "default",
      "--error-name",
      "TypeError",
      "--json",
    ]);
    expect(code).toBe(0);
    expect(ndjson(stdout)).toEqual([{ lane: "default", action: "retry", matched: 2, changed: 2 }]);
    const after = jobs();
    expect(byId(after, "default", "type-1")?.state).toBe("waiting");
    expect(byId(after, "default", "type-2")?.state).toBe("waiting");
    expect(byId(after, "default", "range-1")?.state).toBe("failed");
  });

  it("enqueue --tag and --expires-in reach the job", async () => {
    const { code, stdout, jobs } = await run([
      "enqueue",
      "note",
      '{"n":9}',
      "--job-id",
      "tagged",
      "--tag",
      "a,b",
      "--expires-in",
      "10m",
    ]);
    expect({ code, stdout }).toEqual({ code: 0, stdout: "created job tagged in lane low\n" });
    const job = byId(jobs(), "low", "tagged");
    expect(job).toMatchObject({ tags: ["a", "b"], expiresAt: expect.any(Number) });
    expect((job?.expiresAt as number) - (job?.publishedAt as number)).toBe(600_000);
  });

  it("enqueue --group puts the job in its fair group", async () => {
    const { code, stdout, jobs } = await run([
      "enqueue",
      "tenant-note",
      '{"n":1}',
      "--job-id",
      "acme-1",
      "--group",
      "acme",
    ]);
    expect({ code, stdout }).toEqual({ code: 0, stdout: "created job acme-1 in lane tenants\n" });
    expect(byId(jobs(), "tenants", "acme-1")).toMatchObject({ group: "acme", state: "waiting" });
  });

  it("enqueue --depends-on: blocked on jobs in its lane and <lane>:<id> in others; an unknown one writes nothing", async () => {
    const { code, stdout, stderr, jobs } = await run([
      "enqueue",
      "note",
      '{"n":9}',
      "--job-id",
      "after",
      "--depends-on",
      "note-plain,default:resized",
      "--on-failure",
      "ignore",
    ]);
    expect(stderr).toBe("");
    expect({ code, stdout }).toEqual({
      code: 0,
      stdout: "created job after in lane low, after 2 jobs\n",
    });
    expect(byId(jobs(), "low", "after")).toMatchObject({
      state: "blocked",
      dependencies: [
        { lane: "low", id: "note-plain", onFailure: "ignore", task: "note" },
        { lane: "default", id: "resized", onFailure: "ignore", state: "succeeded" },
      ],
    });
    expect(byId(jobs(), "low", "note-plain")?.dependents).toEqual([
      { lane: "low", jobId: "after" },
    ]);

    const missing = await run([
      "enqueue",
      "note",
      '{"n":9}',
      "--job-id",
      "x",
      "--depends-on",
      "ghost",
    ]);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain("ghost");
    expect(byId(missing.jobs(), "low", "x")).toBeUndefined();

    const alone = await run(["enqueue", "note", '{"n":9}', "--on-failure", "ignore"]);
    expect(alone.code).toBe(2);
    expect(alone.stderr).toContain("--on-failure: needs --depends-on");
  });

  it("jobs get shows what a job waits for, how each ended, and who waits for it", () => {
    const text = jobDetail({
      id: "after",
      lane: "low",
      task: "note",
      state: "blocked",
      attempt: 0,
      priority: 0,
      publishedAt: 0,
      runAt: 0,
      payload: "{}",
      history: [],
      dependencies: [
        { lane: "low", id: "a", onFailure: "fail", task: "note" },
        { lane: "default", id: "b", onFailure: "ignore", task: "resize", state: "failed" },
      ],
      dependents: [{ lane: "spare", jobId: "root" }],
    });
    const lines = text.split("\n");
    expect(lines).toContain("waits for  low:a  note  not ended  (on failure: fail)");
    expect(lines).toContain("           default:b  resize  failed  (on failure: ignore)");
    expect(lines).toContain("waited by  spare:root");
  });

  it("enqueue --debounce needs --window, and --keep needs --debounce (exit 2)", async () => {
    for (const [args, message] of [
      [["--debounce", "k"], "--debounce: needs --window"],
      [["--window", "2s"], "--window: needs --debounce"],
      [["--keep", "first"], "--keep: needs --debounce"],
    ] as const) {
      const { code, stderr } = await run(["enqueue", "note", '{"n":1}', ...args]);
      expect({ code, args }).toEqual({ code: 2, args });
      expect(stderr, args.join(" ")).toContain(message);
    }
  });
});

describe("on an adapter without tags, search or failure groups", () => {
  it.each([
    [
      ["failures"],
      "The limited adapter does not support failure groups (capability failureGroups)",
    ],
    [
      ["jobs", "list", "--tag", "vip"],
      "The limited adapter does not support tags (capability tags): --tag needs it",
    ],
    [
      ["jobs", "list", "--state", "failed", "--error-name", "TypeError", "--since", "1h"],
      "The limited adapter does not support searching jobs (capability search): --error-name, --since need it; --task is checked by the CLI",
    ],
    [
      ["jobs", "retry", "--all", "--lane", "default", "--error-name", "TypeError"],
      "The limited adapter does not support searching jobs (capability search): --error-name needs it; --task is checked by the CLI",
    ],
    [
      ["enqueue", "note", '{"n":9}', "--tag", "vip"],
      "The limited adapter does not support tags (capability tags): --tag needs it",
    ],
  ])("%j exits 3, naming what the adapter lacks, and changes nothing", async (args, message) => {
    const before = (await run(["status", "--json"], { APP_NO_SEARCH: "1" })).jobs();
    const { code, stdout, stderr, jobs } = await run(args, { APP_NO_SEARCH: "1" });
    expect({ code, stdout, stderr }).toEqual({
      code: 3,
      stdout: "",
      stderr: `error: ${message}\n`,
    });
    const strip = (all: Record<string, JobInfo[]>) =>
      Object.fromEntries(
        Object.entries(all).map(([lane, list]) => [lane, list.map((j) => [j.id, j.state])]),
      );
    expect(strip(jobs())).toEqual(strip(before));
  });

  it("--task alone lists by state and checks the task in the CLI", async () => {
    const { code, stdout } = await run(
      ["jobs", "list", "--lane", "default", "--state", "failed", "--task", "fail", "--json"],
      { APP_NO_SEARCH: "1" },
    );
    expect(code).toBe(0);
    expect(ndjson<JobInfo>(stdout).map((j) => j.id)).toEqual(["type-1", "range-1", "type-2"]);
    const none = await run(
      ["jobs", "list", "--lane", "default", "--state", "succeeded", "--task", "fail", "--json"],
      { APP_NO_SEARCH: "1" },
    );
    expect(none).toMatchObject({ code: 0, stdout: "" });
  });
});
