/**
 * `npm run demo`: tasklane on the in-memory adapter.
 *
 * Three lanes configured like Kale's example (high 100 / default 40 / low 5 tickets), a
 * mixed workload of 3,000 jobs arriving in waves (some fail once and retry, some keep
 * failing and end in the dead letter set, a few are unrecoverable), one embedded worker
 * with concurrency 50 and the default ReducedLottery selector. A live progress line runs
 * while it works (rewritten in place on a terminal, one line a second when piped); at the
 * end, a table per lane with a legend.
 *
 *   npm run demo
 *   npm run demo -- --dashboard     # and the dashboard at http://127.0.0.1:3000/tasklane/ui/
 *
 * With --dashboard the management API and its dashboard (@tasklane/http,
 * @tasklane/dashboard) are served on 127.0.0.1 (PORT, default 3000; 0 picks a free one)
 * while the jobs run, and after: the worker keeps running, so dead jobs retried from the
 * page run again, until Ctrl-C. Anyone on this machine may act on the demo's lanes (the
 * handler allows anonymous writes, for this demo only: it listens on loopback).
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

/**
 * Handlers running now, and their time integral, for the progress line. Counted here, in
 * the handler: `worker.held` counts leases, so it includes prefetched jobs that have not
 * started and finished ones whose ack is on its way (over 60 at times with concurrency
 * 50), and is not the number running.
 */
const busy = { running: 0, area: 0, changedAt: performance.now(), since: performance.now() };
const busyChange = (delta: number) => {
  const now = performance.now();
  busy.area += busy.running * (now - busy.changedAt);
  busy.changedAt = now;
  busy.running += delta;
};
/** Mean number of handlers running since the previous call. */
const busyAverage = () => {
  busyChange(0);
  const avg = busy.area / Math.max(busy.changedAt - busy.since, 1e-3);
  busy.area = 0;
  busy.since = busy.changedAt;
  return avg;
};

