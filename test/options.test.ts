/**
 * Every option of every options object, walked from its zod schema: the client, lanes,
 * tasks, retry policies, workers and their stop, the selectors, and each adapter. For
 * each option, every bad value must throw a ConfigError naming that option and the value,
 * and every good value must be accepted by the real entry point. The list of options is
 * read from the schemas themselves, so an option added without a row here fails the
 * "has a row for every option" test.
 */
import { createServer } from "node:net";
import { SQSClient } from "@aws-sdk/client-sqs";
import { metrics, propagation, trace } from "@opentelemetry/api";
import { createManualClock, createMemoryAdapter } from "@tasklane/adapter-memory";
import { createRedisAdapter } from "@tasklane/adapter-redis";
import { createSqsAdapter } from "@tasklane/adapter-sqs";
import {
  ConfigError,
  createHintedStride,
  createReducedLottery,
  createSelector,
  createStrictPriority,
  createTasklane,
  createTrickleStride,
  defineTask,
  systemClock,
} from "@tasklane/core";
import { laneConfigSchema, MAX_TIMER_MS } from "@tasklane/core/adapter";
import { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { memoryAdapterOptionsSchema } from "../packages/adapter-memory/src/memory-adapter.ts";
import { redisAdapterOptionsSchema } from "../packages/adapter-redis/src/redis-adapter.ts";
import { sqsAdapterOptionsSchema } from "../packages/adapter-sqs/src/sqs-adapter.ts";
import { clientOptionsSchema } from "../packages/core/src/client/client-options.ts";
import { retryOptionsSchema } from "../packages/core/src/retry.ts";
import { createSelectorOptionsSchema } from "../packages/core/src/selectors/create-selector.ts";
import { lotteryOptionsSchema } from "../packages/core/src/selectors/draw.ts";
import { hintedStrideOptionsSchema } from "../packages/core/src/selectors/hinted-stride.ts";
import { trickleStrideOptionsSchema } from "../packages/core/src/selectors/trickle-stride.ts";
import { taskOptionsSchema } from "../packages/core/src/task.ts";
import {
  stopOptionsSchema,
  workerOptionsSchema,
} from "../packages/core/src/worker/worker-options.ts";
import {
  createTelemetry,
  telemetryOptionsSchema,
} from "../packages/opentelemetry/src/create-telemetry.ts";
import {
  createPrometheusEndpoint,
  prometheusEndpointOptionsSchema,
} from "../packages/opentelemetry/src/prometheus.ts";

/** One option: values that must be refused (naming it) and values that must be accepted. */
interface Row {
  bad: unknown[];
  good: unknown[];
  /** The field a ConfigError names, when it is not the table's own (defineTask's name). */
  field?: string;
}

interface Table {
  name: string;
  schema: z.ZodType;
  rows: Record<string, Row>;
  /** The ConfigError field of an option. */
  field(path: string): string;
  /** Call the real entry point with `value` at `path` of otherwise valid options. */
  apply(path: string, value: unknown): unknown;
}

/**
 * Every option path of an options schema: each key, and the keys of an object option
 * (also one that is a member of a union, like SQS's `priorityLanes: boolean | { high, low }`).
 */
function optionPaths(schema: z.ZodType, prefix = ""): string[] {
  const out: string[] = [];
  const shape = objectShape(schema);
  if (!shape) return out;
  for (const [key, child] of Object.entries(shape)) {
    const path = prefix ? `${prefix}.${key}` : key;
    out.push(path);
    for (const member of members(child)) out.push(...optionPaths(member, path));
  }
  return out;
}

type Def = { type: string; innerType?: z.ZodType; options?: z.ZodType[]; shape?: object };
const defOf = (schema: z.ZodType) => (schema as unknown as { _zod: { def: Def } })._zod.def;

/** The schema without optional/default wrappers. */
function unwrap(schema: z.ZodType): z.ZodType {
  let s = schema;
  for (;;) {
    const def = defOf(s);
    if (def.innerType && ["optional", "default", "nullable", "prefault"].includes(def.type)) {
      s = def.innerType;
    } else return s;
  }
}

function objectShape(schema: z.ZodType): Record<string, z.ZodType> | undefined {
  const def = defOf(unwrap(schema));
  return def.type === "object" ? (def.shape as Record<string, z.ZodType>) : undefined;
}

/** The object schemas an option can be (itself, or members of its union). */
function members(schema: z.ZodType): z.ZodType[] {
  const s = unwrap(schema);
  const def = defOf(s);
  if (def.type === "object") return [s];
  if (def.type === "union") return (def.options ?? []).filter((o) => objectShape(o));
  return [];
}

/** `base` with `value` set at the dotted `path` (intermediate objects copied or made). */
function withValue(base: Record<string, unknown>, path: string, value: unknown) {
  const [head, ...rest] = path.split(".") as [string, ...string[]];
  const out = { ...base };
  if (rest.length === 0) out[head] = value;
  else {
    const inner = out[head];
    out[head] = withValue(
      typeof inner === "object" && inner !== null ? (inner as Record<string, unknown>) : {},
      rest.join("."),
      value,
    );
  }
  return out;
}

// Values refused by every option of their kind.
const notNumbers = ["10", true, null, {}, []];
const notStrings = [5, true, null, {}, []];
const notBooleans = ["true", 1, null, {}];
const notFunctions = ["f", 1, null, {}];
const nonFinite = [Number.NaN, Number.POSITIVE_INFINITY, Number.NEGATIVE_INFINITY];

// at least 10 ms; it goes into a timer
const REPORT_MS = {
  bad: [9, 0, -1, MAX_TIMER_MS + 1, ...nonFinite, ...notNumbers],
  good: [10, 1_000],
};
const count1: Row = { bad: [0, -1, 1.5, ...nonFinite, ...notNumbers], good: [1, 1_000] };
const count0: Row = { bad: [-1, 1.5, ...nonFinite, ...notNumbers], good: [0, 7] };
const bool: Row = { bad: notBooleans, good: [true, false] };
const fn: Row = { bad: notFunctions, good: [() => 0.5] };
const random: Row = { bad: [0.5, "Math.random", null, {}], good: [Math.random] };
const nowSource: Row = { bad: [{}, "now", null, 5], good: [{ now: () => 0 }, systemClock] };
/** A whole number of ms for a timer. */
const timer = (min: number, good: number[]): Row => ({
  bad: [min - 1, min + 0.5, MAX_TIMER_MS + 1, ...nonFinite, ...notNumbers],
  good,
});

const laneTask = defineTask({ name: "t", lane: "a", schema: z.object({}), run: () => {} });
const base = () => ({ adapter: createMemoryAdapter(), lanes: [{ name: "a" }], tasks: [laneTask] });

/** A good value made when the test runs (it needs the closed port). */
class Later {
  readonly make: () => unknown;
  constructor(make: () => unknown) {
    this.make = make;
  }
}
const later = (make: () => unknown) => new Later(make);
const made = (v: unknown) => (v instanceof Later ? v.make() : v);

/** A port nothing listens on: the Redis adapters below never reach a server. */
let closedPort = 0;
const toClose: Array<() => Promise<unknown> | unknown> = [];
beforeAll(async () => {
  closedPort = await new Promise<number>((resolve) => {
    const srv = createServer();
    srv.listen(0, "127.0.0.1", () => {
      const a = srv.address();
      srv.close(() => resolve(typeof a === "object" && a ? a.port : 0));
    });
  });
});
afterAll(async () => {
  for (const close of toClose.splice(0)) await close();
});

/** ioredis options for a connection that is refused at once and never retried. */
const refused = () => ({
  host: "127.0.0.1",
  port: closedPort,
  lazyConnect: true,
  retryStrategy: () => null,
});

const tables: Table[] = [
  {
    name: "client: createTasklane",
    schema: clientOptionsSchema,
    field: (p) => p,
    apply: (p, v) => createTasklane(withValue(base(), p, v) as never),
    rows: {
      adapter: { bad: [null, {}, "memory", 5], good: [createMemoryAdapter()] },
      lanes: { bad: [[], "a", null, {}, 5], good: [[{ name: "a" }, { name: "b" }]] },
      tasks: { bad: ["t", null, {}, 5], good: [[], [laneTask]] },
      selector: { bad: ["fastest", "", 5, null, {}], good: ["lottery", createStrictPriority()] },
      namespace: { bad: ["", "v1.2", "x".repeat(33), ...notStrings], good: ["v1", "a_b-c"] },
      maxPayloadBytes: count1,
      maxResultBytes: count1,
      clock: {
        bad: [{}, { now: () => 0 }, "clock", null],
        good: [createManualClock(), systemClock],
      },
      random,
      closeAdapter: bool,
      instrumentation: {
        bad: [null, "otel", 5, { publish: 5 }, { job: {} }],
        good: [{}, { job: () => undefined, publish: () => undefined }],
      },
    },
  },
  {
    name: "lane (createTasklane's lanes[i])",
    schema: laneConfigSchema,
    field: (p) => `lanes[0].${p}`,
    apply: (p, v) =>
      createTasklane({
        adapter: createMemoryAdapter(),
        tasks: [],
        // a rate limit's field is tried inside an otherwise valid rate limit
        lanes: [
          withValue(
            p.startsWith("rateLimit.")
              ? { name: "a", rateLimit: { max: 1, durationMs: 1_000 } }
              : p.startsWith("groups.rateLimit.")
                ? { name: "a", groups: { rateLimit: { max: 1, durationMs: 1_000 } } }
                : { name: "a" },
            p,
            v,
          ) as never,
        ],
      }),
    rows: {
      name: { bad: ["", "a b", "a.b", "x".repeat(65), ...notStrings], good: ["a", "A_b-1"] },
      priority: { bad: [0, 1_001, 1.5, ...nonFinite, ...notNumbers], good: [1, 1_000] },
      batchSize: { bad: [0, 10_001, 1.5, ...nonFinite, ...notNumbers], good: [1, 10_000] },
      leaseMs: { bad: [99, 0, -1, 100.5, ...nonFinite, ...notNumbers], good: [100, 60_000] },
      longPollMs: count0,
      numIterations: count1,
      maxConcurrency: count1,
      groups: { bad: ["fair", 5, null, []], good: [{}, { concurrency: 2 }] },
      "groups.concurrency": count1,
      "groups.rateLimit": {
        bad: ["5/s", 5, null, []],
        good: [
          { max: 1, durationMs: 1 },
          { max: 100_000, durationMs: 86_400_000 },
        ],
      },
      "groups.rateLimit.max": {
        bad: [0, 100_001, 1.5, ...nonFinite, ...notNumbers],
        good: [1, 100_000],
      },
      "groups.rateLimit.durationMs": {
        bad: [0, 86_400_001, 1.5, ...nonFinite, ...notNumbers],
        good: [1, 86_400_000],
      },
      rateLimit: {
        bad: ["5/s", 5, null, []],
        good: [
          { max: 1, durationMs: 1 },
          { max: 100_000, durationMs: 86_400_000 },
        ],
      },
      "rateLimit.max": { bad: [0, 100_001, 1.5, ...nonFinite, ...notNumbers], good: [1, 100_000] },
      "rateLimit.durationMs": {
        bad: [0, 86_400_001, 1.5, ...nonFinite, ...notNumbers],
        good: [1, 86_400_000],
      },
      maxStalls: count0,
      historyLimit: { bad: [-1, 1_001, 1.5, ...nonFinite, ...notNumbers], good: [0, 1_000] },
      logLimit: { bad: [-1, 10_001, 1.5, ...nonFinite, ...notNumbers], good: [0, 10_000] },
      retention: { bad: ["1d", 5, null, []], good: [{}, { failed: { maxCount: 5 } }] },
      "retention.succeeded": { bad: ["x", 5, null], good: [{}, { maxAgeMs: 1 }] },
      "retention.succeeded.maxAgeMs": count1,
      "retention.succeeded.maxCount": count0,
      "retention.failed": { bad: ["x", 5, null], good: [{}, { maxCount: 0 }] },
      "retention.failed.maxAgeMs": count1,
      "retention.failed.maxCount": count0,
      "retention.canceled": { bad: ["x", 5, null], good: [{}, { maxAgeMs: 60_000 }] },
      "retention.canceled.maxAgeMs": count1,
      "retention.canceled.maxCount": count0,
      "retention.expired": { bad: ["x", 5, null], good: [{}, { maxCount: 10 }] },
      "retention.expired.maxAgeMs": count1,
      "retention.expired.maxCount": count0,
    },
  },
  {
    name: "task: defineTask",
    schema: taskOptionsSchema,
    field: (p) => `task("t").${p}`,
    apply: (p, v) =>
      defineTask(
        withValue({ name: "t", lane: "a", schema: z.object({}), run: () => {} }, p, v) as never,
      ),
    rows: {
      name: { bad: ["", ...notStrings], good: ["t", "send-email"], field: "task.name" },
      lane: { bad: ["", ...notStrings], good: ["a"] },
      schema: { bad: [{}, null, "object", 5], good: [z.object({}), z.string()] },
      result: { bad: [{}, null, "object", 5], good: [z.object({}), z.string()] },
      timeLimitMs: {
        bad: [0, -1, MAX_TIMER_MS + 1, ...nonFinite, ...notNumbers],
        good: [1, 0.5 + 1, 60_000],
      },
      retry: { bad: ["fast", 5, null, []], good: [{}, { maxAttempts: 1 }] },
      run: { bad: notFunctions, good: [() => {}, async () => {}] },
    },
  },
  {
    name: "retry (defineTask's retry)",
    schema: retryOptionsSchema,
    field: (p) => `task("t").retry.${p}`,
    apply: (p, v) =>
      defineTask({
        name: "t",
        lane: "a",
        schema: z.object({}),
        retry: withValue({}, p, v) as never,
        run: () => {},
      }),
    rows: {
      maxAttempts: count1,
      baseMs: { bad: [-1, ...nonFinite, ...notNumbers], good: [0, 1_000] },
      // below the default baseMs (1_000) is refused too
      maxMs: { bad: [-1, 999, ...nonFinite, ...notNumbers], good: [1_000, 3_600_000] },
      jitter: { bad: [-0.1, 1.1, ...nonFinite, ...notNumbers], good: [0, 0.5, 1] },
    },
  },
  {
    name: "worker: tl.worker",
    schema: workerOptionsSchema,
    field: (p) => `worker.${p}`,
    apply: (p, v) => createTasklane(base()).worker(withValue({}, p, v)),
    rows: {
      concurrency: count1,
      prefetch: count0,
      lanes: { bad: [[], "a", null, {}], good: [["a"]] },
      hintTtlMs: { bad: [-1, ...nonFinite, ...notNumbers], good: [0, 1_000] },
      // at least 10 ms, at most half the shortest lease (60 s by default)
      heartbeatMs: { bad: [9, 0, 30_001, ...nonFinite, ...notNumbers], good: [10, 30_000] },
      errorBackoffMs: { bad: [0, -1, 30_001, ...nonFinite, ...notNumbers], good: [1, 30_000] },
      reportMs: REPORT_MS,
      // 0 turns it off; otherwise at least 10 ms and a timer's length
      schedulePollMs: {
        bad: [-1, 5, 9, MAX_TIMER_MS + 1, ...nonFinite, ...notNumbers],
        good: [0, 10, 1_000, MAX_TIMER_MS],
      },
    },
  },
  {
    name: "stop: worker.stop and tl.close",
    schema: stopOptionsSchema,
    field: (p) => `stop.${p}`,
    apply: async (p, v) => {
      const tl = createTasklane(base());
      await tl.worker().stop(withValue({}, p, v));
      await tl.close(withValue({}, p, v));
    },
    rows: {
      graceMs: {
        bad: [-1, MAX_TIMER_MS + 1, ...nonFinite, ...notNumbers],
        good: [0, 1.5, 30_000],
      },
    },
  },
  {
    name: "createSelector",
    schema: createSelectorOptionsSchema,
    field: (p) => p,
    apply: (p, v) => createSelector("trickle-stride", withValue({}, p, v)),
    rows: { random, clock: nowSource },
  },
  {
    name: "lottery and reduced-lottery",
    schema: lotteryOptionsSchema,
    field: (p) => p,
    apply: (p, v) => createReducedLottery(withValue({}, p, v)),
    rows: { random },
  },
  {
    name: "hinted-stride",
    schema: hintedStrideOptionsSchema,
    field: (p) => p,
    apply: (p, v) => createHintedStride(withValue({}, p, v)),
    rows: {
      random,
      agingMs: { bad: [0, -1, ...nonFinite, ...notNumbers], good: [1, 200] },
      clock: nowSource,
    },
  },
  {
    name: "trickle-stride",
    schema: trickleStrideOptionsSchema,
    field: (p) => p,
    apply: (p, v) => createTrickleStride(withValue({}, p, v)),
    rows: {
      random,
      // at most maxTrickleMs (1_000 by default) is checked as maxTrickleMs's own rule
      trickleMs: { bad: [0, -1, ...nonFinite, ...notNumbers], good: [1, 200] },
      maxTrickleMs: { bad: [0, -1, 199, ...nonFinite, ...notNumbers], good: [200, 5_000] },
      trickleJobs: count1,
      trickleShare: { bad: [0, -0.1, 1.1, ...nonFinite, ...notNumbers], good: [0.05, 1] },
      clock: nowSource,
    },
  },
  {
    name: "memory adapter: createMemoryAdapter",
    schema: memoryAdapterOptionsSchema,
    field: (p) => p,
    apply: async (p, v) => createMemoryAdapter(withValue({}, p, v)).close(),
    rows: {
      clock: { bad: [{}, { now: () => 0 }, "clock", null], good: [createManualClock()] },
      maxJobs: count1,
    },
  },
  {
    name: "redis adapter: createRedisAdapter",
    schema: redisAdapterOptionsSchema,
    field: (p) => p,
    apply: async (p, v) => {
      // Every adapter here connects to a port nobody listens on, and fails to start in the
      // background; its options were accepted when it was created.
      const where = p.startsWith("cluster")
        ? { cluster: { nodes: [closedPort], options: { lazyConnect: true } } }
        : p === "client"
          ? {}
          : { connection: refused() };
      const adapter = createRedisAdapter(withValue(where, p, v));
      await adapter.close();
    },
    rows: {
      client: { bad: [{}, "redis://127.0.0.1", 5, null], good: [] }, // good: a test below
      connection: {
        bad: ["", 5, null, [], true],
        good: [later(() => `redis://127.0.0.1:${closedPort}?lazyConnect=true`), later(refused)],
      },
      cluster: {
        bad: ["127.0.0.1:7000", 5, null, []],
        good: [later(() => ({ nodes: [{ host: "127.0.0.1", port: closedPort }] }))],
      },
      "cluster.nodes": {
        bad: [[], "127.0.0.1:7000", null, 5],
        good: [later(() => [closedPort]), later(() => [`127.0.0.1:${closedPort}`])],
      },
      "cluster.options": {
        bad: ["lazy", 5, null, []],
        good: [{ lazyConnect: true }, { lazyConnect: true, scaleReads: "master" }],
      },
      prefix: { bad: ["", "a{b", "b}", ...notStrings], good: ["app", "tasklane-v2"] },
      allowEviction: bool,
      putEvents: bool,
      lifecycleEvents: bool,
      maxBlockMs: timer(1, [1, 5_000]),
      scripting: { bad: ["lua", "", 1, null], good: ["auto", "functions", "eval"] },
      commandTimeoutMs: timer(1, [1, 10_000]),
      durability: { bad: [5, "wait", null, []], good: [{}, { replicas: 2, timeoutMs: 500 }] },
      // 0 replicas waits for nothing unless aof (the master's own fsync) is asked for
      "durability.replicas": { bad: [0, -1, 1.5, ...nonFinite, ...notNumbers], good: [1, 3] },
      "durability.timeoutMs": timer(1, [1, 1_000]),
      "durability.aof": bool,
    },
  },
  {
    name: "sqs adapter: createSqsAdapter",
    schema: sqsAdapterOptionsSchema,
    field: (p) => p,
    apply: async (p, v) => {
      const where = p === "client" || p === "clientConfig" ? {} : { clientConfig: { region: "x" } };
      const adapter = createSqsAdapter(withValue(where, p, v));
      await adapter.close();
    },
    rows: {
      client: { bad: [{}, "sqs", 5, null], good: [] }, // good: a test below
      clientConfig: { bad: ["eu-west-1", 5, null, []], good: [{}, { region: "eu-west-1" }] },
      queuePrefix: { bad: ["a b", "x".repeat(41), "a.b", ...notStrings], good: ["", "v42-"] },
      createQueues: bool,
      queueAttributes: {
        bad: ["x", 5, null, []],
        good: [{}, { KmsMasterKeyId: "alias/aws/sqs" }],
      },
      priorityLanes: { bad: ["yes", 1, null, []], good: [true, false, { high: 5, low: -5 }] },
      // with the default low (-1): high must stay above it
      "priorityLanes.high": {
        bad: [-1, 1.5, 1_001, ...nonFinite, ...notNumbers],
        good: [1, 1_000],
      },
      // with the default high (1): low must stay below it
      "priorityLanes.low": {
        bad: [1, 1.5, -1_001, ...nonFinite, ...notNumbers],
        good: [-1, 0, -1_000],
      },
      fifo: { bad: ["yes", 1, null, {}], good: [true, false, (lane: string) => lane === "f"] },
      probeCacheMs: timer(0, [0, 1_000]),
      escapeAstral: bool,
      bufferHoldMs: timer(0, [0, 2_000]),
      entryRetries: { bad: [-1, 11, 1.5, ...nonFinite, ...notNumbers], good: [0, 10] },
      prefetch: { bad: [-1, 5, 15, 10.5, ...nonFinite, ...notNumbers], good: [0, 10, 100] },
      onError: fn,
    },
  },
  {
    name: "telemetry: createTelemetry",
    schema: telemetryOptionsSchema,
    field: (p) => p,
    apply: (p, v) => createTelemetry(withValue({}, p, v) as never),
    rows: {
      tracerProvider: { bad: [{}, "otel", 5, null], good: [trace.getTracerProvider()] },
      meterProvider: { bad: [{}, "otel", 5, null], good: [metrics.getMeterProvider()] },
      propagator: { bad: [{}, { inject: () => {} }, 5, null], good: [propagation] },
      traces: bool,
      metrics: bool,
      processSpanParent: { bad: ["child", "", ...notStrings], good: ["producer", "link"] },
      depthIntervalMs: count0,
      depthTimeoutMs: { bad: [0, 60_001, 1.5, ...nonFinite, ...notNumbers], good: [1, 60_000] },
    },
  },
  {
    name: "prometheus: createPrometheusEndpoint",
    schema: prometheusEndpointOptionsSchema,
    field: (p) => p,
    apply: async (p, v) => {
      await createPrometheusEndpoint(withValue({}, p, v) as never).reader.shutdown();
    },
    rows: {
      prefix: { bad: ["my-app", "1x", "", ...notStrings], good: ["myapp_", "a:b"] },
      withoutScopeInfo: bool,
      withoutTargetInfo: bool,
    },
  },
];

async function configErrorOf(run: () => unknown): Promise<ConfigError | unknown> {
  try {
    await run();
  } catch (error) {
    return error;
  }
  return undefined;
}

const show = (v: unknown) =>
  typeof v === "function" ? "a function" : typeof v === "string" ? JSON.stringify(v) : String(v);

describe.each(tables)("options of $name", (table) => {
  it("has a row for every option of the schema, and none for an option it lacks", () => {
    expect(Object.keys(table.rows).sort()).toEqual(optionPaths(table.schema).sort());
  });

  for (const [path, row] of Object.entries(table.rows)) {
    const field = row.field ?? table.field(path);
    it(`${path}: each bad value throws a ConfigError naming ${field} and the value`, async () => {
      expect(row.bad.length).toBeGreaterThan(0);
      for (const value of row.bad) {
        const error = await configErrorOf(() => table.apply(path, value));
        expect(error, `${path} = ${show(value)}`).toBeInstanceOf(ConfigError);
        expect((error as ConfigError).field, `${path} = ${show(value)}`).toBe(field);
        expect(Object.is((error as ConfigError).value, value), `${path} = ${show(value)}`).toBe(
          true,
        );
      }
    });
    it(`${path}: each good value is accepted`, async () => {
      for (const given of row.good) {
        const value = made(given);
        const error = await configErrorOf(() => table.apply(path, value));
        expect(error, `${path} = ${show(value)}`).toBeUndefined();
      }
    });
  }
});

describe("options that take a client", () => {
  it("the Redis adapter takes an ioredis client, and refuses it with connection or cluster", async () => {
    const client = new Redis(refused());
    client.on("error", () => {});
    toClose.push(() => client.disconnect());
    const adapter = createRedisAdapter({ client });
    await adapter.close();
    const both = await configErrorOf(() =>
      createRedisAdapter({ client, connection: "redis://127.0.0.1" }),
    );
    expect(both).toBeInstanceOf(ConfigError);
    expect((both as ConfigError).field).toBe("connection");
    const all = await configErrorOf(() =>
      createRedisAdapter({ connection: refused(), cluster: { nodes: [closedPort] } }),
    );
    expect((all as ConfigError).field).toBe("cluster");
  });

  it("the SQS adapter takes an SQSClient, and refuses clientConfig beside it", async () => {
    const client = new SQSClient({ region: "eu-west-1" });
    toClose.push(() => client.destroy());
    await createSqsAdapter({ client }).close();
    const both = await configErrorOf(() => createSqsAdapter({ client, clientConfig: {} }));
    expect(both).toBeInstanceOf(ConfigError);
    expect((both as ConfigError).field).toBe("clientConfig");
  });

  it("an unknown option is refused, naming it", async () => {
    const cases: Array<[() => unknown, string]> = [
      [() => createMemoryAdapter({ maxjobs: 5 } as never), "maxjobs"],
      [() => createRedisAdapter({ connection: refused(), timeoutMs: 5 } as never), "timeoutMs"],
      [() => createSqsAdapter({ region: "eu-west-1" } as never), "region"],
      [() => createTasklane(base()).worker({ concurency: 5 } as never), "concurency"],
    ];
    for (const [run, key] of cases) {
      const error = await configErrorOf(run);
      expect(error).toBeInstanceOf(ConfigError);
      expect((error as ConfigError).value).toBe(key);
      expect((error as ConfigError).message).toContain("unknown option");
    }
  });
});
