import {
  CreateQueueCommand,
  GetQueueUrlCommand,
  SQSClient,
  type SQSClientConfig,
} from "@aws-sdk/client-sqs";
import {
  type Adapter,
  AdapterError,
  type Capabilities,
  ClosedError,
  ConfigError,
  count,
  functionSchema,
  type LaneStoreOptions,
  parseOptions,
  settingsObject,
  wholeTimerMs,
} from "@tasklane/core/adapter";
import { z } from "zod";
import { createEscaper } from "./codec.ts";
import { describe } from "./sqs-io.ts";
import { type LaneBand, SqsLane } from "./sqs-lane.ts";

/** Priority bands: which job priorities go to the `-high` and `-low` SQS queues. */
export interface PriorityLanes {
  /** Jobs with priority >= this go to `<lane>-high`. Default 1. */
  high?: number;
  /** Jobs with priority <= this go to `<lane>-low`. Default -1. */
  low?: number;
}

export interface SqsAdapterOptions {
  /**
   * An SQS client to use. The adapter never destroys it. Without one, the adapter makes
   * its own from `clientConfig` (credentials and region from the SDK's default chain) and
   * destroys it on close.
   */
  client?: SQSClient;
  /** Configuration for the client the adapter makes when `client` is absent. Default `{}`. */
  clientConfig?: SQSClientConfig;
  /**
   * Prefix for every SQS queue name (before core's namespace), e.g. `"prod-"`. SQS names
   * are at most 80 characters: prefix + name + band suffix + `-dlq` + `.fifo` must fit.
   * Default "" (also for `undefined`, e.g. an unset environment variable).
   */
  queuePrefix?: string | undefined;
  /**
   * Create missing SQS queues (lanes, bands, dead-letter queues). When false the adapter
   * only looks queues up (GetQueueUrl), for IAM roles without sqs:CreateQueue.
   * Default true.
   */
  createQueues?: boolean;
  /**
   * Extra attributes for queues the adapter creates (e.g. `{ KmsMasterKeyId: "..." }`).
   * Default: none; the adapter always sets MessageRetentionPeriod 1209600 (14 days) and
   * MaximumMessageSize 1048576 unless given here.
   */
  queueAttributes?: Record<string, string>;
  /**
   * Map job-level priorities onto separate SQS queues ("bands") of one lane:
   * `<name>-high`, `<name>`, `<name>-low`. Reserve drains the higher band first. With
   * bands, `capabilities.priorities` is true; order holds between bands, not inside one
   * (SQS standard queues are not ordered). `true` means `{ high: 1, low: -1 }`.
   * Default false: one SQS queue per lane, and job priorities other than 0 are refused.
   */
  priorityLanes?: boolean | PriorityLanes;
  /**
   * Which lanes are FIFO queues (SQS name ending in `.fifo`). A lane name that already
   * ends in `.fifo` always is. Default: only those.
   */
  fifo?: boolean | ((laneName: string) => boolean);
  /**
   * How long `probe()` trusts a GetQueueAttributes count, and how long a band that just
   * came back empty is skipped by reserve, ms. Default 1_000.
   */
  probeCacheMs?: number;
  /**
   * Escape characters above U+FFFF as well as the ones SQS refuses. Real SQS accepts them;
   * fauxqs and some other emulators do not. Costs 8 extra bytes per such character, only
   * when present. Default true.
   */
  escapeAstral?: boolean;
  /**
   * Messages a long poll brought in after its reserve had already returned (aborted or
   * timed out) wait this long for the next reserve, then are handed back to SQS, ms;
   * never longer than half their lease (a hand-back after the lease ended could leave two
   * live copies of a job), and one with less than 500 ms of lease left is not handed back
   * but left to come back by itself. Default 2_000.
   */
  bufferHoldMs?: number;
  /**
   * Extra tries for batch entries that SQS failed on its side (SenderFault false); whole
   * requests are retried by the SDK client's retry strategy. Default 3.
   */
  entryRetries?: number;
  /**
   * Read ahead on a busy lane for a worker that reserves again within 100 ms (its jobs
   * finish fast): after a full receive the next ReceiveMessage starts at once, and a
   * reserve for fewer than 10 receives 10, keeping the rest for the next reserves.
   * Buffered messages hold leases; ones not reserved within `bufferHoldMs` go back to
   * SQS. 0 turns it off. Unit: messages, a multiple of 10. Default 10.
   */
  prefetch?: number;
  /** Called with failures of background work (hand-backs, re-delays). Default: process warning. */
  onError?: (error: Error) => void;
}