const run = async (
  { workMs, kind }: z.infer<typeof payload>,
  ctx: { attempt: number; signal: AbortSignal },
) => {
  busyChange(1);
  try {
    await setTimeout(workMs, undefined, { signal: ctx.signal });
    if (kind === "flaky" && ctx.attempt === 1) throw new Error("temporary glitch");
    if (kind === "broken") throw new Error("this job always fails");
    if (kind === "fatal") throw new UnrecoverableError("bad input, retrying will not help");
  } finally {
    busyChange(-1);
  }
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
/** Resolves once every job has either succeeded or gone dead. */
let allSettled = () => {};
const settled = new Promise<void>((resolve) => {
  allSettled = resolve;
});
const settle = () => {
  if (counts.succeeded + counts.dead === JOBS) allSettled();
};
tl.events.on("succeeded", (e) => {
  counts.succeeded++;
  lane(e.lane).succeeded++;
  settle();
});
tl.events.on("retrying", (e) => {
  counts.retried++;
  lane(e.lane).retried++;
});
tl.events.on("failed", (e) => {
  counts.dead++;
  lane(e.lane).dead++;
  settle();
});

/**
 * The management API with the dashboard, on loopback. Imported here, not at the top: the
 * plain demo does not load them.
 */
async function serveDashboard(): Promise<{ url: string; close(): Promise<void> }> {
  const [
    { createServer },
    { createManagementHandler },
    { createNodeListener },
    { createDashboard },
  ] = await Promise.all([
    import("node:http"),
    import("@tasklane/http"),
    import("@tasklane/http/node"),
    import("@tasklane/dashboard"),
  ]);
  const handler = createManagementHandler({
    tasklane: tl,
    basePath: "/tasklane",
    // The demo's own lanes, on loopback only: no sign-in.
    allowAnonymousWrites: true,
    dashboard: createDashboard({ title: "tasklane demo" }),
  });
  const listener = createNodeListener(handler);
  const server = createServer((req, res) =>
    listener(req, res, () => {
      res.writeHead(302, { location: "/tasklane/ui/" }).end();
    }),
  );
  const port = Number(process.env.PORT ?? 3000);
  await new Promise<void>((resolve, reject) => {
    server.once("error", (error: NodeJS.ErrnoException) =>
      reject(
        error.code === "EADDRINUSE"
          ? new Error(`port ${port} is in use: PORT=3001 npm run demo -- --dashboard picks another`)
          : error,
      ),
    );
    server.listen(port, "127.0.0.1", resolve);
  });
  const address = server.address();
  const url = `http://127.0.0.1:${typeof address === "object" && address !== null ? address.port : port}/tasklane/ui/`;
  console.log(`dashboard: ${url}\n`);
  return {
    url,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

function makeJob() {
  const r = random();
  const kind = r < 0.85 ? "ok" : r < 0.95 ? "flaky" : r < 0.99 ? "broken" : "fatal";
  return { workMs: Math.round(2 + random() * 40), kind } as const;
}

const worker = tl.worker({ concurrency: 50 });
const dashboard = process.argv.includes("--dashboard") ? await serveDashboard() : undefined;
await worker.start();
const startedAt = performance.now();

// On a terminal the line is rewritten every 100 ms; piped, one line a second. "running"
// is a snapshot, so it also shows the mean since the previous line: jobs arrive in waves
// every 250 ms and are done ~170 ms later, and a snapshot taken once a second falls at the
// same point of that cycle each time (piped, the idle gap before the next wave: always 0).
const interactive = process.stdout.isTTY;
const progressLine = () =>
  `published ${counts.published}/${JOBS}  succeeded ${counts.succeeded}  retried ${counts.retried}  dead ${counts.dead}  running now ${busy.running}, avg ${busyAverage().toFixed(0)}`;
const printProgress = () => {
  if (interactive) process.stdout.write(`\r${progressLine()}\x1b[K`);
  else console.log(progressLine());
};
const progress = setInterval(printProgress, interactive ? 100 : 1_000);

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
const timeout = new AbortController();
const finished = await Promise.race([
  settled.then(() => true),
  setTimeout(25_000, false, { signal: timeout.signal }),
]);
timeout.abort();
clearInterval(progress);
// The last line is printed now, when the last job has settled, not at the last tick of
// the interval (up to a second earlier when piped): it shows the counts the table shows.
printProgress();
if (interactive) process.stdout.write("\n");
if (!finished) console.error("timed out after 25 s waiting for the last jobs");
const elapsedS = (performance.now() - startedAt) / 1000;
const metrics = worker.metrics();
// With the dashboard the worker keeps running: jobs retried from the page run again.
if (dashboard === undefined) await worker.stop();

const fmt = (ms: number) =>
  Number.isNaN(ms) ? "-" : ms < 1_000 ? `${ms.toFixed(1)} ms` : `${(ms / 1000).toFixed(2)} s`;
const header = [
  "lane (tickets)",
  "succeeded",
  "retried",
  "dead",
  "wait p50",
  "wait p99",
  "run p50",
  "run p99",
  "selected",
];
const rows: string[][] = [];
for (const config of lanes) {
  const stats = await tl.lane(config.name).stats();
  const c = lane(config.name);
  rows.push([
    `${config.name} (${config.priority})`,
    String(c.succeeded),
    String(c.retried),
    String(c.dead),
    stats ? fmt(percentile(stats.wait, 0.5)) : "-",
    stats ? fmt(percentile(stats.wait, 0.99)) : "-",
    stats ? fmt(percentile(stats.run, 0.5)) : "-",
    stats ? fmt(percentile(stats.run, 0.99)) : "-",
    String(metrics.selected[config.name] ?? 0),
  ]);
}
const sum = (column: number) => String(rows.reduce((n, row) => n + Number(row[column]), 0));
rows.push(["all lanes", sum(1), sum(2), sum(3), "", "", "", "", sum(8)]);

/** A plain text table: the first column left-aligned, the others right-aligned. */
function table(head: string[], body: string[][]): string {
  const widths = head.map((h, i) => Math.max(h.length, ...body.map((r) => (r[i] ?? "").length)));
  const line = (cells: string[]) =>
    cells
      .map((cell, i) => (i === 0 ? cell.padEnd(widths[i] ?? 0) : cell.padStart(widths[i] ?? 0)))
      .join("  ");
  const rule = widths.map((w) => "-".repeat(w)).join("  ");
  const last = body.length - 1;
  return [line(head), rule, ...body.slice(0, last).map(line), rule, line(body[last] ?? [])].join(
    "\n",
  );
}

console.log(
  `\n${counts.published} jobs in ${elapsedS.toFixed(1)} s on the memory adapter, one worker, concurrency 50, ReducedLottery:\n`,
);
console.log(table(header, rows));
console.log(`
lane (tickets)  the lane and its priority: lottery tickets, as in Kale's queue config
succeeded       jobs that finished, on their first attempt or a retry
retried         failed attempts scheduled again (after 100 ms, then 200 ms, less up to 20% jitter)
dead            jobs in the dead letter set: failed 3 attempts, or threw UnrecoverableError
wait p50, p99   due (published, or its backoff over) until reserved by the worker, per attempt
run p50, p99    reserved until finished, per attempt: time held unstarted (prefetch) plus 2-42 ms of work
selected        turns the selector gave the lane; a turn is up to num_iterations reserves (high 10,
                others 5) of up to batch_size (10) jobs, ended early when the lane runs out. Lanes
                known to be empty are skipped, so turns follow tickets only while every lane has work.
Percentiles are read from the lane's stats histogram (1, 2, 5, 10, 20, 50, 100, 200, 500 ms,
then every second), interpolated within a bucket. In the progress line, "running now" is the
number of handlers running as the line was printed, "avg" the mean since the previous line.`);
const lost = counts.published - counts.succeeded - counts.dead;
if (dashboard !== undefined) {
  console.log(
    `\nThe dashboard is still at ${dashboard.url} and the worker still runs (retry dead jobs there). Ctrl-C stops both.`,
  );
  await new Promise<void>((resolve) => {
    process.once("SIGINT", resolve);
    process.once("SIGTERM", resolve);
  });
  await worker.stop();
  await dashboard.close();
  console.log("Stopped: the worker and the dashboard are closed.");
}
await tl.close();
if (lost !== 0) {
  console.error(`${lost} jobs did not finish`);
  process.exit(1);
}
