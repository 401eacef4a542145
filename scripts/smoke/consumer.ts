// Smoke consumer (types only): what an application writes against the installed packages,
// type-checked with `tsc --noEmit` under the repository's strict settings and each
// moduleResolution a consumer may use (NodeNext, Bundler, Node10). The @ts-expect-error
// lines fail the check when the packages' types degrade to `any` (an import that did not
// resolve), which skipLibCheck would otherwise hide.
import { createMemoryAdapter } from "@tasklane/adapter-memory";
import { createRedisAdapter, type RedisAdapterOptions } from "@tasklane/adapter-redis";
import { createSqsAdapter } from "@tasklane/adapter-sqs";
import {
  type Adapter,
  createManualClock,
  createTasklane,
  defineTask,
  type Tasklane,
  ValidationError,
} from "@tasklane/core";
import { fullCapabilities, type LaneStore } from "@tasklane/core/adapter";
import { fromKaleConfig } from "@tasklane/core/kale";
import { createManagementHandler } from "@tasklane/http";
import { createNodeListener } from "@tasklane/http/node";
import { Redis } from "ioredis";
import { z } from "zod";

const resize = defineTask({
  name: "resize",
  lane: "default",
  schema: z.object({ url: z.url(), width: z.number().int().positive() }),
  async run({ url, width }, ctx) {
    const response = await fetch(url, { signal: ctx.signal });
    return { bytes: (await response.arrayBuffer()).byteLength, width };
  },
});

// Options an application reads from its environment, unset ones included: they must
// compile under exactOptionalPropertyTypes (the README's Backends lines).
const fromEnv: RedisAdapterOptions = {
  connection: process.env.REDIS_URL,
  prefix: process.env.TASKLANE_PREFIX,
};
const adapters: Adapter[] = [
  createMemoryAdapter({ clock: createManualClock() }),
  createRedisAdapter(fromEnv),
  createRedisAdapter({ connection: process.env.REDIS_URL, prefix: "myapp" }),
  createRedisAdapter({ client: new Redis({ lazyConnect: true }) }),
  createSqsAdapter({
    clientConfig: { region: "eu-west-1" },
    queuePrefix: process.env.SQS_QUEUE_PREFIX,
  }),
];

const tl: Tasklane = createTasklane({
  adapter: adapters[0] ?? createMemoryAdapter(),
  lanes: [
    { name: "high", priority: 100 },
    { name: "default", priority: 40 },
  ],
  tasks: [resize],
});
const { id } = await tl.publish(resize, { url: "https://example.com/a.png", width: 640 });
const jobId: string = id;

// @ts-expect-error: a payload that does not match the schema does not compile
await tl.publish(resize, { url: "https://example.com/a.png" });
// @ts-expect-error: nor does an option of the wrong type
createRedisAdapter({ prefix: 42 });

try {
  await tl.publish(resize, JSON.parse("{}"));
} catch (error) {
  if (!(error instanceof ValidationError)) throw error;
}
await tl.close();

export { jobId };

// The subpath entry points resolve too (Node10 through typesVersions).
const kaleLanes = fromKaleConfig({ default: { priority: 40, batch_size: 10 } });
const limits = fullCapabilities({
  maxBatch: 10,
  maxDelayMs: 1_000,
  maxLeaseMs: 60_000,
  maxWaitMs: 20_000,
  timeResolutionMs: 1,
});
export const subpaths: [typeof kaleLanes, boolean, LaneStore | undefined] = [
  kaleLanes,
  limits.exactCounts,
  undefined,
];
// @ts-expect-error a lane config has no batch_size: Kale's keys only go through fromKaleConfig
export const notKale: (typeof kaleLanes)[number] = { name: "x", batch_size: 1 };

// The management API and its node:http mount (a subpath: Node10 through typesVersions).
export const listener = (tl: Tasklane) =>
  createNodeListener(createManagementHandler({ tasklane: tl, basePath: "/tasklane" }));
