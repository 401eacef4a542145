/**
 * Usage: help for every command, and bad input refused with exit code 2 and the field
 * named, before any backend is touched (none runs for these tests: a backend call would
 * fail with exit 1, not 2).
 */
import { describe, expect, it } from "vitest";
import { CONFIG, runCli } from "./helpers.ts";

const COMMANDS = [
  "status",
  "jobs",
  "jobs list",
  "jobs get",
  "jobs retry",
  "jobs cancel",
  "jobs delete",
  "jobs promote",
  "jobs priority",
  "jobs move",
  "enqueue",
  "tail",
  "pause",
  "resume",
  "failures",
  "workers",
  "schedules",
];

/** Nothing listens on port 1: a command that reached for Redis would fail, not exit 2. */
const NO_BACKEND = {
  TASKLANE_ADAPTER: "redis",
  REDIS_URL: "redis://127.0.0.1:1",
  TASKLANE_LANES: "default",
};

describe("help", () => {
  it("tasklane --help lists every command, the environment and the exit codes", async () => {
    const { code, stdout } = await runCli(["--help"]);
    expect(code).toBe(0);
    for (const command of [
      "status",
      "jobs",
      "enqueue",
      "tail",
      "pause",
      "resume",
      "failures",
      "workers",
      "schedules",
    ]) {
      expect(stdout).toMatch(new RegExp(`^  ${command}\\b`, "m"));
    }
    expect(stdout).toContain("TASKLANE_ADAPTER    redis | sqs");
    expect(stdout).toContain(
      "3  not supported by this adapter, or not in this version of tasklane yet",
    );
  });

  it.each(COMMANDS)("tasklane %s --help", async (command) => {
    const { code, stdout, stderr } = await runCli([...command.split(" "), "--help"]);
    expect(stderr).toBe("");
    expect(code).toBe(0);
    expect(stdout).toMatch(new RegExp(`^Usage: tasklane ${command}\\b`));
  });

  it("--version prints the package's version", async () => {
    const { code, stdout } = await runCli(["--version"]);
    expect(code).toBe(0);
    expect(stdout.trim()).toMatch(/^\d+\.\d+\.\d+/);
  });
});

