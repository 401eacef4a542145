/**
 * Choose the backend from the environment, so the same application code runs on SQS in
 * production, Redis in staging and memory in tests:
 *
 *   TASKLANE_ADAPTER=memory (default) | redis (REDIS_URL, REDIS_PREFIX)
 *                   | sqs (AWS_REGION, SQS_ENDPOINT, SQS_QUEUE_PREFIX)
 *
 * TASKLANE_BACKEND, the name this example used first, is still accepted. The `tasklane`
 * CLI (@tasklane/cli) reads the same variables, so it reaches the same lanes.
 *
 * Other examples import `adapterFromEnv()` and `backendFromEnv()` from here. Run directly,
 * it checks the environment: it prints the backend chosen and what that adapter can do,
 * then makes one round trip (publish a job on the lane `env-check`, run it, close):
 *
 *   npm run example:env
 *   TASKLANE_ADAPTER=redis REDIS_URL=redis://127.0.0.1:6379 npm run example:env
 *
 * The round trip writes to the backend: on Redis the lane's keys (the finished job stays
 * for the default retention, a day), on SQS the queue `env-check` (created if missing).
 */
import {
  type Adapter,
  type Capabilities,
  ConfigError,
  createTasklane,
  defineTask,
} from "@tasklane/core";
import { z } from "zod";

export const BACKENDS = ["memory", "redis", "sqs"] as const;
export type Backend = (typeof BACKENDS)[number];

/** The backend TASKLANE_ADAPTER (or the older TASKLANE_BACKEND) names; memory when unset. */
export function backendFromEnv(env = process.env): Backend {
  const field = env.TASKLANE_ADAPTER ? "TASKLANE_ADAPTER" : "TASKLANE_BACKEND";
  const name = env[field] || "memory";
  if (!(BACKENDS as readonly string[]).includes(name)) {
    throw new ConfigError(field, name, "must be memory, redis or sqs");
  }
  return name as Backend;
}

export async function adapterFromEnv(env = process.env): Promise<Adapter> {
  switch (backendFromEnv(env)) {
    case "memory": {
      const { createMemoryAdapter } = await import("@tasklane/adapter-memory");
      return createMemoryAdapter();
    }
    case "redis": {
      const { createRedisAdapter } = await import("@tasklane/adapter-redis");
      return createRedisAdapter({
        connection: env.REDIS_URL ?? "redis://127.0.0.1:6379",
        prefix: env.REDIS_PREFIX || undefined,
        // every instance announces its jobs' lifecycle, so tl.subscribe() sees them all
        lifecycleEvents: true,
      });
    }
    case "sqs": {
      const { createSqsAdapter } = await import("@tasklane/adapter-sqs");
      return createSqsAdapter({
        clientConfig: {
          region: env.AWS_REGION ?? "us-east-1",
          ...(env.SQS_ENDPOINT ? { endpoint: env.SQS_ENDPOINT } : {}),
        },
        queuePrefix: env.SQS_QUEUE_PREFIX || undefined,
      });
    }
  }
}

/** Where each backend is, for the printout (never the credentials in a URL). */
function whereFromEnv(backend: Backend, env = process.env): string {
  if (backend === "memory") return "in this process: jobs live as long as it does";
  if (backend === "redis") {
    const url = new URL(env.REDIS_URL ?? "redis://127.0.0.1:6379");
    return `${url.protocol}//${url.host}`;
  }
  return env.SQS_ENDPOINT ?? `AWS SQS, region ${env.AWS_REGION ?? "us-east-1"}`;
}

/** A duration for people: 250 ms, 15 min, 12 h, 100 years. */
function duration(ms: number): string {
  const units: Array<[string, number]> = [
    ["years", 365 * 86_400_000],
    ["days", 86_400_000],
    ["h", 3_600_000],
    ["min", 60_000],
    ["s", 1_000],
  ];
  for (const [unit, size] of units) {
    if (ms >= size) return `${Number((ms / size).toFixed(1))} ${unit}`;
  }
  return `${ms} ms`;
}

function describeCapabilities(caps: Capabilities): string[] {
  const can: string[] = [];
  const cannot: string[] = [];
  for (const [name, value] of Object.entries(caps)) {
    if (value === true) can.push(name);
    else if (value === false) cannot.push(name);
  }
  return [
    `limits:  ${caps.maxBatch} jobs per call; delays up to ${duration(caps.maxDelayMs)}, leases ${duration(caps.maxLeaseMs)}, long polls ${duration(caps.maxWaitMs)}; time step ${duration(caps.timeResolutionMs)}`,
    `can:     ${can.join(", ")}`,
    `cannot:  ${cannot.length > 0 ? cannot.join(", ") : "(nothing)"}`,
  ];
}

/** Print the backend the environment selects, then publish one job and run it. */
async function checkEnvironment(timeoutMs = 30_000): Promise<void> {
  const backend = backendFromEnv();
  const adapter = await adapterFromEnv();
  console.log(`backend: ${backend} (${whereFromEnv(backend)})`);
  for (const line of describeCapabilities(adapter.capabilities)) console.log(line);

  const ping = defineTask({ name: "env-check", lane: "env-check", schema: z.object({}), run() {} });
  const tl = createTasklane({ adapter, lanes: [{ name: "env-check" }], tasks: [ping] });
  const worker = tl.worker({ concurrency: 1 });
  try {
    // On memory the job can succeed before publish() returns its id: listen first.
    const succeededAt = new Map<string, number>();
    let check = () => {};
    tl.events.on("succeeded", (e) => {
      succeededAt.set(e.jobId, Date.now());
      check();
    });
    await worker.start();
    const sentAt = Date.now();
    const { id } = await tl.publish(ping, {});
    const doneAt = await new Promise<number>((resolve, reject) => {
      const timer = setTimeout(
        () => reject(new Error(`job ${id} did not run within ${timeoutMs} ms`)),
        timeoutMs,
      );
      check = () => {
        const at = succeededAt.get(id);
        if (at === undefined) return;
        clearTimeout(timer);
        resolve(at);
      };
      check();
    });
    console.log(`round trip: job ${id} published, run and acknowledged in ${doneAt - sentAt} ms`);
  } finally {
    await worker.stop();
    await tl.close();
  }
}

if (import.meta.main) await checkEnvironment();
