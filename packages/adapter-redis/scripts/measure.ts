/**
 * Cheap numbers for the Redis adapter, on a redis-server of its own (not a benchmark and
 * not a test): bytes of Redis memory per waiting job, Redis commands per job (publish +
 * process, counting the commands run inside scripts, from INFO commandstats) and client
 * round trips (socket writes) per job, with the bench's lane settings.
 *
 *   npx node --conditions=source packages/adapter-redis/scripts/measure.ts [jobs] [concurrency]
 */
import { randomUUID } from "node:crypto";
import { Socket } from "node:net";
import { createTasklane, defineTask } from "@tasklane/core";
import { Redis } from "ioredis";
import { z } from "zod";
import { createRedisAdapter } from "../src/index.ts";
import { startRedis, waitFor } from "../test/helpers.ts";

const total = Number(process.argv[2] ?? 20_000);
const concurrency = Number(process.argv[3] ?? 100);
const batchSize = Number(process.env.BATCH ?? 100);

async function commandCount(stats: Redis): Promise<number> {
  const text = await stats.info("commandstats");
  let sum = 0;
  for (const m of text.matchAll(/^cmdstat_([^:]+):calls=(\d+)/gm)) {
    if (m[1] !== "info") sum += Number(m[2]);
  }
  return sum;
}

async function commandCounts(stats: Redis): Promise<Record<string, number>> {
  const text = await stats.info("commandstats");
  const out: Record<string, number> = {};
  for (const m of text.matchAll(/^cmdstat_([^:]+):calls=(\d+)/gm))
    out[m[1] as string] = Number(m[2]);
  return out;
}

async function usedMemory(stats: Redis): Promise<number> {
  const text = await stats.info("memory");
  return Number(/^used_memory:(\d+)/m.exec(text)?.[1]);
}

const server = await startRedis();
const stats = new Redis(server.port, "127.0.0.1");
let writes = 0;
const originalWrite = Socket.prototype.write;
Socket.prototype.write = function (this: Socket, ...args: unknown[]) {
  if (this.remotePort === server.port && this !== (stats as unknown as { stream: Socket }).stream)
    writes++;
  return (originalWrite as (...a: unknown[]) => boolean).apply(this, args);
} as typeof Socket.prototype.write;