/** Most items per adapter call (SQS requests carry 10 each; a call makes up to 10). */
export const SQS_MAX_CALL_BATCH = 100;
/** 12 hours: SQS's longest visibility timeout. */
export const SQS_MAX_LEASE_MS = 43_200_000;
/** One year: longer delays hop every 15 minutes (see README), so this is a policy bound. */
export const SQS_MAX_DELAY_MS = 365 * 86_400_000;

/** What the SQS adapter can do (priorities depends on `priorityLanes`). */
export function sqsCapabilities(priorities: boolean): Capabilities {
  return {
    // Items per adapter call, not per SQS request: a call is split into batch requests of
    // 10 sent in parallel (and a busy reserve fans out receives), so core's calls need not
    // wait for each other ten jobs at a time.
    maxBatch: SQS_MAX_CALL_BATCH,
    maxDelayMs: SQS_MAX_DELAY_MS,
    maxLeaseMs: SQS_MAX_LEASE_MS,
    maxWaitMs: 20_000,
    timeResolutionMs: 1_000,
    exactCounts: false,
    // Standard queues are not ordered; FIFO queues order each message group, not the lane;
    // priority bands are drained highest first (see README, Order).
    ordered: false,
    priorities,
    dedup: false,
    fencing: true,
    get: false,
    list: false,
    count: true,
    cancel: false,
    cancelActive: false,
    retryFailed: true,
    delete: false,
    pause: false,
    subscribe: false,
    lifecycleEvents: false,
    stats: false,
    history: false,
    retention: false,
    maxConcurrency: false,
    // The operator features: SQS keeps no job after it is deleted, cannot find a message
    // by id, search, re-order or move one, and has no place to store anything beside the
    // message. results, waitFor, reports, tags, search, failureGroups, changePriority,
    // promote, move and expiry are out of reach for good. The worker registry is not:
    // it needs a store beside SQS (workers could register elsewhere), so it is off until
    // someone wants it.
    results: false,
    waitFor: false,
    reports: false,
    tags: false,
    search: false,
    failureGroups: false,
    workers: false,
    changePriority: false,
    promote: false,
    move: false,
    expiry: false,
    // Schedules need a store with a compare-and-set that commits together with the put of
    // the slot's job; SQS has neither (a message cannot be read by key or updated).
    schedules: false,
    // An uncounted release sends a fresh copy; a delay on it is not built yet.
    retryAfter: false,
    // Fair groups need the lane's waiting jobs partitioned by group and counted per group
    // as they run; a queue hands out what it holds, so round-robin and a per-group limit
    // are not offered. A job's group is SQS's own MessageGroupId instead (messageGroups).
    groups: false,
    // Poison isolation: a message carries no state of its own delivery, and marking the
    // prefetched ones would cost a send and a delete per job, so a lease that runs out is
    // always a stall (startNow is ignored). Stalls are known (ApproximateReceiveCount), so
    // suspects are marked: on FIFO lanes every redelivery (see sqs-lane.ts).
    startNow: false,
    suspects: true,
    // A standard queue cannot count the starts of a window atomically across consumers
    // (a receive is not conditional on anything), so a rate limit cannot be exact.
    rateLimit: false,
    groupRateLimit: false,
    // A sent message cannot be found by key, nor its body replaced, before it is received.
    debounce: false,
    // publish's group is the MessageGroupId: FIFO queues serve each group in order with
    // one receive in flight per group; standard queues are SQS fair queues by it.
    messageGroups: true,
    // A job waiting for others would need a message that is not received until they
    // end, and an end counted once across consumers: no putFlow.
    flows: false,
  };
}

export interface SqsAdapter extends Adapter {
  /** The SQS client in use (the injected one, or the adapter's own). */
  readonly client: SQSClient;
  lane(name: string, options: LaneStoreOptions): Promise<SqsLane>;
}

const NAME_RE = /^[A-Za-z0-9_-]{1,80}$/;

/** Job-level priorities a band boundary may sit at (core's publish bounds). */
const priority = z
  .number()
  .int("must be an integer from -1000 to 1000")
  .min(-1000, "must be an integer from -1000 to 1000")
  .max(1000, "must be an integer from -1000 to 1000");

