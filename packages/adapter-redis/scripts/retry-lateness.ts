/**
 * How late retries start (not a test and not a benchmark): a worker with 1 s long polls
 * runs jobs that fail their first attempt; each retry's lateness is the time its second
 * attempt's handler started minus the retry's runAt (the `retrying` event's). One job at
 * a time, so the worker is idle, long-polling an empty lane, when each retry falls due.
 * Runs on a redis-server of its own (or the memory adapter), real time.
 *
 *   npx node --conditions=source packages/adapter-redis/scripts/retry-lateness.ts [retries] [memory]
 *
 * LANES=2 adds a second, empty lane to the worker: it may be long-polling that one when a
 * retry falls due. Prints the lateness's p50, p99 and max in ms.
 */

import { createMemoryAdapter } from "@tasklane/adapter-memory";
import { createTasklane, defineTask } from "@tasklane/core";
import { z } from "zod";
import { createRedisAdapter } from "../src/index.ts";
import { type RedisServer, startRedis, waitFor } from "../test/helpers.ts";

const retries = Number(process.argv[2] ?? 50);
const onMemory = process.argv[3] === "memory";
const LONG_POLL_MS = 1_000;

const server: RedisServer | undefined = onMemory ? undefined : await startRedis();
try {
  const adapter =
    server === undefined
      ? createMemoryAdapter()
      : createRedisAdapter({ connection: server.url, prefix: "late" });
  const runAtOf = new Map<number, number>();
  const lateness: number[] = [];
  const flaky = defineTask({
    name: "flaky",
    lane: "retries",
    schema: z.object({ i: z.number() }),
    // Backoffs spread over 70..700 ms, so due times fall anywhere in a poll.
    retry: { maxAttempts: 2, baseMs: 700, jitter: 0.9 },
    run: async ({ i }, ctx) => {
      if (ctx.attempt === 1) throw new Error("first attempt fails");
      const runAt = runAtOf.get(i);
      if (runAt !== undefined) lateness.push(Date.now() - runAt);
    },
  });
  const tl = createTasklane({
    adapter,
    lanes: [
      { name: "retries", leaseMs: 30_000, longPollMs: LONG_POLL_MS },
      ...(process.env.LANES === "2"
        ? [{ name: "other", leaseMs: 30_000, longPollMs: LONG_POLL_MS }]
        : []),
    ],
    tasks: [flaky],
  });
  tl.events.on("retrying", (e) => {
    runAtOf.set(Number(e.jobId.split("-").pop()), e.runAt);
  });
  tl.events.on("error", (e) => console.error("error event", e));
  const worker = tl.worker({ concurrency: Number(process.env.CONCURRENCY ?? 1) });
  await worker.start();
  for (let i = 0; i < retries; i++) {
    await tl.publish(flaky, { i }, { jobId: `job-${i}` });
    await waitFor(() => lateness.length > i, `retry ${i}`, 10_000);
  }
  await worker.stop({ graceMs: 1_000 });
  await tl.close({ graceMs: 0 });
  lateness.sort((a, b) => a - b);
  const q = (p: number) => lateness[Math.ceil(p * lateness.length) - 1] ?? Number.NaN;
  console.log(
    `${onMemory ? "memory" : "redis"}: retry start - runAt over ${lateness.length} retries, ${LONG_POLL_MS} ms long polls: p50 ${q(0.5)} ms, p99 ${q(0.99)} ms, max ${q(1)} ms`,
  );
} finally {
  await server?.stop();
}
