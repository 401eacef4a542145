/**
 * The `tasklane` command line: commands, options and help (commander), wired to the
 * command modules. Every command gets `--help`; the global options work before or after
 * the command's name.
 */
import { createRequire } from "node:module";
import type { JobState } from "@tasklane/core";
import { Command, Option } from "commander";
import { enqueue } from "./commands/enqueue.ts";
import { type BulkAction, bulk, getJob, listJobs } from "./commands/jobs.ts";
import { setPaused } from "./commands/lanes.ts";
import { failures, schedules, workers } from "./commands/operator.ts";
import { status } from "./commands/status.ts";
import { EVENT_TYPES, tail } from "./commands/tail.ts";
import type { CommandContext } from "./context.ts";
import { ADAPTER_KINDS } from "./environment.ts";
import { UsageError } from "./errors.ts";
import {
  collectChoices,
  collectList,
  integerAtLeast,
  JOB_STATES,
  parseDay,
  parseDuration,
  parseJson,
  parsePriority,
  parseTime,
  parseTimeOrAgo,
} from "./parse.ts";

/** Runs a command's body with its context (set up, error handling and clean-up: cli.ts). */
export type RunCommand = (
  command: Command,
  body: (ctx: CommandContext) => Promise<void>,
) => Promise<void>;

const { version } = createRequire(import.meta.url)("../package.json") as { version: string };

const ENVIRONMENT_HELP = `
Configuration (flags win over the environment):
  TASKLANE_CONFIG     a module exporting { lanes, tasks?, namespace?, adapter? } (--config)
  TASKLANE_LANES      lane names, comma-separated, when there is no config module (--lanes)
  TASKLANE_ADAPTER    redis | sqs (--adapter); TASKLANE_BACKEND, its old name, still works
  TASKLANE_NAMESPACE  the client's namespace: lanes are <namespace>_<lane> on the backend
  REDIS_URL           redis://127.0.0.1:6379 by default; REDIS_PREFIX: key prefix ("tasklane")
  AWS_REGION          us-east-1 by default; SQS_ENDPOINT: another SQS server (e.g. a local one)
  SQS_QUEUE_PREFIX    the SQS adapter's queuePrefix; SQS_PRIORITY_LANES=true: -high/-low bands
  SQS_CREATE_QUEUES   true to let the CLI create missing queues (default: it never does)

Exit codes:
  0  done
  1  failed: the backend, a job not found, fewer jobs changed than named
  2  bad usage: an unknown command or option, a bad value, an invalid payload or config
  3  not supported by this adapter, or not in this version of tasklane yet
  130  interrupted (Ctrl-C) after finishing the batch in flight`;

const LANE_OPTION = () =>
  new Option(
    "--lane <names>",
    "only these lanes (comma-separated or repeated; default all)",
  ).argParser(collectList);

function stateOption(description: string, allowed: readonly JobState[] = JOB_STATES) {
  return new Option("--state <states>", description).argParser(collectChoices(allowed));
}

/** The search filters of `jobs list` and of the bulk operations' `--all`. */
function addSearchOptions(command: Command, prefix = ""): Command {
  return command
    .option("--tag <tag>", `${prefix}only jobs with this tag (capabilities search and tags)`)
    .option(
      "--error-name <name>",
      `${prefix}only jobs whose last error has this name: a failure group (capability search)`,
    )
    .option(
      "--since <time>",
      `${prefix}only jobs that entered their state at or after this time: ISO 8601, epoch ms, or a duration ago (30m) (capability search)`,
      parseTimeOrAgo,
    )
    .option(
      "--until <time>",
      `${prefix}only jobs that entered their state before this time (capability search)`,
      parseTimeOrAgo,
    );
}

const examples = (lines: string[]) => `\nExamples:\n${lines.map((l) => `  ${l}`).join("\n")}`;

/** Where commander writes help and its own errors. */
export interface ProgramOutput {
  writeOut(text: string): void;
  writeErr(text: string): void;
}