describe("bad usage exits 2 and names what is wrong", () => {
  it("no command: the help, on stderr", async () => {
    const { code, stderr } = await runCli([]);
    expect(code).toBe(2);
    expect(stderr).toContain("Usage: tasklane [options] [command]");
  });

  it("an unknown command", async () => {
    const { code, stderr } = await runCli(["jbos"]);
    expect(code).toBe(2);
    expect(stderr).toContain("error: unknown command 'jbos'");
  });

  it("an unknown option", async () => {
    const { code, stderr } = await runCli(["status", "--colour"], { env: NO_BACKEND });
    expect(code).toBe(2);
    expect(stderr).toContain("error: unknown option '--colour'");
  });

  it.each([
    [
      ["jobs", "list", "--state", "done"],
      "option '--state <states>' argument 'done' is invalid. \"done\" is not one of waiting, delayed, blocked, active, failed, succeeded, canceled",
    ],
    [
      ["jobs", "list", "--limit", "0"],
      "option '--limit <n>' argument '0' is invalid. must be an integer >= 1",
    ],
    [
      ["jobs", "retry", "--all", "--batch-size", "ten"],
      "option '--batch-size <n>' argument 'ten' is invalid. must be an integer >= 1",
    ],
    [
      ["status", "--interval", "soon"],
      "option '--interval <duration>' argument 'soon' is invalid. must be a duration",
    ],
    [
      ["status", "--day", "2026-02-30"],
      "option '--day <YYYY-MM-DD>' argument '2026-02-30' is invalid. must be a UTC day",
    ],
    [
      ["enqueue", "flaky", "{}", "--priority", "1001"],
      "option '--priority <n>' argument '1001' is invalid. must be an integer from -1000 to 1000",
    ],
    [
      ["enqueue", "flaky", "{}", "--app-data", "{x}"],
      "option '--app-data <json>' argument '{x}' is invalid. must be JSON",
    ],
    [
      ["tail", "--type", "exploded"],
      "option '--type <types>' argument 'exploded' is invalid. \"exploded\" is not one of published",
    ],
    [
      ["--adapter", "mongo", "status"],
      "option '--adapter <name>' argument 'mongo' is invalid. Allowed choices are redis, sqs, memory.",
    ],
  ])("tasklane %j", async (args, message) => {
    const { code, stdout, stderr } = await runCli(args, { env: NO_BACKEND });
    expect(stdout).toBe("");
    expect(stderr).toContain(`error: ${message}`);
    expect(code).toBe(2);
  });

  it("a payload that is not JSON names <json>", async () => {
    const { code, stderr } = await runCli(["enqueue", "flaky", "{n: 1}", "--config", CONFIG], {
      env: NO_BACKEND,
    });
    expect(stderr).toMatch(/^error: <json>: the payload is not JSON \(/);
    expect(code).toBe(2);
  });

  it("a payload that fails the task's schema names the field, and nothing is published", async () => {
    const { code, stdout, stderr } = await runCli(
      ["enqueue", "send-email", '{"to":"not-an-address","subject":"Hi"}', "--config", CONFIG],
      // a publish would need the backend, which is not there: exit 2 proves none was tried
      { env: NO_BACKEND },
    );
    expect(stdout).toBe("");
    expect(stderr).toBe(
      'error: Payload for task "send-email" failed its schema: to: Invalid email address\n',
    );
    expect(code).toBe(2);
  });

  it("--delay and --run-at together", async () => {
    const { code, stderr } = await runCli(
      [
        "enqueue",
        "flaky",
        '{"n":1}',
        "--delay",
        "5s",
        "--run-at",
        "2030-01-01T00:00:00Z",
        "--config",
        CONFIG,
      ],
      { env: NO_BACKEND },
    );
    expect(stderr).toBe("error: --delay: give --delay or --run-at, not both\n");
    expect(code).toBe(2);
  });

  it("a task no config defines needs --lane", async () => {
    const { code, stderr } = await runCli(["enqueue", "resize", "{}", "--config", CONFIG], {
      env: NO_BACKEND,
    });
    expect(stderr).toBe(
      'error: --lane: no task "resize" in ' +
        `${CONFIG} (tasks: send-email, flaky, report); give --lane to publish it unvalidated\n`,
    );
    expect(code).toBe(2);
  });

  it("no backend named", async () => {
    const { code, stderr } = await runCli(["status", "--lanes", "default"]);
    expect(stderr).toBe(
      "error: TASKLANE_ADAPTER: which backend? set TASKLANE_ADAPTER (or --adapter) to redis or sqs, " +
        "or export an adapter from the config module\n",
    );
    expect(code).toBe(2);
  });

  it("the memory adapter, which a CLI cannot reach", async () => {
    const { code, stderr } = await runCli(["status", "--lanes", "default"], {
      env: { TASKLANE_ADAPTER: "memory" },
    });
    expect(stderr).toBe(
      "error: TASKLANE_ADAPTER: memory keeps its jobs inside the process that created it, " +
        "out of the CLI's reach: use redis or sqs\n",
    );
    expect(code).toBe(2);
  });

  it("TASKLANE_ADAPTER and its old name TASKLANE_BACKEND disagreeing", async () => {
    const { code, stderr } = await runCli(["status", "--lanes", "default"], {
      env: { TASKLANE_ADAPTER: "redis", TASKLANE_BACKEND: "sqs" },
    });
    expect(stderr).toBe(
      'error: TASKLANE_ADAPTER: "redis" but TASKLANE_BACKEND says "sqs": set one (TASKLANE_BACKEND is the old name)\n',
    );
    expect(code).toBe(2);
  });

  it("TASKLANE_BACKEND with a bad value is named", async () => {
    const { code, stderr } = await runCli(["status", "--lanes", "default"], {
      env: { TASKLANE_BACKEND: "kafka" },
    });
    expect(stderr).toBe(
      'error: TASKLANE_BACKEND: must be one of redis, sqs, memory (got "kafka")\n',
    );
    expect(code).toBe(2);
  });

  it("no lanes: neither a config module nor lane names", async () => {
    const { code, stderr } = await runCli(["status"], { env: { TASKLANE_ADAPTER: "redis" } });
    expect(stderr).toContain("error: --lanes: the CLI needs the application's lanes");
    expect(code).toBe(2);
  });

  it("a lane name that is not one", async () => {
    const { code, stderr } = await runCli(["status", "--lanes", "default,a b"], {
      env: NO_BACKEND,
    });
    expect(stderr).toBe(`error: --lanes: "a b" is not a lane name (letters, digits, '-', '_')\n`);
    expect(code).toBe(2);
  });

  it("--config and --lanes together", async () => {
    const { code, stderr } = await runCli(["status", "--config", CONFIG, "--lanes", "default"], {
      env: NO_BACKEND,
    });
    expect(stderr).toBe("error: --lanes: give --config or --lanes, not both\n");
    expect(code).toBe(2);
  });

  it("a config module that does not exist", async () => {
    const { code, stderr } = await runCli(["status"], {
      env: { ...NO_BACKEND, TASKLANE_LANES: "", TASKLANE_CONFIG: "./nowhere.config.js" },
    });
    expect(stderr).toMatch(/^error: TASKLANE_CONFIG: no such file: \/.*\/nowhere\.config\.js\n$/);
    expect(code).toBe(2);
  });

  it("--lane naming a lane the config does not have", async () => {
    const { code, stderr } = await runCli(
      ["jobs", "list", "--lane", "urgent", "--config", CONFIG],
      {
        env: NO_BACKEND,
      },
    );
    expect(stderr).toBe(
      `error: --lane: no lane "urgent" in ${CONFIG} (lanes: high, default, low)\n`,
    );
    expect(code).toBe(2);
  });

  it("bulk operations without ids or --all, and with both", async () => {
    const none = await runCli(["jobs", "delete", "--lane", "default"], { env: NO_BACKEND });
    expect(none.stderr).toBe(
      "error: <ids...>: name the jobs to delete, or pass --all to delete every job matching the filters\n",
    );
    expect(none.code).toBe(2);
    const both = await runCli(["jobs", "retry", "j1", "--all"], { env: NO_BACKEND });
    expect(both.stderr).toBe("error: --all: give job ids or --all, not both\n");
    expect(both.code).toBe(2);
    const noState = await runCli(["jobs", "delete", "--all"], { env: NO_BACKEND });
    expect(noState.stderr).toBe(
      "error: --state: delete --all needs --state (one or more of waiting, delayed, blocked, failed, succeeded, canceled, expired)\n",
    );
    expect(noState.code).toBe(2);
    const active = await runCli(["jobs", "delete", "--all", "--state", "active"], {
      env: NO_BACKEND,
    });
    expect(active.stderr).toContain(
      "error: option '--state <states>' argument 'active' is invalid.",
    );
    expect(active.code).toBe(2);
  });

  it("jobs priority needs --priority in range, jobs move needs --to naming another lane", async () => {
    const noPriority = await runCli(["jobs", "priority", "j1", "--lane", "default"], {
      env: NO_BACKEND,
    });
    expect(noPriority).toMatchObject({
      code: 2,
      stderr: expect.stringContaining("error: required option '--priority <n>' not specified"),
    });
    const tooHigh = await runCli(["jobs", "priority", "--priority", "5000", "j1"], {
      env: NO_BACKEND,
    });
    expect(tooHigh.code).toBe(2);
    expect(tooHigh.stderr).toContain("must be an integer from -1000 to 1000");
    const noTo = await runCli(["jobs", "move", "j1", "--lane", "default"], { env: NO_BACKEND });
    expect(noTo).toMatchObject({
      code: 2,
      stderr: expect.stringContaining("error: required option '--to <lane>' not specified"),
    });
    const elsewhere = await runCli(["jobs", "move", "j1", "--lane", "default", "--to", "moon"], {
      env: { ...NO_BACKEND, TASKLANE_CONFIG: CONFIG, TASKLANE_LANES: "" },
    });
    expect(elsewhere).toEqual({
      code: 2,
      stdout: "",
      stderr: `error: --to: no lane "moon" in ${CONFIG} (lanes: high, default, low)\n`,
    });
    const same = await runCli(["jobs", "move", "j1", "--lane", "default", "--to", "default"], {
      env: { ...NO_BACKEND, TASKLANE_CONFIG: CONFIG, TASKLANE_LANES: "" },
    });
    expect(same.stderr).toBe(
      "error: --to: the jobs are in lane default already: name another lane\n",
    );
    const noState = await runCli(["jobs", "move", "--all", "--to", "low"], { env: NO_BACKEND });
    expect(noState.stderr).toBe(
      "error: --state: move --all needs --state (one or more of waiting, delayed, active, failed)\n",
    );
  });

  it("--since and --until take a time or a duration ago, and filters go with --all only", async () => {
    const bad = await runCli(["jobs", "list", "--since", "last tuesday"], { env: NO_BACKEND });
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain("option '--since <time>' argument 'last tuesday' is invalid");
    const withIds = await runCli(["jobs", "retry", "j1", "--error-name", "TypeError"], {
      env: NO_BACKEND,
    });
    expect(withIds).toMatchObject({
      code: 2,
      stderr: "error: --error-name: filters go with --all, not with job ids\n",
    });
  });
});
