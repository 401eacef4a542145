/**
 * Depth (#19.8): a million waiting jobs on Redis, published with the workers stopped, then
 * drained by two worker processes. Figures: bytes per job (INFO used_memory delta / jobs),
 * publish and drain rates, each worker's heapUsed over the drain (it must stay flat: a
 * worker never loads the lane), and the slowest script calls in SLOWLOG while deep
 * (target ≤ 50 ms). The same for the memory adapter with `maxJobs`, in one process.
 */
import { fork } from "node:child_process";
import type { Redis } from "ioredis";
import { quantile } from "../figures.ts";
import { createHarness, type Harness } from "../harness.ts";
import { num } from "../report.ts";
import type { Figure, Scenario } from "../scenario.ts";
import { infoField } from "../servers/redis-server.ts";
import type { MemoryDepthReport } from "./depth-memory-main.ts";

export interface DepthParams {
  jobs: number;
  workers: number;
  concurrency: number;
  batchSize: number;
  /** Jobs per publishMany call (each goes out as script calls of 1,000). */
  publishChunk: number;
}

interface SlowCall {
  ms: number;
  command: string;
  /** Jobs pending when it was read. */
  depth: number;
}

interface DepthEnv {
  h: Harness;
  publishMs: number;
  bytesPerJob: number;
  usedMemoryBytes: number;
  slowestPublish: SlowCall[];
  slowestDrain: SlowCall[];
  /** Script calls during the drain (INFO commandstats), and how many took ≥ 10 / ≥ 50 ms. */
  drainScriptCalls: number;
  slowScriptCalls: { over10: number; over50: number };
  /** The slowest command that was not a script call (those also run inside scripts). */
  slowestOther: SlowCall[];
  drainMs: number;
  memory?: MemoryDepthReport;
  teardown(): Promise<void>;
}

const SLOWLOG_THRESHOLD_US = 1_000;

/**
 * A worker's heap must not grow with the lane's depth: it holds at most concurrency +
 * prefetch jobs. A million jobs loaded into a worker would take hundreds of MiB; a worker
 * at rest takes about 30.
 */
const HEAP_TARGET_MIB = 64;

type SlowlogEntry = [number, number, number, Array<string | Buffer>, ...unknown[]];

function describe(args: Array<string | Buffer>): string {
  const words = args.slice(0, 2).map((a) => String(a).slice(0, 40));
  return words.join(" ");
}

/** Take (and clear) the SLOWLOG; entries of at least SLOWLOG_THRESHOLD_US. */
async function takeSlowlog(h: Harness, depth: number): Promise<SlowCall[]> {
  const admin = h.redis?.admin;
  if (admin === undefined) return [];
  const entries = (await admin.call("SLOWLOG", "GET", "-1")) as SlowlogEntry[];
  await admin.call("SLOWLOG", "RESET");
  return entries.map((e) => ({ ms: e[2] / 1_000, command: describe(e[3]), depth }));
}

/** Script calls so far (FCALL, or EVALSHA and EVAL on Redis 6.2), from INFO commandstats. */
async function scriptCallCount(admin: Redis): Promise<number> {
  const stats = await admin.info("commandstats");
  let calls = 0;
  for (const name of ["fcall", "fcall_ro", "evalsha", "eval"]) {
    calls += Number(new RegExp(`^cmdstat_${name}:calls=(\\d+)`, "m").exec(stats)?.[1] ?? 0);
  }
  return calls;
}

/** FCALL (function library) or EVALSHA/EVAL (Redis 6.2): the adapter's script calls. */
function isScriptCall(call: SlowCall): boolean {
  return /^(fcall|fcall_ro|evalsha|eval) /i.test(call.command);
}

function slowest(calls: SlowCall[], n: number): SlowCall[] {
  return [...calls].sort((a, b) => b.ms - a.ms).slice(0, n);
}