export function createProgram(run: RunCommand, output: ProgramOutput): Command {
  const program = new Command("tasklane");
  // Before any command is added: subcommands copy these settings when they are created.
  // exitOverride: commander throws instead of exiting, and cli.ts picks the exit code.
  program.exitOverride().configureOutput(output);
  program
    .description(
      "Look after tasklane lanes and jobs on Redis or Amazon SQS: status, jobs, failures, workers, enqueue, live events.",
    )
    .version(version, "-V, --version")
    .option("--config <module>", "the application's config module (env TASKLANE_CONFIG)")
    .option(
      "--lanes <names>",
      "lane names, comma-separated, without a config module (env TASKLANE_LANES)",
    )
    .addOption(
      new Option("--adapter <name>", "the backend (env TASKLANE_ADAPTER)").choices(ADAPTER_KINDS),
    )
    .option("--namespace <name>", "the client's namespace (env TASKLANE_NAMESPACE)")
    .option("--json", "machine-readable output on stdout: one JSON object per line (NDJSON)")
    .configureHelp({ showGlobalOptions: true })
    .showHelpAfterError("(tasklane --help shows the commands; tasklane <command> --help, one)")
    .addHelpText("after", ENVIRONMENT_HELP);

  program
    .command("status")
    .description(
      "A table per lane: counts by state, rates (finished/s, failed/s) and the p50/p99 of wait and run time",
    )
    .addOption(LANE_OPTION())
    .option(
      "--interval <duration>",
      "measure the rates now: read the stats twice, this long apart (e.g. 10s)",
      parseDuration,
    )
    .option("--day <YYYY-MM-DD>", "a past UTC day's percentiles and average rates", parseDay)
    .addHelpText(
      "after",
      `
Rates come from the lanes' daily stats (UTC days). By default they are today's average:
today's counts over the part of today that has passed. With --interval they are measured:
the difference between two reads of the stats, over the time between them.
  finished/s  attempts that ended (succeeded or failed)
  failed/s    attempts that failed (retried, or moved to the dead letter set)
--json adds startedPerSec and deadPerSec, and each lane's wait and run counts and means.
Counts are exact on Redis, approximate on SQS (which keeps no stats: "-").
Wait is due → started; run is started → finished. Percentiles come from the histogram
(exact to its bucket).
${examples([
  "tasklane status",
  "tasklane status --lane high,default --interval 10s",
  "tasklane status --json | jq '.counts.failed'",
])}`,
    )
    .action(
      async (options: { lane?: string[]; interval?: number; day?: string }, command: Command) =>
        run(command, async (ctx) => {
          if (options.interval !== undefined && options.day !== undefined) {
            throw new UsageError("--interval", "measures rates now: it does not go with --day");
          }
          await status(ctx, options);
        }),
    );

  const jobs = program
    .command("jobs")
    .description("List, show, retry, cancel, delete, promote, re-prioritise and move jobs")
    .addHelpText(
      "after",
      examples([
        "tasklane jobs list --lane default --state failed",
        "tasklane jobs get 6f1c…",
        "tasklane jobs retry --lane default --all",
      ]),
    );

  const list = jobs
    .command("list")
    .description("Stream the jobs that match the filters (constant memory, however many)")
    .addOption(LANE_OPTION())
    .addOption(stateOption("only these states (comma-separated; default all)"))
    .option(
      "--task <name>",
      "only jobs of this task (searched by the adapter where it can, else checked by the CLI)",
    );
  addSearchOptions(list)
    .option("--limit <n>", "stop after n jobs", integerAtLeast(1))
    .option(
      "--page-size <n>",
      "jobs fetched per round trip (the adapter's default otherwise)",
      integerAtLeast(1),
    )
    .addHelpText(
      "after",
      `
Filters: where the adapter can search (capability search) every filter goes to it;
elsewhere it lists by lane and state, --task is checked by the CLI, and --tag,
--error-name, --since and --until exit 3. With --json, each line is the job (payload,
appData, result and progress as stored: JSON text) with lane as its config name.
${examples([
  "tasklane jobs list --state failed",
  "tasklane jobs list --lane default --state waiting,delayed --limit 20",
  "tasklane jobs list --state failed --error-name TimeoutError --since 1h",
  "tasklane jobs list --tag customer:42 --json > customer-42.ndjson",
])}`,
    )
    .action(
      async (
        options: {
          lane?: string[];
          state?: JobState[];
          task?: string;
          tag?: string;
          errorName?: string;
          since?: number;
          until?: number;
          limit?: number;
          pageSize?: number;
        },
        command: Command,
      ) => run(command, (ctx) => listJobs(ctx, options)),
    );

  jobs
    .command("get")
    .description(
      "Show one job: payload, state, attempts, times, error with stack, history, and where the adapter keeps them result, progress, logs, tags and expiry",
    )
    .argument("<id>", "the job's id")
    .addOption(LANE_OPTION())
    .addHelpText(
      "after",
      examples([
        "tasklane jobs get 6f1c2a9e-…",
        "tasklane jobs get order-42 --lane default --json",
      ]),
    )
    .action(async (id: string, options: { lane?: string[] }, command: Command) =>
      run(command, (ctx) => getJob(ctx, id, options)),
    );

  const bulkCommand = (
    action: BulkAction,
    description: string,
    states: readonly JobState[],
    stateHelp: string,
    help: string[],
    extra: (command: Command) => Command = (c) => c,
  ) => {
    const command = jobs
      .command(action)
      .description(description)
      .argument("[ids...]", "the jobs (in one lane: --lane, unless there is only one)");
    extra(command);
    command
      .addOption(LANE_OPTION())
      .option("--all", "every job matching the filters, instead of ids");
    // retry and promote take one state only: they have no --state to choose
    if (states.length > 1) command.addOption(stateOption(stateHelp, states));
    command.option("--task <name>", "with --all: only jobs of this task");
    addSearchOptions(command, "with --all: ");
    command
      .option("--limit <n>", "with --all: at most n jobs", integerAtLeast(1))
      .option("--batch-size <n>", "jobs per backend call", integerAtLeast(1), 100)
      .option("--page-size <n>", "with --all: jobs listed per round trip", integerAtLeast(1))
      .option("--no-progress", "no progress bar (drawn on stderr when it is a terminal)")
      .addHelpText(
        "after",
        `
With --all the CLI walks the matching jobs and acts in batches (one backend call each,
atomic on Redis) with a progress bar. Jobs that enter the state after the command started
are left alone. Ctrl-C stops after the batch in flight (exit 130). With ids, fewer jobs
changed than named exits 1.
${examples(help)}`,
      )
      .action(async (ids: string[], options: Parameters<typeof bulk>[3], self: Command) =>
        run(self, (ctx) => bulk(ctx, action, ids, options)),
      );
  };

  bulkCommand("retry", "Put failed jobs back to waiting (attempts start again)", ["failed"], "", [
    "tasklane jobs retry 6f1c2a9e-… --lane default",
    "tasklane jobs retry --lane default --all --task send-email",
    "tasklane jobs retry --lane default --all --error-name TimeoutError   # a failure group",
  ]);
  bulkCommand(
    "cancel",
    "Cancel waiting, delayed, blocked or running jobs (a running job's signal aborts)",
    ["waiting", "delayed", "blocked", "active"],
    "with --all: waiting, delayed, blocked, active (default waiting,delayed)",
    [
      "tasklane jobs cancel order-42 --lane default",
      "tasklane jobs cancel --all --lane low --state waiting",
    ],
  );
  bulkCommand(
    "delete",
    "Delete jobs that are not running",
    ["waiting", "delayed", "blocked", "failed", "succeeded", "canceled", "expired"],
    "with --all, required: waiting, delayed, blocked, failed, succeeded, canceled, expired",
    [
      "tasklane jobs delete order-42 --lane default",
      "tasklane jobs delete --all --state failed --lane default",
    ],
  );
  bulkCommand("promote", "Run delayed jobs now (capability promote)", ["delayed"], "", [
    "tasklane jobs promote reminder-ada --lane default",
    "tasklane jobs promote --all --lane low",
  ]);
  bulkCommand(
    "priority",
    "Change waiting and delayed jobs' priority, -1000..1000 (capability changePriority)",
    ["waiting", "delayed"],
    "with --all: waiting, delayed (default both)",
    [
      "tasklane jobs priority --priority 100 order-42 --lane default",
      "tasklane jobs priority --priority -5 --all --lane default --tag batch:7",
    ],
    (c) =>
      c.requiredOption(
        "--priority <n>",
        "the new priority, -1000..1000 (higher first)",
        parsePriority,
      ),
  );
  bulkCommand(
    "move",
    "Move jobs to another lane, keeping their ids (capability move); a running job's handler aborts and it runs again there",
    ["waiting", "delayed", "active", "failed"],
    "with --all, required: waiting, delayed, active, failed",
    [
      "tasklane jobs move order-42 --lane default --to high",
      "tasklane jobs move --all --lane default --state waiting --task report --to low",
    ],
    (c) => c.requiredOption("--to <lane>", "the lane to move the jobs to"),
  );

  program
    .command("enqueue")
    .description(
      "Publish one job; the payload is validated by the task's schema when the config defines it",
    )
    .argument("<task>", "the task's name")
    .argument("<json>", "the payload, as JSON ('-' reads it from stdin)")
    .addOption(
      new Option("--lane <name>", "the lane, for a task the config does not define").argParser(
        collectList,
      ),
    )
    .option("--job-id <id>", "the job's id: publishing it again is a no-op (idempotent)")
    .option("--delay <duration>", "run no earlier than this from now (e.g. 30s, 5m)", parseDuration)
    .option("--run-at <time>", "run no earlier than this time (ISO 8601 or epoch ms)", parseTime)
    .option("--priority <n>", "job priority in its lane, -1000..1000 (higher first)", parsePriority)
    .option("--app-data <json>", "application data for the handler (ctx.appData)", parseJson)
    .option("--group-id <id>", "message group (SQS FIFO lanes)")
    .option(
      "--tag <tags>",
      "tags to find the job by (comma-separated or repeated; capability tags)",
      collectList,
    )
    .option(
      "--expires-in <duration>",
      "the job expires if it has not started this long from now (capability expiry)",
      parseDuration,
    )
    .option(
      "--expires-at <time>",
      "the job expires if it has not started by then (ISO 8601 or epoch ms; capability expiry)",
      parseTime,
    )
    .option(
      "--group <name>",
      "fair group, e.g. a tenant, on a lane with groups (capability groups)",
    )
    .option(
      "--debounce <key>",
      "collapse publishes of this key within --window into one job (capability debounce)",
    )
    .option("--window <duration>", "the debounce window (with --debounce, e.g. 2s)", parseDuration)
    .addOption(
      new Option("--keep <which>", "which payload a debounced job keeps")
        .choices(["last", "first"])
        .default(undefined, "last"),
    )
    .option(
      "--depends-on <ids>",
      "jobs this one waits for: ids in its lane, or <lane>:<id> (comma-separated or repeated; capability flows)",
      collectList,
    )
    .addOption(
      new Option("--on-failure <policy>", "what a dependency's failure does to this job")
        .choices(["fail", "ignore", "continue"])
        .default(undefined, "fail"),
    )
    .addHelpText(
      "after",
      examples([
        `tasklane enqueue send-email '{"to":"ada@example.com","subject":"Hi"}'`,
        `tasklane enqueue send-email '{"to":"ada@example.com","subject":"Hi"}' --job-id welcome-ada --delay 5m`,
        `tasklane enqueue resize '{"url":"s3://…"}' --lane images   # a task no config defines`,
        `tasklane enqueue send-email '{"to":"ada@example.com","subject":"Hi"}' --tag customer:42 --expires-in 1h`,
        `tasklane enqueue reindex '{"user":7}' --debounce user-7 --window 2s   # one job per 2 s`,
        `tasklane enqueue build-report '{"day":"2026-11-26"}' --depends-on exports:job-41,job-42`,
      ]),
    )
    .action(
      async (
        task: string,
        json: string,
        options: Parameters<typeof enqueue>[3],
        command: Command,
      ) => run(command, (ctx) => enqueue(ctx, task, json, options)),
    );

  program
    .command("tail")
    .description("Print job events from every process as they happen, until Ctrl-C")
    .addOption(LANE_OPTION())
    .addOption(
      new Option("--type <types>", "only these event types (comma-separated)").argParser(
        collectChoices(EVENT_TYPES),
      ),
    )
    .option("--count <n>", "stop after n events", integerAtLeast(1))
    .addHelpText(
      "after",
      `
Events: ${EVENT_TYPES.join(", ")}.
Redis: the processes that publish, run and manage jobs must create their adapter with
lifecycleEvents: true for their events to be seen (cancels always are); the CLI's own
actions always announce theirs. SQS carries no events (exit 3).
${examples([
  "tasklane tail",
  "tasklane tail --lane default --type failed,retrying",
  "tasklane tail --json --count 1 --type failed   # wait for the next failure",
])}`,
    )
    .action(
      async (options: { lane?: string[]; type?: string[]; count?: number }, command: Command) =>
        run(command, (ctx) => tail(ctx, options)),
    );

  program
    .command("pause")
    .description("Pause lanes: workers stop taking their jobs (running jobs go on)")
    .argument("<lanes...>", "lane names")
    .action(async (lanes: string[], _options: unknown, command: Command) =>
      run(command, (ctx) => setPaused(ctx, lanes, true)),
    );

  program
    .command("resume")
    .description("Resume paused lanes")
    .argument("<lanes...>", "lane names")
    .action(async (lanes: string[], _options: unknown, command: Command) =>
      run(command, (ctx) => setPaused(ctx, lanes, false)),
    );

  program
    .command("failures")
    .description(
      "Failed jobs grouped by error name, largest group first (capability failureGroups)",
    )
    .addOption(LANE_OPTION())
    .addHelpText(
      "after",
      `
Each group: its lane, error name, how many jobs, and its newest failure (time, task,
message). Retry or delete a group with jobs retry|delete --all --error-name <group>.
${examples(["tasklane failures", "tasklane failures --lane default --json"])}`,
    )
    .action(async (options: { lane?: string[] }, command: Command) =>
      run(command, (ctx) => failures(ctx, options)),
    );

  program
    .command("workers")
    .description(
      "The running workers serving the lanes, from every process: host, pid, lanes, jobs held and running, last heartbeat (capability workers)",
    )
    .addHelpText(
      "after",
      `
A worker registers at start and on every heartbeat and leaves at stop; one whose process
died drops out three heartbeat periods after its last one ("lapses").
${examples(["tasklane workers", "tasklane workers --json | jq .held"])}`,
    )
    .action(async (_options: unknown, command: Command) => run(command, (ctx) => workers(ctx)));

  program
    .command("schedules")
    .description("Recurring schedules of every lane (exit 3 where the adapter lacks them)")
    .action(async (_options: unknown, command: Command) => run(command, (ctx) => schedules(ctx)));

  return program;
}
