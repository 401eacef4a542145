/**
 * The memory adapter at depth, in one process (forked by depth.ts with --expose-gc so the
 * heap can be measured after a collection): publish `jobs` into a lane bounded by
 * `maxJobs`, check one more is refused, then drain with one in-process worker while
 * sampling the heap. Reports over IPC.
 */
import { createMemoryAdapter } from "@tasklane/adapter-memory";
import { createTasklane, LaneFullError } from "@tasklane/core";
import { defineChaosTask } from "../worker/chaos-task.ts";

export interface MemoryDepthReport {
  bytesPerJob: number;
  publishRate: number;
  drainRate: number;
  heapMaxMiB: number;
  refusedPastMax: boolean;
  done: number;
}

const jobs = Number(process.argv[2]);
const concurrency = Number(process.argv[3]);
const gc = (globalThis as { gc?: () => void }).gc ?? (() => {});
const heap = () => {
  gc();
  return process.memoryUsage().heapUsed;
};

let done = 0;
const task = defineChaosTask("depth", { maxAttempts: 1 }, async () => {
  done++;
});
const tl = createTasklane({
  adapter: createMemoryAdapter({ maxJobs: jobs }),
  lanes: [{ name: "depth", leaseMs: 60_000, batchSize: 100 }],
  tasks: [task],
});
const before = heap();
const started = performance.now();
for (let i = 0; i < jobs; i += 10_000) {
  const n = Math.min(10_000, jobs - i);
  await tl.publishMany(
    task,
    Array.from({ length: n }, () => ({ payload: { k: "ok" as const, ms: 0 } })),
  );
}
const publishMs = performance.now() - started;
const after = heap();
let refusedPastMax = false;
try {
  await tl.publish(task, { k: "ok", ms: 0 });
} catch (error) {
  refusedPastMax = error instanceof LaneFullError;
}

let heapMax = 0;
const sampler = setInterval(() => {
  heapMax = Math.max(heapMax, process.memoryUsage().heapUsed);
}, 250);
const drained = new Promise<void>((resolve) => tl.events.on("drained", () => resolve()));
const drainStarted = performance.now();
const worker = tl.worker({ concurrency });
await worker.start();
await drained;
const drainMs = performance.now() - drainStarted;
clearInterval(sampler);
await tl.close({ graceMs: 0 });

const report: MemoryDepthReport = {
  bytesPerJob: (after - before) / jobs,
  publishRate: jobs / (publishMs / 1_000),
  drainRate: jobs / (drainMs / 1_000),
  heapMaxMiB: heapMax / 2 ** 20,
  refusedPastMax,
  done,
};
process.send?.(report, () => process.exit(0));
