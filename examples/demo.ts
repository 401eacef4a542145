/**
 * `npm run demo`: tasklane on the in-memory adapter.
 *
 * Three lanes configured like Kale's example (high 100 / default 40 / low 5 tickets), a
 * mixed workload of 3,000 jobs arriving in waves (some fail once and retry, some keep
 * failing and end in the dead letter set, a few are unrecoverable), one embedded worker
 * with concurrency 50 and the default ReducedLottery selector. A live progress line runs
 * while it works; at the end, a table per lane.
 */
import { setTimeout } from "node:timers/promises";
import { createMemoryAdapter } from "@tasklane/adapter-memory";
import {
  createSeededRandom,
  createTasklane,
  defineTask,
  percentile,
  UnrecoverableError,
} from "@tasklane/core";
import { fromKaleConfig } from "@tasklane/core/kale";
import { z } from "zod";

const random = createSeededRandom(2026);
const JOBS = 3_000;

// Kale's example queue YAML, as parsed: tasklane takes it through fromKaleConfig().
const lanes = fromKaleConfig({
  high_priority: {
    priority: 100,
    batch_size: 10,
    visibility_timeout_sec: 60,
    long_poll_time_sec: 1,
    num_iterations: 10,
  },
  default: {
    priority: 40,
    batch_size: 10,
    visibility_timeout_sec: 60,
    long_poll_time_sec: 1,
    num_iterations: 5,
  },
  low_priority: {
    priority: 5,
    batch_size: 10,
    visibility_timeout_sec: 60,
    long_poll_time_sec: 5,
    num_iterations: 5,
  },
});

const payload = z.object({
  workMs: z.number().int().min(0).max(1_000),
  /** How this job behaves: succeed, fail its first attempt, always fail, or be unrecoverable. */
  kind: z.enum(["ok", "flaky", "broken", "fatal"]),
});

const run = async (
  { workMs, kind }: z.infer<typeof payload>,
  ctx: { attempt: number; signal: AbortSignal },
) => {
  await setTimeout(workMs, undefined, { signal: ctx.signal });
  if (kind === "flaky" && ctx.attempt === 1) throw new Error("temporary glitch");
  if (kind === "broken") throw new Error("this job always fails");
  if (kind === "fatal") throw new UnrecoverableError("bad input, retrying will not help");
};

const retry = { maxAttempts: 3, baseMs: 100, maxMs: 1_000 };
const tasks = {
  high: defineTask({
    name: "notify",
    lane: "high_priority",
    schema: payload,
    timeLimitMs: 5_000,
    retry,
    run,
  }),
  default: defineTask({
    name: "render",
    lane: "default",
    schema: payload,
    timeLimitMs: 5_000,
    retry,
    run,
  }),
  low: defineTask({
    name: "report",
    lane: "low_priority",
    schema: payload,
    timeLimitMs: 5_000,
    retry,
    run,
  }),
};

const tl = createTasklane({
  adapter: createMemoryAdapter(),
  lanes,
  tasks: Object.values(tasks),
  random,
});

const counts = { published: 0, succeeded: 0, retried: 0, dead: 0 };
const perLane: Record<string, { succeeded: number; retried: number; dead: number }> = {};
const lane = (name: string) => {
  perLane[name] ??= { succeeded: 0, retried: 0, dead: 0 };
  return perLane[name];
};
tl.events.on("succeeded", (e) => {
  counts.succeeded++;
  lane(e.lane).succeeded++;
});
tl.events.on("retrying", (e) => {
  counts.retried++;
  lane(e.lane).retried++;
});
tl.events.on("failed", (e) => {
  counts.dead++;
  lane(e.lane).dead++;
});

function makeJob() {
  const r = random();
  const kind = r < 0.85 ? "ok" : r < 0.95 ? "flaky" : r < 0.99 ? "broken" : "fatal";
  return { workMs: Math.round(2 + random() * 40), kind } as const;
}

const worker = tl.worker({ concurrency: 50 });
await worker.start();
const startedAt = performance.now();

const interactive = process.stdout.isTTY;
const progress = setInterval(
  () => {
    const line = `published ${counts.published}/${JOBS}  succeeded ${counts.succeeded}  retried ${counts.retried}  dead ${counts.dead}  running ${worker.held}`;
    if (interactive) process.stdout.write(`\r${line}   `);
    else console.log(line);
  },
  interactive ? 100 : 1_000,
);

// Arrivals in waves: mostly default and low work, with bursts of high-priority jobs.
const shares = [
  [tasks.high, 0.2],
  [tasks.default, 0.45],
  [tasks.low, 0.35],
] as const;
for (let wave = 0; wave < 10; wave++) {
  for (const [task, share] of shares) {
    const n = Math.round((JOBS / 10) * share);
    await tl.publishMany(
      task,
      Array.from({ length: n }, () => ({ payload: makeJob() })),
    );
    counts.published += n;
  }
  await setTimeout(250);
}

// Everything published: wait until every job has either succeeded or gone dead.
const deadline = performance.now() + 25_000;
while (counts.succeeded + counts.dead < counts.published && performance.now() < deadline) {
  await setTimeout(50);
}
clearInterval(progress);
if (interactive) process.stdout.write("\n");
const elapsedS = (performance.now() - startedAt) / 1000;
const metrics = worker.metrics();
await worker.stop();

const fmt = (ms: number) =>
  Number.isNaN(ms) ? "-" : ms < 1_000 ? `${ms.toFixed(1)} ms` : `${(ms / 1000).toFixed(2)} s`;
const rows = [];
for (const config of lanes) {
  const stats = await tl.lane(config.name).stats();
  const c = lane(config.name);
  rows.push({
    lane: `${config.name} (${config.priority})`,
    succeeded: c.succeeded,
    retried: c.retried,
    dead: c.dead,
    "wait p50": stats ? fmt(percentile(stats.wait, 0.5)) : "-",
    "wait p99": stats ? fmt(percentile(stats.wait, 0.99)) : "-",
    "run p50": stats ? fmt(percentile(stats.run, 0.5)) : "-",
    "run p99": stats ? fmt(percentile(stats.run, 0.99)) : "-",
    selected: metrics.selected[config.name] ?? 0,
  });
}
console.log(
  `\n${counts.published} jobs in ${elapsedS.toFixed(1)} s on the memory adapter, one worker, concurrency 50, ReducedLottery:`,
);
console.table(rows);
const lost = counts.published - counts.succeeded - counts.dead;
await tl.close();
if (lost !== 0) {
  console.error(`${lost} jobs did not finish`);
  process.exit(1);
}