async function memoryDepth(jobs: number, concurrency: number): Promise<MemoryDepthReport> {
  const child = fork(
    new URL("./depth-memory-main.ts", import.meta.url),
    [String(jobs), String(concurrency)],
    {
      execPath: process.execPath,
      execArgv: ["--conditions=source", "--expose-gc", "--disable-warning=ExperimentalWarning"],
      stdio: ["ignore", "inherit", "inherit", "ipc"],
    },
  );
  return await new Promise((resolve, reject) => {
    child.once("message", (m) => resolve(m as MemoryDepthReport));
    child.once("exit", (code) => {
      if (code !== 0) reject(new Error(`memory depth run exited ${code}`));
    });
  });
}

export const depthScenario: Scenario<DepthParams, DepthEnv> = {
  name: "depth",
  title: "Depth: a million waiting jobs (Redis, and the memory adapter)",
  async setup(ctx, p) {
    const h = await createHarness({
      name: "depth",
      runDir: ctx.runDir,
      backend: "redis",
      proxy: false,
      workers: p.workers,
      concurrency: p.concurrency,
      mode: "summary",
      retention: "default",
      heapSampleMs: 1_000,
      lane: { leaseMs: 60_000, longPollMs: 1_000, batchSize: p.batchSize, maxStalls: 3 },
    });
    const admin = h.redis?.admin;
    if (admin === undefined) throw new Error("no redis-server");
    await admin.config("SET", "slowlog-log-slower-than", String(SLOWLOG_THRESHOLD_US));
    await admin.config("SET", "slowlog-max-len", "100000");
    await admin.call("SLOWLOG", "RESET");
    const before = (await infoField(admin, "memory", "used_memory")) ?? 0;
    ctx.log(`depth: publishing ${p.jobs} jobs`);
    const started = Date.now();
    for (let i = 0; i < p.jobs; i += p.publishChunk) {
      const n = Math.min(p.publishChunk, p.jobs - i);
      await h.tl.publishMany(
        h.task,
        Array.from({ length: n }, () => ({ payload: { k: "ok" as const, ms: 0 } })),
      );
    }
    const publishMs = Date.now() - started;
    const after = (await infoField(admin, "memory", "used_memory")) ?? 0;
    const slowestPublish = slowest((await takeSlowlog(h, p.jobs)).filter(isScriptCall), 5);
    return {
      h,
      publishMs,
      bytesPerJob: (after - before) / p.jobs,
      usedMemoryBytes: after,
      slowestPublish,
      slowestDrain: [],
      drainScriptCalls: 0,
      slowScriptCalls: { over10: 0, over50: 0 },
      slowestOther: [],
      drainMs: 0,
      teardown: () => h.teardown(),
    };
  },
  async inject(env, p, ctx) {
    const { h } = env;
    await h.pool.start();
    const started = Date.now();
    const calls: SlowCall[] = [];
    const admin = h.redis?.admin;
    const scriptCalls = async () => (admin === undefined ? 0 : await scriptCallCount(admin));
    const callsBefore = await scriptCalls();
    for (;;) {
      const pending = await h.pending();
      calls.push(...(await takeSlowlog(h, pending)));
      if (pending === 0) break;
      ctx.log(`depth: ${pending} pending`);
      await new Promise((resolve) => setTimeout(resolve, 1_000)); // the sampling period
    }
    env.drainMs = Date.now() - started;
    const scripts = calls.filter(isScriptCall);
    env.slowestDrain = slowest(scripts, 5);
    env.drainScriptCalls = (await scriptCalls()) - callsBefore;
    env.slowScriptCalls = {
      over10: scripts.filter((c) => c.ms >= 10).length,
      over50: scripts.filter((c) => c.ms >= 50).length,
    };
    env.slowestOther = slowest(
      calls.filter((c) => !isScriptCall(c)),
      1,
    );
    ctx.log("depth: the memory adapter");
    env.memory = await memoryDepth(p.jobs, p.concurrency);
  },
  async check(env, p) {
    const { h } = env;
    const finished = await h.finish({ readStore: false });
    const figures: Figure[] = [
      { name: "Redis: used_memory per waiting job", value: env.bytesPerJob, unit: "bytes" },
      {
        name: "Redis: used_memory with every job waiting",
        value: env.usedMemoryBytes / 2 ** 20,
        unit: "MiB",
      },
      {
        name: "Redis: publish rate (publishMany, workers stopped)",
        value: p.jobs / (env.publishMs / 1_000),
        unit: "jobs/s",
      },
      {
        name: `Redis: drain rate (${p.workers} worker processes × ${p.concurrency})`,
        value: p.jobs / (env.drainMs / 1_000),
        unit: "jobs/s",
      },
      {
        name: "Redis: slowest script call while draining",
        value: env.slowestDrain[0]?.ms ?? 0,
        unit: "ms",
        target: 50,
        targetText: "≤ 50 ms",
      },
      {
        name: "Redis: script calls while draining that took ≥ 10 ms / ≥ 50 ms",
        value: env.slowScriptCalls.over10,
        unit: `/ ${env.slowScriptCalls.over50} of ${num(env.drainScriptCalls)} calls`,
      },
      {
        name: "Redis: slowest publish call (1,000 jobs)",
        value: env.slowestPublish[0]?.ms ?? 0,
        unit: "ms",
      },
    ];
    const notes: string[] = [];
    let done = 0;
    let liveMax = 0;
    for (const [pid, samples] of finished.facts.heap) {
      const mib = (bytes: number | undefined) => (bytes ?? 0) / 2 ** 20;
      const used = samples.map(([, u]) => mib(u));
      const live = samples.flatMap(([, , l]) => (l === undefined ? [] : [mib(l)]));
      done += finished.facts.counts.get(pid) ?? 0;
      liveMax = Math.max(liveMax, ...live);
      figures.push({
        name: `worker (pid ${pid}): heap after a full GC, max over the drain`,
        value: quantile(live, 1),
        unit: `MiB (min ${fmt(quantile(live, 0))}, p50 ${fmt(quantile(live, 0.5))}; heapUsed as sampled, garbage included: p50 ${fmt(quantile(used, 0.5))}, max ${fmt(quantile(used, 1))}; ${samples.length} samples, one a second)`,
      });
    }
    figures.push({
      name: "workers: largest heap after a full GC while draining",
      value: liveMax,
      unit: "MiB",
      target: HEAP_TARGET_MIB,
      targetText: `≤ ${HEAP_TARGET_MIB} MiB (flat: a worker never loads the lane)`,
    });
    for (const call of env.slowestDrain) {
      notes.push(
        `slow script call while draining: ${call.ms.toFixed(1)} ms \`${call.command}\`, ${num(call.depth)} jobs pending when read`,
      );
    }
    for (const call of env.slowestOther) {
      notes.push(
        `slowest other command (SLOWLOG also lists commands run inside scripts): ${call.ms.toFixed(1)} ms \`${call.command}\``,
      );
    }
    const m = env.memory;
    if (m) {
      figures.push(
        { name: "memory adapter: heap per waiting job", value: m.bytesPerJob, unit: "bytes" },
        { name: "memory adapter: publish rate", value: m.publishRate, unit: "jobs/s" },
        { name: "memory adapter: drain rate (one worker)", value: m.drainRate, unit: "jobs/s" },
        { name: "memory adapter: heapUsed while draining, max", value: m.heapMaxMiB, unit: "MiB" },
        {
          name: "memory adapter: a publish past maxJobs refused",
          value: m.refusedPastMax ? 1 : 0,
          unit: "(1 = yes)",
        },
      );
    }
    const failures: string[] = [];
    if (done !== p.jobs) failures.push(`the workers finished ${done} jobs of ${p.jobs}`);
    if (m && m.done !== p.jobs)
      failures.push(`the memory worker finished ${m.done} jobs of ${p.jobs}`);
    if (m && !m.refusedPastMax) failures.push("the memory adapter took a job past maxJobs");
    return {
      name: "depth",
      title: depthScenario.title,
      backend: `redis-server ${h.redis?.version ?? "?"}; memory adapter`,
      params: {
        jobs: p.jobs,
        workers: `${p.workers} × ${p.concurrency}`,
        "batch size": p.batchSize,
        "publish chunk": p.publishChunk,
      },
      figures,
      notes,
      failures,
    };
  },
};

function fmt(value: number | undefined): string {
  return value === undefined ? "–" : value.toFixed(1);
}