try {
  // 1. Memory per waiting job: raw puts of the bench's job shape, 1,000 per call.
  {
    const adapter = createRedisAdapter({ connection: server.url, prefix: "mem" });
    const q = await adapter.lane("bench", { maxStalls: 1, historyLimit: 20 });
    await q.put([
      { id: randomUUID(), task: "noop", payload: '{"i":0}', priority: 0, publishedAt: Date.now() },
    ]);
    const before = await usedMemory(stats);
    for (let i = 0; i < total; i += 1000) {
      const jobs = [];
      for (let k = i; k < Math.min(total, i + 1000); k++) {
        jobs.push({
          id: randomUUID(),
          task: "noop",
          payload: JSON.stringify({ i: k }),
          priority: 0,
          publishedAt: Date.now(),
        });
      }
      await q.put(jobs);
    }
    const after = await usedMemory(stats);
    console.log(
      `memory per waiting job: ${((after - before) / total).toFixed(1)} bytes (${total} jobs, payload {"i":n}, UUID ids)`,
    );
    await adapter.close();
    await stats.flushall();
  }

  // 2. Commands and round trips per job: publishMany (1,000 per call) + a worker.
  const adapter = createRedisAdapter({ connection: server.url, prefix: "cmd" });
  let done = 0;
  const noop = defineTask({
    name: "noop",
    lane: "bench",
    schema: z.object({ i: z.number() }),
    run: async () => {},
  });
  const tl = createTasklane({
    adapter,
    lanes: [
      {
        name: "bench",
        priority: 1,
        batchSize,
        leaseMs: 30_000,
        longPollMs: 1_000,
        numIterations: 10,
      },
    ],
    tasks: [noop],
  });
  tl.events.on("succeeded", () => {
    done++;
  });
  tl.events.on("error", (e) => console.error("error event", e));
  await tl.lane("bench").counts();
  const c0 = await commandCount(stats);
  const w0 = writes;
  const items = Array.from({ length: total }, (_, i) => ({ payload: { i } }));
  for (let i = 0; i < total; i += 1000) await tl.publishMany(noop, items.slice(i, i + 1000));
  const c1 = await commandCount(stats);
  const w1 = writes;
  const worker = tl.worker({ concurrency });
  const started = performance.now();
  await worker.start();
  await waitFor(() => done >= total, "all jobs done", 120_000);
  const seconds = (performance.now() - started) / 1000;
  const c2 = await commandCount(stats);
  const w2 = writes;
  if (process.env.SHOW_STATS) console.log(await stats.info("commandstats"));
  await worker.stop({ graceMs: 1_000 });

  // 3. Latency into an idle worker: one job every 2 ms (500/s), publish -> handler start.
  const latencies: number[] = [];
  const sentAt = new Map<number, number>();
  const timed = defineTask({
    name: "timed",
    lane: "latency",
    schema: z.object({ i: z.number() }),
    run: async ({ i }) => {
      const t = sentAt.get(i);
      if (t !== undefined) latencies.push(performance.now() - t);
    },
  });
  const tl2 = createTasklane({
    adapter,
    closeAdapter: false,
    lanes: [{ name: "latency", batchSize: 10, leaseMs: 30_000, longPollMs: 1_000 }],
    tasks: [timed],
  });
  const w2l = tl2.worker({ concurrency: 10 });
  await w2l.start();
  const publisherAdapter = createRedisAdapter({ connection: server.url, prefix: "cmd" });
  const publisher = createTasklane({
    adapter: publisherAdapter,
    lanes: [{ name: "latency" }],
    tasks: [timed],
  });
  await new Promise((r) => setTimeout(r, 200));
  const c3 = await commandCount(stats);
  const byCommand3 = await commandCounts(stats);
  const w3 = writes;
  for (let i = 0; i < 500; i++) {
    sentAt.set(i, performance.now());
    await publisher.publish(timed, { i });
    await new Promise((r) => setTimeout(r, 2));
  }
  await waitFor(() => latencies.length >= 500, "latency jobs", 30_000);
  await new Promise((r) => setTimeout(r, 100)); // let the last acks land
  const c4 = await commandCount(stats);
  if (process.env.SHOW_STATS) {
    const byCommand4 = await commandCounts(stats);
    const diff: Record<string, string> = {};
    for (const [k, v] of Object.entries(byCommand4)) {
      const d = v - (byCommand3[k] ?? 0);
      if (d > 0) diff[k] = (d / 500).toFixed(2);
    }
    console.log("per single-published job:", diff);
  }
  const w4 = writes;
  latencies.sort((a, b) => a - b);
  const q = (p: number) =>
    (latencies[Math.floor(p * (latencies.length - 1))] ?? Number.NaN).toFixed(2);
  console.log(
    `latency publish -> start at ~500/s (separate publisher): p50 ${q(0.5)} ms, p99 ${q(0.99)} ms`,
  );
  console.log(
    `single publishes into an idle worker: ${((c4 - c3) / 500).toFixed(2)} commands/job, ${((w4 - w3) / 500).toFixed(2)} round trips/job (publisher + worker)`,
  );
  await w2l.stop({ graceMs: 1_000 });
  await publisher.close({ graceMs: 0 });
  await tl2.close({ graceMs: 0 });
  await publisherAdapter.close();
  await tl.close({ graceMs: 1_000 });
  const perJob = (n: number) => (n / total).toFixed(3);
  console.log(`publish: ${perJob(c1 - c0)} commands/job, ${perJob(w1 - w0)} round trips/job`);
  console.log(
    `process (c=${concurrency}): ${perJob(c2 - c1)} commands/job, ${perJob(w2 - w1)} round trips/job, ${(total / seconds).toFixed(0)} jobs/s`,
  );
  console.log(`total: ${perJob(c2 - c0)} commands/job, ${perJob(w2 - w0)} round trips/job`);
} finally {
  Socket.prototype.write = originalWrite;
  stats.disconnect();
  await server.stop();
}