/** `createSqsAdapter`'s options: a ConfigError names a bad field and its value. */
export const sqsAdapterOptionsSchema = z
  .object({
    client: z
      .custom<SQSClient>(
        (v) =>
          typeof v === "object" &&
          v !== null &&
          typeof (v as SQSClient).send === "function" &&
          typeof (v as SQSClient).destroy === "function",
        "must be an SQSClient from @aws-sdk/client-sqs",
      )
      .optional(),
    clientConfig: settingsObject<SQSClientConfig>("SQSClient configuration").optional(),
    queuePrefix: z
      .string()
      .regex(/^[A-Za-z0-9_-]{0,40}$/, "0-40 letters, digits, '-' or '_'")
      .optional(),
    createQueues: z.boolean().optional(),
    queueAttributes: z
      .record(z.string(), z.string("every attribute value must be a string"))
      .optional(),
    priorityLanes: z
      .union(
        [z.boolean(), z.object({ high: priority.optional(), low: priority.optional() }).strict()],
        "must be a boolean or { high, low }",
      )
      .optional(),
    fifo: z
      .union(
        [z.boolean(), functionSchema<(laneName: string) => boolean>()],
        "must be a boolean or a function of the lane name",
      )
      .optional(),
    probeCacheMs: wholeTimerMs(0).optional(),
    escapeAstral: z.boolean().optional(),
    bufferHoldMs: wholeTimerMs(0).optional(),
    entryRetries: count(0).max(10, "must be an integer from 0 to 10").optional(),
    prefetch: count(0).multipleOf(10, "must be a multiple of 10").optional(),
    onError: functionSchema<(error: Error) => void>().optional(),
  })
  .strict();

/**
 * The Amazon SQS adapter: one SQS queue per lane (and per priority band), batched
 * writes, long polls, leases as visibility timeouts, a dead-letter queue per lane.
 *
 * @example
 * const adapter = createSqsAdapter({ clientConfig: { region: "eu-west-1" }, queuePrefix: "v42-" });
 */
