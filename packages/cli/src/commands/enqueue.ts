/**
 * `tasklane enqueue <task> <json>`: publish one job. A task the config module defines is
 * published through the client like the application does (its schema validates the
 * payload, its lane is the lane); any other task needs `--lane`, and its payload goes out
 * as given (any JSON), with a warning.
 */
import { text } from "node:stream/consumers";
import {
  type AnyTask,
  type DependencyPolicy,
  defineTask,
  type JobDependencyInput,
  type PublishOptions,
  UnsupportedError,
} from "@tasklane/core";
import type { CommandContext } from "../context.ts";
import { UsageError } from "../errors.ts";

export interface EnqueueOptions {
  lane?: string[];
  jobId?: string;
  /** ms */
  delay?: number;
  /** epoch ms */
  runAt?: number;
  priority?: number;
  appData?: unknown;
  groupId?: string;
  /** Tags to find the job by (capability tags). */
  tag?: string[];
  /** ms: the job expires if it has not started by then (capability expiry). */
  expiresIn?: number;
  /** epoch ms */
  expiresAt?: number;
  /** Fair group (capability groups). */
  group?: string;
  /** Debounce key (capability debounce), with `window`. */
  debounce?: string;
  /** ms: the debounce window. */
  window?: number;
  keep?: "last" | "first";
  /** Jobs it waits for: ids in its lane, or "<lane>:<id>" (capability flows). */
  dependsOn?: string[];
  onFailure?: DependencyPolicy;
}

/** Accepts any JSON value: the stand-in schema of a task the CLI has no definition of. */
const anyJson = {
  "~standard": {
    version: 1,
    vendor: "tasklane-cli",
    validate: (value: unknown) => ({ value }),
  },
} as const;

/** The stand-in for a task known only by name: publishable, never run by the CLI. */
function standInTask(name: string, lane: string): AnyTask {
  return defineTask({
    name,
    lane,
    schema: anyJson,
    run() {
      throw new Error(`the tasklane CLI does not run jobs (task "${name}")`);
    },
  });
}

async function readPayload(json: string): Promise<unknown> {
  const source = json === "-" ? await text(process.stdin) : json;
  try {
    return JSON.parse(source);
  } catch (error) {
    throw new UsageError("<json>", `the payload is not JSON (${(error as Error).message})`);
  }
}

/**
 * A --depends-on entry: "<lane>:<id>" when the part before the first colon is a lane of
 * the client, else an id in the job's own lane (an id may hold colons itself).
 */
function dependencyOf(
  ref: string,
  lanes: ReadonlySet<string>,
  onFailure: DependencyPolicy | undefined,
): JobDependencyInput {
  const colon = ref.indexOf(":");
  const lane = colon > 0 ? ref.slice(0, colon) : undefined;
  const dep: JobDependencyInput =
    lane !== undefined && lanes.has(lane) ? { jobId: ref.slice(colon + 1), lane } : { jobId: ref };
  if (onFailure !== undefined) dep.onFailure = onFailure;
  return dep;
}

