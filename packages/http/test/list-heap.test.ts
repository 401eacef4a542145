/**
 * Listing streams in constant memory: jobs published to Redis with publishMany, listed
 * through the API by a server in a process of its own, whose heap (after a full GC) is
 * sampled before, during and after the stream. TASKLANE_HEAP_JOBS sets how many jobs
 * (default 1,000,000: about 20 s here, 150 MB in redis-server).
 */
import { type ChildProcess, fork } from "node:child_process";
import { fileURLToPath } from "node:url";
import { createRedisAdapter } from "@tasklane/adapter-redis";
import { createTasklane, defineTask } from "@tasklane/core";
import { afterAll, beforeAll, expect, it } from "vitest";
import { z } from "zod";
import { type RedisServer, startRedis, uniquePrefix } from "../../adapter-redis/test/helpers.ts";

const JOBS = Number(process.env.TASKLANE_HEAP_JOBS ?? 1_000_000);
const MB = 1024 * 1024;

let redis: RedisServer;
let child: ChildProcess;
let port: number;
const prefix = uniquePrefix();

interface Heap {
  heapUsed: number;
  heapTotal: number;
  rss: number;
  external: number;
  arrayBuffers: number;
}

/** The server process's heap after a full GC. */
function heap(): Promise<Heap> {
  return new Promise((resolve) => {
    const onMessage = (message: { type: string } & Heap) => {
      if (message.type !== "heap") return;
      child.off("message", onMessage);
      resolve(message);
    };
    child.on("message", onMessage);
    child.send("heap");
  });
}

beforeAll(async () => {
  redis = await startRedis();
  const tiny = defineTask({
    name: "tiny",
    lane: "bulk",
    schema: z.object({ n: z.number() }),
    run: () => {},
  });
  const tl = createTasklane({
    adapter: createRedisAdapter({ connection: redis.url, prefix }),
    lanes: [{ name: "bulk" }],
    tasks: [tiny],
  });
  const chunk = 50_000;
  for (let from = 0; from < JOBS; from += chunk) {
    const n = Math.min(chunk, JOBS - from);
    await tl.publishMany(
      tiny,
      Array.from({ length: n }, (_, i) => ({ payload: { n: from + i } })),
    );
  }
  expect((await tl.lane("bulk").counts()).waiting).toBe(JOBS);
  await tl.close();

  const script = fileURLToPath(new URL("./fixtures/heap-server.ts", import.meta.url));
  child = fork(script, [redis.url, prefix], {
    execArgv: ["--conditions=source", "--expose-gc"],
    stdio: ["ignore", "inherit", "inherit", "ipc"],
  });
  port = await new Promise<number>((resolve, reject) => {
    child.once("error", reject);
    child.once("exit", (code) => reject(new Error(`heap server exited with ${code}`)));
    child.on("message", (m: { type: string; port: number }) => {
      if (m.type === "listening") resolve(m.port);
    });
  });
}, 300_000);

afterAll(async () => {
  if (child && child.exitCode === null) {
    const exited = new Promise((resolve) => child.once("exit", resolve));
    child.send("stop");
    await exited;
  }
  await redis?.stop();
});

it(`lists ${JOBS.toLocaleString("en")} jobs as NDJSON with the server's heap and buffers flat`, async () => {
  // Warm up the route once, so the first stream's compiled code is not counted as growth.
  await (await fetch(`http://127.0.0.1:${port}/lanes/bulk/jobs?state=waiting&limit=1000`)).text();
  const before = await heap();
  const seen = new Uint8Array(JOBS);
  const samples: Heap[] = [];
  let lines = 0;
  let bytes = 0;
  let duplicates = 0;
  let rest = "";
  const started = Date.now();
  const response = await fetch(`http://127.0.0.1:${port}/lanes/bulk/jobs?state=waiting`);
  expect(response.status).toBe(200);
  const reader = (response.body as ReadableStream<Uint8Array>)
    .pipeThrough(new TextDecoderStream())
    .getReader();
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    const parts = (rest + value).split("\n");
    rest = parts.pop() ?? "";
    for (const line of parts) {
      bytes += line.length + 1;
      const n = (JSON.parse(line) as { payload: { n: number } }).payload.n;
      if (seen[n] === 1) duplicates++;
      seen[n] = 1;
      lines++;
      if (lines % Math.ceil(JOBS / 10) === 0) samples.push(await heap());
    }
  }
  const seconds = (Date.now() - started) / 1000;
  const after = await heap();
  const peak = Math.max(...samples.map((s) => s.heapUsed));
  // Heap and external memory (buffers: encoded chunks waiting for the socket) together.
  const held = (s: Heap) => s.heapUsed + s.external;
  const peakHeld = Math.max(...samples.map(held));
  const report = {
    jobs: lines,
    ndjsonMB: +(bytes / MB).toFixed(1),
    seconds: Math.round(seconds * 10) / 10,
    jobsPerSecond: Math.round(lines / seconds),
    heapBeforeMB: +(before.heapUsed / MB).toFixed(1),
    heapPeakDuringMB: +(peak / MB).toFixed(1),
    heapAfterMB: +(after.heapUsed / MB).toFixed(1),
    heapTotalPeakDuringMB: +(Math.max(...samples.map((s) => s.heapTotal)) / MB).toFixed(1),
    externalBeforeMB: +(before.external / MB).toFixed(1),
    externalPeakDuringMB: +(Math.max(...samples.map((s) => s.external)) / MB).toFixed(1),
    rssBeforeMB: +(before.rss / MB).toFixed(1),
    rssPeakDuringMB: +(Math.max(...samples.map((s) => s.rss)) / MB).toFixed(1),
    rssAfterMB: +(after.rss / MB).toFixed(1),
  };
  console.log("list-heap:", JSON.stringify(report));
  expect(rest).toBe("");
  expect(lines).toBe(JOBS);
  expect(duplicates).toBe(0);
  expect(seen.every((v) => v === 1)).toBe(true);
  expect(samples).toHaveLength(10);
  // Holding the jobs would take hundreds of MB (the NDJSON text alone is ~230 bytes a job,
  // more as objects); a stream holds one page and one chunk at a time. heapTotal and RSS
  // rise to a plateau early in the stream (V8 keeps the pages it collected garbage from)
  // and stay there: the test logs them.
  expect(peak - before.heapUsed).toBeLessThan(16 * MB);
  expect(peakHeld - held(before)).toBeLessThan(32 * MB);
  expect(after.heapUsed - before.heapUsed).toBeLessThan(4 * MB);
}, 600_000);