export function createSqsAdapter(input: SqsAdapterOptions = {}): SqsAdapter {
  if (input === null || typeof input !== "object") {
    throw new ConfigError("options", input, "must be an object");
  }
  const options = parseOptions(sqsAdapterOptionsSchema, input, "");
  if (options.client !== undefined && options.clientConfig !== undefined) {
    throw new ConfigError(
      "clientConfig",
      options.clientConfig,
      "configures the client the adapter makes; with `client` given it would be ignored",
    );
  }
  const prefix = options.queuePrefix ?? "";
  let bands: { high: number; low: number } | undefined;
  if (options.priorityLanes === true) bands = { high: 1, low: -1 };
  else if (typeof options.priorityLanes === "object") {
    const high = options.priorityLanes.high ?? 1;
    const low = options.priorityLanes.low ?? -1;
    if (low >= high) {
      // Name the bound that was given: with only one, the other is its default.
      const lowGiven = options.priorityLanes.low !== undefined;
      throw lowGiven
        ? new ConfigError("priorityLanes.low", low, `must be below priorityLanes.high (${high})`)
        : new ConfigError("priorityLanes.high", high, `must be above priorityLanes.low (${low})`);
    }
    bands = { high, low };
  }
  const probeCacheMs = options.probeCacheMs ?? 1_000;
  const bufferHoldMs = options.bufferHoldMs ?? 2_000;
  const entryRetries = options.entryRetries ?? 3;
  const prefetch = options.prefetch ?? 10;
  const createQueues = options.createQueues ?? true;
  const fifoOption = options.fifo ?? false;
  const isFifo = (name: string) =>
    name.endsWith(".fifo") ||
    (typeof fifoOption === "function" ? fifoOption(name) : fifoOption === true);
  const escaper = createEscaper(options.escapeAstral ?? true);
  const onError =
    options.onError ??
    ((error: Error) => process.emitWarning(error.message, { type: "TasklaneSqsWarning" }));

  const ownClient = options.client === undefined;
  const client = options.client ?? new SQSClient(options.clientConfig ?? {});
  const capabilities = Object.freeze(sqsCapabilities(bands !== undefined));
  const urls = new Map<string, Promise<string>>();
  const lanes = new Map<string, Promise<SqsLane>>();
  let closed = false;

  const queueAttributes = (fifo: boolean): Record<string, string> => ({
    MessageRetentionPeriod: "1209600",
    MaximumMessageSize: "1048576",
    ...(fifo ? { FifoQueue: "true" } : {}),
    ...options.queueAttributes,
  });

  /** The queue URL for an SQS name: cached, looked up, created when allowed. */
  const lookUp = async (
    sqsName: string,
    fifo: boolean,
    create: boolean,
  ): Promise<string | undefined> => {
    try {
      const out = await client.send(new GetQueueUrlCommand({ QueueName: sqsName }));
      if (out.QueueUrl) return out.QueueUrl;
    } catch (error) {
      const name = (error as { name?: string }).name ?? "";
      if (!/QueueDoesNotExist|NonExistentQueue/.test(name)) {
        throw new AdapterError("sqs", `GetQueueUrl ${sqsName}: ${describe(error)}`, {
          cause: error,
        });
      }
    }
    if (!create) return undefined;
    try {
      const out = await client.send(
        new CreateQueueCommand({ QueueName: sqsName, Attributes: queueAttributes(fifo) }),
      );
      if (!out.QueueUrl) throw new Error("no QueueUrl in the response");
      return out.QueueUrl;
    } catch (error) {
      throw new AdapterError("sqs", `CreateQueue ${sqsName}: ${describe(error)}`, { cause: error });
    }
  };

  const urlOf = async (
    sqsName: string,
    fifo: boolean,
    create: boolean,
  ): Promise<string | undefined> => {
    let p = urls.get(sqsName);
    if (!p) {
      const lookup = lookUp(sqsName, fifo, create);
      p = lookup.then((u) => {
        if (u === undefined) throw new Error("missing");
        return u;
      });
      urls.set(sqsName, p);
      p.catch(() => urls.delete(sqsName));
    }
    try {
      return await p;
    } catch (error) {
      if (error instanceof AdapterError) throw error;
      // Not there (and not created by that lookup): a caller that may create tries again.
      return create ? urlOf(sqsName, fifo, create) : undefined;
    }
  };

  const open = async (name: string, laneOptions: LaneStoreOptions): Promise<SqsLane> => {
    const fifo = isFifo(name);
    const stem = `${prefix}${fifo && name.endsWith(".fifo") ? name.slice(0, -5) : name}`;
    const sqsName = (suffix: string) => `${stem}${suffix}${fifo ? ".fifo" : ""}`;
    for (const suffix of ["-dlq", ...(bands ? ["-high", "-low"] : [])]) {
      const full = sqsName(suffix);
      const bare = fifo ? full.slice(0, -5) : full;
      if (!NAME_RE.test(bare) || full.length > 80) {
        throw new ConfigError(
          "lane",
          name,
          `SQS queue name "${full}" is invalid: at most 80 characters (".fifo" included) of letters, digits, '-' and '_'`,
        );
      }
    }
    const laneBands: LaneBand[] = [];
    const specs = bands
      ? [
          { suffix: "-high", minPriority: bands.high },
          { suffix: "", minPriority: bands.low + 1 },
          { suffix: "-low", minPriority: Number.NEGATIVE_INFINITY },
        ]
      : [{ suffix: "", minPriority: Number.NEGATIVE_INFINITY }];
    for (const [index, spec] of specs.entries()) {
      const full = sqsName(spec.suffix);
      const url = await urlOf(full, fifo, createQueues);
      if (url === undefined) {
        throw new AdapterError(
          "sqs",
          `SQS queue "${full}" does not exist and createQueues is false`,
        );
      }
      laneBands.push({ index, name: full, url, minPriority: spec.minPriority });
    }
    const dlqName = sqsName("-dlq");
    return new SqsLane({
      name,
      client,
      fifo,
      bands: laneBands,
      dlqUrl: (create) => urlOf(dlqName, fifo, create && createQueues),
      dlqName,
      maxStalls: laneOptions.maxStalls,
      probeCacheMs,
      bufferHoldMs,
      entryRetries,
      prefetch,
      escaper,
      onError,
    });
  };

  return {
    name: "sqs",
    capabilities,
    client,
    lane(name, laneOptions) {
      if (closed) return Promise.reject(new ClosedError("sqs adapter"));
      if (typeof name !== "string" || !/^[A-Za-z0-9_-]+(\.fifo)?$/.test(name)) {
        return Promise.reject(
          new ConfigError(
            "lane",
            name,
            "letters, digits, '-' and '_' (optionally ending in .fifo)",
          ),
        );
      }
      let p = lanes.get(name);
      if (!p) {
        p = open(name, laneOptions);
        p.catch(() => lanes.delete(name));
        lanes.set(name, p);
      }
      return p;
    },
    async close() {
      if (closed) return;
      closed = true;
      const opened = await Promise.allSettled([...lanes.values()]);
      await Promise.all(
        opened.map((r) => (r.status === "fulfilled" ? r.value.close() : Promise.resolve())),
      );
      if (ownClient) client.destroy();
    },
  };
}
