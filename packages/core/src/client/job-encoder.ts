import type { StandardSchemaV1 } from "@standard-schema/spec";
import {
  type Adapter,
  DEPENDENCY_POLICIES,
  type JobDebounce,
  type JobDependency,
  type NewJob,
} from "../adapter.ts";
import { byteLength, encodeJson } from "../codec.ts";
import { ConfigError, PayloadTooLargeError, UnsupportedError } from "../errors.ts";
import { createJobId } from "../job-id.ts";
import { type AnyTask, schemaError } from "../task.ts";
import type { PublishItem, PublishOptions } from "./tasklane.ts";

/** Job-level priority bounds (inclusive). Higher runs first inside a lane. */
export const MIN_JOB_PRIORITY = -1000;
export const MAX_JOB_PRIORITY = 1000;
/** Most tags one job carries, and the longest tag. */
export const MAX_TAGS = 16;
export const MAX_TAG_LENGTH = 128;

/** Most jobs one job waits for (`dependsOn` and a flow's children together). */
export const MAX_DEPENDENCIES = 1_000;

/**
 * The name of an option in errors: of publish's options, of publishMany's item (a
 * number), or under a path (a flow's job: "children[0].options").
 */
function fieldOf(index: number | string | undefined, field: string): string {
  if (typeof index === "string") return `${index}.${field}`;
  return index === undefined ? `options.${field}` : `items[${index}].${field}`;
}

export interface JobEncoder {
  /**
   * Encode and check one validated job; throws before anything is written. `at` names
   * its options in errors (a flow's job: "children[0].options"); default "options".
   */
  prepare(task: AnyTask, value: unknown, opts: PublishOptions, now: number, at?: string): NewJob;
  /**
   * Validate and encode publishMany's items, in order; throws at the first bad one,
   * before anything is written.
   */
  prepareAll(
    task: AnyTask,
    items: readonly PublishItem<unknown>[],
    now: number,
  ): NewJob[] | Promise<NewJob[]>;
}

/**
 * Turning validated payloads and publish options into the jobs an adapter stores, with
 * every check that must fail before anything is written: size, priority, delay, job id,
 * and what the adapter can hold.
 */