export async function enqueue(
  ctx: CommandContext,
  taskName: string,
  json: string,
  options: EnqueueOptions,
): Promise<void> {
  if ((options.lane?.length ?? 0) > 1) throw new UsageError("--lane", "give one lane");
  if (options.delay !== undefined && options.runAt !== undefined) {
    throw new UsageError("--delay", "give --delay or --run-at, not both");
  }
  if (options.expiresIn !== undefined && options.expiresAt !== undefined) {
    throw new UsageError("--expires-in", "give --expires-in or --expires-at, not both");
  }
  if ((options.debounce === undefined) !== (options.window === undefined)) {
    const [flag, other] =
      options.debounce === undefined ? ["--window", "--debounce"] : ["--debounce", "--window"];
    throw new UsageError(flag, `needs ${other}`);
  }
  if (options.keep !== undefined && options.debounce === undefined) {
    throw new UsageError("--keep", "needs --debounce");
  }
  if (options.onFailure !== undefined && options.dependsOn === undefined) {
    throw new UsageError("--on-failure", "needs --depends-on");
  }
  if (options.jobId !== undefined && (options.jobId.length === 0 || options.jobId.length > 128)) {
    throw new UsageError("--job-id", "must be 1 to 128 characters");
  }
  const payload = await readPayload(json);
  const setup = await ctx.setup();
  const lane = options.lane?.[0];
  let task = setup.tasks.find((t) => t.name === taskName);
  if (task !== undefined) {
    if (lane !== undefined && lane !== task.lane) {
      throw new UsageError(
        "--lane",
        `task "${taskName}" publishes to lane "${task.lane}" (${setup.source}), not "${lane}"`,
      );
    }
  } else {
    if (lane === undefined) {
      throw new UsageError(
        "--lane",
        setup.fromConfig
          ? `no task "${taskName}" in ${setup.source} (tasks: ${setup.tasks.map((t) => t.name).join(", ") || "none"}); give --lane to publish it unvalidated`
          : `task "${taskName}" is not defined here (no --config): give --lane, or a config module exporting the task`,
      );
    }
    if (setup.fromConfig && !setup.lanes.some((l) => l.name === lane)) {
      throw new UsageError(
        "--lane",
        `no lane "${lane}" in ${setup.source} (lanes: ${setup.lanes.map((l) => l.name).join(", ")})`,
      );
    }
    // Without a config module the lanes are bare names: the one asked for joins them.
    if (!setup.lanes.some((l) => l.name === lane)) setup.lanes.push({ name: lane });
    task = standInTask(taskName, lane);
    ctx.note(
      `warning: task "${taskName}" has no definition here: its payload is published unvalidated`,
    );
  }
  const session = await ctx.connect(setup.tasks.includes(task) ? [] : [task]);
  // Named by capability here: core's refusal names the publish option instead.
  const adapter = session.tl.adapter;
  if (options.tag !== undefined && !adapter.capabilities.tags) {
    throw new UnsupportedError(adapter.name, "tags (capability tags)", "--tag needs it");
  }
  if ((options.expiresIn ?? options.expiresAt) !== undefined && !adapter.capabilities.expiry) {
    const flag = options.expiresIn !== undefined ? "--expires-in" : "--expires-at";
    throw new UnsupportedError(adapter.name, "job expiry (capability expiry)", `${flag} needs it`);
  }
  if (
    options.group !== undefined &&
    !adapter.capabilities.groups &&
    !adapter.capabilities.messageGroups
  ) {
    throw new UnsupportedError(adapter.name, "fair groups (capability groups)", "--group needs it");
  }
  if (options.debounce !== undefined && !adapter.capabilities.debounce) {
    throw new UnsupportedError(
      adapter.name,
      "debounce (capability debounce)",
      "--debounce needs it",
    );
  }
  if (options.dependsOn !== undefined && !adapter.capabilities.flows) {
    throw new UnsupportedError(
      adapter.name,
      "jobs that wait for others (capability flows)",
      "--depends-on needs it",
    );
  }
  const publishOptions: PublishOptions = {};
  if (options.dependsOn !== undefined) {
    const lanes = new Set(setup.lanes.map((l) => l.name));
    publishOptions.dependsOn = options.dependsOn.map((ref) =>
      dependencyOf(ref, lanes, options.onFailure),
    );
  }
  if (options.jobId !== undefined) publishOptions.jobId = options.jobId;
  if (options.delay !== undefined) publishOptions.delayMs = options.delay;
  if (options.runAt !== undefined) publishOptions.runAt = options.runAt;
  if (options.priority !== undefined) publishOptions.priority = options.priority;
  if (options.appData !== undefined) publishOptions.appData = options.appData;
  if (options.groupId !== undefined) publishOptions.groupId = options.groupId;
  if (options.tag !== undefined) publishOptions.tags = options.tag;
  if (options.expiresIn !== undefined) publishOptions.expiresInMs = options.expiresIn;
  if (options.expiresAt !== undefined) publishOptions.expiresAt = options.expiresAt;
  if (options.group !== undefined) publishOptions.group = options.group;
  if (options.debounce !== undefined && options.window !== undefined) {
    publishOptions.debounce = { key: options.debounce, ms: options.window };
    if (options.keep !== undefined) publishOptions.debounce.keep = options.keep;
  }
  const result = await session.tl.publish(task, payload, publishOptions);
  const record = { id: result.id, status: result.status, lane: task.lane, task: task.name };
  if (ctx.json) await ctx.out.json(record);
  else if (result.status === "created") {
    const waits = options.dependsOn?.length;
    const after = waits === undefined ? "" : `, after ${waits} job${waits === 1 ? "" : "s"}`;
    await ctx.out.line(`created job ${result.id} in lane ${task.lane}${after}`);
  } else if (result.status === "debounced") {
    const kept = options.keep === "first" ? "its payload kept" : "its payload replaced";
    await ctx.out.line(`debounced into job ${result.id} in lane ${task.lane} (${kept})`);
  } else {
    await ctx.out.line(
      `duplicate: job ${result.id} already exists in lane ${task.lane} (nothing written)`,
    );
  }
}