export function createJobEncoder(
  adapter: Adapter,
  maxPayloadBytes: number,
  grouped: (lane: string) => boolean = () => false,
  laneName: (lane: string) => string | undefined = (lane) => lane,
): JobEncoder {
  /** Encode and check one validated job; throws before anything is written. */
  const prepare = (
    task: AnyTask,
    value: unknown,
    opts: PublishOptions,
    now: number,
    index?: number | string,
  ): NewJob => {
    const encoded = encodeJson(value);
    if (
      opts.priority === undefined &&
      opts.delayMs === undefined &&
      opts.runAt === undefined &&
      opts.jobId === undefined &&
      opts.appData === undefined &&
      opts.groupId === undefined &&
      opts.group === undefined &&
      opts.tags === undefined &&
      opts.expiresInMs === undefined &&
      opts.expiresAt === undefined &&
      opts.debounce === undefined &&
      opts.dependsOn === undefined
    ) {
      // No options (publishMany's usual item): nothing to check but the size. Kept apart
      // from prepareWithOptions so the function run per job stays small, which V8
      // optimizes sooner and runs with fewer checks.
      const size = byteLength(encoded);
      if (size > maxPayloadBytes) throw payloadTooLarge(task, size, index);
      return {
        id: createJobId(),
        freshId: true,
        task: task.name,
        payload: encoded,
        priority: 0,
        publishedAt: now,
      };
    }
    return prepareWithOptions(task, encoded, opts, now, index);
  };

  /**
   * Validate and encode publishMany's items, in order; throws at the first bad one, before
   * anything is written. A plain loop in a function of its own, not in publishMany: V8
   * compiles a long loop while it runs, and here that is neither inside an async function
   * nor followed by code that has not run yet (which deoptimized the compiled loop on
   * every call; see packInto in the Redis adapter). The schema is called straight from the
   * loop (one call per item until V8 inlines it). The first schema that answers with a
   * Promise hands the rest of the items to prepareRest.
   */
  const prepareAll = (
    task: AnyTask,
    items: readonly PublishItem<unknown>[],
    now: number,
  ): NewJob[] | Promise<NewJob[]> => {
    const jobs: NewJob[] = [];
    const schema = task.schema["~standard"];
    for (let i = 0; i < items.length; i++) {
      const item = items[i] as PublishItem<unknown>;
      const result = schema.validate(item.payload);
      if (result instanceof Promise) return prepareRest(task, items, now, jobs, i, result);
      if (result.issues) throw schemaError(task.name, result.issues, i);
      jobs.push(prepare(task, result.value, item, now, i));
    }
    return jobs;
  };

  /** prepareAll from item `from` on, whose validation is `pending`; awaits what needs it. */
  const prepareRest = async (
    task: AnyTask,
    items: readonly PublishItem<unknown>[],
    now: number,
    jobs: NewJob[],
    from: number,
    pending: Promise<StandardSchemaV1.Result<unknown>>,
  ): Promise<NewJob[]> => {
    const schema = task.schema["~standard"];
    for (let i = from; i < items.length; i++) {
      const item = items[i] as PublishItem<unknown>;
      const result = await (i === from ? pending : schema.validate(item.payload));
      if (result.issues) throw schemaError(task.name, result.issues, i);
      jobs.push(prepare(task, result.value, item, now, i));
    }
    return jobs;
  };

  const payloadTooLarge = (task: AnyTask, size: number, index: number | string | undefined) =>
    new PayloadTooLargeError(
      `Payload of task "${task.name}"${index === undefined ? "" : ` (item ${index})`}`,
      size,
      maxPayloadBytes,
    );

  const prepareWithOptions = (
    task: AnyTask,
    encoded: string,
    opts: PublishOptions,
    now: number,
    index: number | string | undefined,
  ): NewJob => {
    const appData = opts.appData === undefined ? undefined : encodeJson(opts.appData);
    const size = byteLength(encoded) + (appData ? byteLength(appData) : 0);
    if (size > maxPayloadBytes) throw payloadTooLarge(task, size, index);
    const priority = opts.priority ?? 0;
    if (!Number.isInteger(priority) || priority < MIN_JOB_PRIORITY || priority > MAX_JOB_PRIORITY) {
      throw new ConfigError(
        fieldOf(index, "priority"),
        priority,
        `must be an integer from ${MIN_JOB_PRIORITY} to ${MAX_JOB_PRIORITY}`,
      );
    }
    if (priority !== 0 && !adapter.capabilities.priorities) {
      throw new UnsupportedError(
        adapter.name,
        "job-level priorities",
        "use separate lanes instead",
      );
    }
    if (opts.delayMs !== undefined && opts.runAt !== undefined) {
      throw new ConfigError(
        fieldOf(index, "delayMs"),
        opts.delayMs,
        "give delayMs or runAt, not both",
      );
    }
    if (opts.delayMs !== undefined && !(Number.isFinite(opts.delayMs) && opts.delayMs >= 0)) {
      throw new ConfigError(
        fieldOf(index, "delayMs"),
        opts.delayMs,
        "must be a finite number >= 0",
      );
    }
    if (opts.runAt !== undefined && !Number.isFinite(opts.runAt)) {
      throw new ConfigError(fieldOf(index, "runAt"), opts.runAt, "must be an epoch-ms number");
    }
    const debounce =
      opts.debounce === undefined ? undefined : checkDebounce(opts.debounce, now, index);
    let runAt = opts.runAt ?? (opts.delayMs ? now + opts.delayMs : undefined);
    // keep "last": the job runs at the window's end, with the last payload put inside it
    if (debounce?.keep === "last" && !(runAt !== undefined && runAt >= debounce.until)) {
      runAt = debounce.until;
    }
    if (runAt !== undefined && runAt - now > adapter.capabilities.maxDelayMs) {
      throw new UnsupportedError(
        adapter.name,
        `a delay of ${runAt - now} ms`,
        `the maximum is ${adapter.capabilities.maxDelayMs} ms`,
      );
    }
    const freshId = opts.jobId === undefined;
    const jobId = freshId ? createJobId() : opts.jobId;
    if (typeof jobId !== "string" || jobId.length === 0 || jobId.length > 128) {
      throw new ConfigError(fieldOf(index, "jobId"), jobId, "must be a string of 1-128 characters");
    }
    const job: NewJob = {
      id: jobId,
      freshId,
      task: task.name,
      payload: encoded,
      priority,
      publishedAt: now,
    };
    if (appData !== undefined) job.appData = appData;
    if (runAt !== undefined && runAt > now) job.runAt = runAt;
    if (opts.groupId !== undefined) job.groupId = opts.groupId;
    if (opts.group !== undefined) {
      // On SQS both would name the message group: one option, not a silent choice.
      if (opts.groupId !== undefined) {
        throw new ConfigError(
          fieldOf(index, "groupId"),
          opts.groupId,
          "give group or groupId, not both",
        );
      }
      job.group = checkGroup(task, opts.group, index);
    }
    if (opts.tags !== undefined) {
      const tags = checkTags(opts.tags, index);
      if (tags.length > 0) job.tags = tags;
    }
    const expiresAt = checkExpiry(opts, runAt, now, index);
    if (expiresAt !== undefined) job.expiresAt = expiresAt;
    if (debounce !== undefined) job.debounce = debounce;
    if (opts.dependsOn !== undefined) {
      if (typeof index === "number") {
        throw new ConfigError(
          fieldOf(index, "dependsOn"),
          opts.dependsOn,
          "is not taken by publishMany: publish the job alone, or use flow",
        );
      }
      if (debounce !== undefined) {
        throw new ConfigError(
          fieldOf(index, "debounce"),
          opts.debounce,
          "a job with dependencies cannot be debounced",
        );
      }
      job.dependsOn = checkDependsOn(task, opts.dependsOn, index);
    }
    return job;
  };

  const checkDependsOn = (
    task: AnyTask,
    given: unknown,
    index: string | undefined,
  ): JobDependency[] => {
    const field = fieldOf(index, "dependsOn");
    if (!Array.isArray(given) || given.length === 0 || given.length > MAX_DEPENDENCIES) {
      throw new ConfigError(
        field,
        given,
        `must be an array of 1-${MAX_DEPENDENCIES} job ids or { jobId, lane?, onFailure? }`,
      );
    }
    const deps: JobDependency[] = [];
    const seen = new Set<string>();
    for (const [i, entry] of given.entries()) {
      const at = `${field}[${i}]`;
      const given: Record<string, unknown> =
        typeof entry === "object" && entry !== null ? entry : { jobId: entry };
      const { jobId, lane = task.lane, onFailure = "fail", ...rest } = given;
      const unknownKey = Object.keys(rest)[0];
      if (unknownKey !== undefined) {
        throw new ConfigError(`${at}.${unknownKey}`, rest[unknownKey], "is not an option");
      }
      if (typeof jobId !== "string" || jobId.length === 0 || jobId.length > 128) {
        throw new ConfigError(
          typeof entry === "object" && entry !== null ? `${at}.jobId` : at,
          jobId,
          "must be a job id (a string of 1-128 characters)",
        );
      }
      const full = typeof lane === "string" ? laneName(lane) : undefined;
      if (full === undefined) throw new ConfigError(`${at}.lane`, lane, "no such lane");
      if (!DEPENDENCY_POLICIES.includes(onFailure as never)) {
        throw new ConfigError(
          `${at}.onFailure`,
          onFailure,
          `must be one of ${DEPENDENCY_POLICIES.join(", ")}`,
        );
      }
      const key = `${full}\n${jobId}`;
      if (seen.has(key)) throw new ConfigError(at, jobId, "is given twice");
      seen.add(key);
      deps.push({ lane: full, id: jobId, onFailure: onFailure as JobDependency["onFailure"] });
    }
    if (adapter.capabilities.flows !== true || adapter.putFlow === undefined) {
      throw new UnsupportedError(adapter.name, "dependencies (capability flows)", field);
    }
    return deps;
  };

  const checkGroup = (
    task: AnyTask,
    group: unknown,
    index: number | string | undefined,
  ): string => {
    const field = fieldOf(index, "group");
    if (typeof group !== "string" || group.length === 0 || group.length > 128) {
      throw new ConfigError(field, group, "must be a string of 1-128 characters");
    }
    if (!adapter.capabilities.groups && !adapter.capabilities.messageGroups)
      throw new UnsupportedError(adapter.name, "fair groups (groups)", field);
    if (!grouped(task.lane)) {
      throw new ConfigError(field, group, `lane "${task.lane}" has no groups option`);
    }
    return group;
  };

  const checkDebounce = (
    given: unknown,
    now: number,
    index: number | string | undefined,
  ): JobDebounce => {
    const field = fieldOf(index, "debounce");
    if (typeof given !== "object" || given === null || Array.isArray(given)) {
      throw new ConfigError(field, given, "must be an object { key, ms, keep? }");
    }
    const { key, ms, keep = "last", ...rest } = given as Record<string, unknown>;
    const unknownKey = Object.keys(rest)[0];
    if (unknownKey !== undefined) {
      throw new ConfigError(`${field}.${unknownKey}`, rest[unknownKey], "is not an option");
    }
    if (typeof key !== "string" || key.length === 0 || key.length > 128) {
      throw new ConfigError(`${field}.key`, key, "must be a string of 1-128 characters");
    }
    if (typeof ms !== "number" || !Number.isInteger(ms) || ms < 1) {
      throw new ConfigError(`${field}.ms`, ms, "must be an integer >= 1");
    }
    if (ms > adapter.capabilities.maxDelayMs) {
      throw new ConfigError(
        `${field}.ms`,
        ms,
        `must be at most the adapter's maxDelayMs (${adapter.capabilities.maxDelayMs})`,
      );
    }
    if (keep !== "last" && keep !== "first") {
      throw new ConfigError(`${field}.keep`, keep, 'must be "last" or "first"');
    }
    if (adapter.capabilities.debounce !== true) {
      throw new UnsupportedError(adapter.name, "debounce", field);
    }
    return { key, until: now + ms, keep };
  };

  const checkTags = (tags: unknown, index: number | string | undefined): string[] => {
    const field = fieldOf(index, "tags");
    if (!Array.isArray(tags) || tags.length > MAX_TAGS) {
      throw new ConfigError(field, tags, `must be an array of at most ${MAX_TAGS} tags`);
    }
    for (const [i, tag] of tags.entries()) {
      if (typeof tag !== "string" || tag.length === 0 || tag.length > MAX_TAG_LENGTH) {
        throw new ConfigError(
          `${field}[${i}]`,
          tag,
          `must be a string of 1-${MAX_TAG_LENGTH} characters`,
        );
      }
      if (tags.indexOf(tag) !== i) throw new ConfigError(`${field}[${i}]`, tag, "is given twice");
    }
    if (tags.length > 0 && !adapter.capabilities.tags) {
      throw new UnsupportedError(adapter.name, "tags", field);
    }
    return tags as string[];
  };

  const checkExpiry = (
    opts: PublishOptions,
    runAt: number | undefined,
    now: number,
    index: number | string | undefined,
  ): number | undefined => {
    const { expiresInMs, expiresAt } = opts;
    if (expiresInMs === undefined && expiresAt === undefined) return undefined;
    if (expiresInMs !== undefined && expiresAt !== undefined) {
      throw new ConfigError(
        fieldOf(index, "expiresInMs"),
        expiresInMs,
        "give expiresInMs or expiresAt, not both",
      );
    }
    if (expiresInMs !== undefined && !(Number.isFinite(expiresInMs) && expiresInMs > 0)) {
      throw new ConfigError(
        fieldOf(index, "expiresInMs"),
        expiresInMs,
        "must be a finite number > 0",
      );
    }
    const at = expiresAt ?? now + (expiresInMs as number);
    const field = fieldOf(index, expiresAt !== undefined ? "expiresAt" : "expiresInMs");
    const value = expiresAt ?? expiresInMs;
    if (!Number.isFinite(at) || at <= now) {
      throw new ConfigError(field, value, "must be an epoch-ms time after now");
    }
    if (runAt !== undefined && at <= runAt) {
      throw new ConfigError(field, value, "must be after runAt: the job could never start");
    }
    if (!adapter.capabilities.expiry) {
      throw new UnsupportedError(adapter.name, "job expiry", field);
    }
    return at;
  };

  return { prepare, prepareAll };
}
