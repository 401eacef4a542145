/**
 * redis-server instructions per script call, counted by callgrind: numbers that do not
 * depend on how busy the machine is, for comparing changes to the scripts (not a test and
 * not a benchmark). Each case starts its own redis-server under valgrind on a free port,
 * makes its calls uncounted until the one it measures, and counts only those calls
 * (`callgrind_control --instr=on/off`). Lanes have core's default settings (maxStalls 1,
 * history 10, retention of 1,000 succeeded / failed / canceled for a day). Needs valgrind
 * (Debian's package `valgrind`).
 *
 *   npx node --conditions=source packages/adapter-redis/scripts/instructions.ts [case ...]
 *
 * Cases (default: all): put, reserve, reserveByRef, ack (one job a call); put1000 (1,000
 * fresh ids a call); reserve100, ack100, extend100, nack100 (100 jobs a call); reserve10
 * (10 a call) and reserve10Prefetch (the same with startNow 2, as a worker sends it);
 * put1000Tags, ack100Tags (the same with two tags per job: the tag index's cost, at put
 * and when retention removes the jobs), dead100 (100 jobs failed a call: the failure
 * index's); put1000Groups, reserve100Groups, ack100Groups (the same on a lane with fair
 * groups of concurrency 1,000, its jobs in ten groups: the groups' index and the count of
 * active jobs per group).
 * SCRIPTING=eval counts the EVAL form (default: the function library). COLLECT=scripts
 * counts only inside FCALL and EVALSHA: the whole server's count also holds its clock
 * tick (serverCron, ten times a second, however many calls fit in it under valgrind), which
 * moves it by a percent or two with the machine's load; compare two builds that way.
 */
import { execFileSync, spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { DEFAULT_RETENTION, type LaneStore } from "@tasklane/core/adapter";
import { Redis } from "ioredis";
import { createRedisAdapter } from "../src/index.ts";
import type { ScriptingMode } from "../src/internal.ts";
import { freePort, newJob, REDIS_SERVER, waitFor } from "../test/helpers.ts";

/** What a case measures: `calls` calls of `jobs` jobs each, counted inside `count`. */
interface Case {
  calls: number;
  jobs: number;
  /** The lane is opened with fair groups (see withGroups). */
  groups?: boolean;
  run(q: LaneStore, count: (work: () => Promise<unknown>) => Promise<void>): Promise<void>;
}

/**
 * n fresh jobs as core's publishMany makes them (one publishedAt: put's packed layout),
 * with two tags each when `tagged`.
 */
let tagged = false;
/** Jobs in ten fair groups (withGroups). */
let grouped = false;
const jobs = (n: number) => {
  const publishedAt = Date.now();
  return Array.from({ length: n }, (_, i) =>
    newJob({
      freshId: true,
      payload: `{"i":${i}}`,
      publishedAt,
      ...(tagged ? { tags: [`tenant:${i % 10}`, "import"] } : {}),
      ...(grouped ? { group: `tenant:${i % 10}` } : {}),
    }),
  );
};
/** The case, its jobs tagged (see jobs). */
const withTags = (c: Case): Case => ({
  ...c,
  async run(q, count) {
    tagged = true;
    try {
      await c.run.call(this, q, count);
    } finally {
      tagged = false;
    }
  },
});
/** The case on a lane with fair groups, its jobs in ten groups. */
const withGroups = (c: Case): Case => ({
  ...c,
  groups: true,
  async run(q, count) {
    grouped = true;
    try {
      await c.run.call(this, q, count);
    } finally {
      grouped = false;
    }
  },
});
const reserve = async (q: LaneStore, limit: number, startNow?: number) =>
  (
    await q.reserve({
      limit,
      leaseMs: 60_000,
      waitMs: 0,
      ...(startNow === undefined ? {} : { startNow }),
    })
  ).jobs;
/** The locks of n jobs put and reserved (uncounted). */
const activeLocks = async (q: LaneStore, n: number) => {
  await q.put(jobs(n));
  return (await reserve(q, n)).map((j) => j.lock);
};

/** `calls` puts of `size` fresh jobs each. */
const putCase = (calls: number, size: number): Case => ({
  calls,
  jobs: size,
  async run(q, count) {
    const batches = Array.from({ length: calls }, () => jobs(size));
    await count(async () => {
      for (const b of batches) await q.put(b);
    });
  },
});

/**
 * `calls` one-job reserves of jobs put one by one (fresh records, as publish() puts them)
 * or, `byRef`, all in one put (by-ref records, as publishMany puts them: each reserve
 * reads and writes the call's header).
 */
const reserveCase = (byRef: boolean): Case => ({
  calls: 200,
  jobs: 1,
  async run(q, count) {
    const all = jobs(this.calls);
    if (byRef) await q.put(all);
    else for (const job of all) await q.put([job]);
    await count(async () => {
      for (let i = 0; i < this.calls; i++) await reserve(q, 1);
    });
  },
});

/**
 * `calls` reserves of `size` jobs each; with `startNow`, as a worker with that many free
 * slots sends them (the rest of each batch prefetched).
 */
const reserveBatchCase = (calls: number, size: number, startNow?: number): Case => ({
  calls,
  jobs: size,
  async run(q, count) {
    for (let i = 0; i < this.calls; i++) {
      await q.put(jobs(this.jobs));
      let got: Awaited<ReturnType<typeof reserve>> = [];
      await count(async () => {
        got = await reserve(q, this.jobs, startNow);
      });
      await q.ack(got.map((j) => j.lock));
    }
  },
});

const CASES: Record<string, Case> = {
  put: putCase(200, 1),
  put1000: putCase(10, 1_000),
  reserve: reserveCase(false),
  reserveByRef: reserveCase(true),
  ack: {
    calls: 200,
    jobs: 1,
    async run(q, count) {
      const locks = await activeLocks(q, this.calls);
      await count(async () => {
        for (const lock of locks) await q.ack([lock]);
      });
    },
  },
  reserve100: reserveBatchCase(20, 100),
  reserve10: reserveBatchCase(100, 10),
  reserve10Prefetch: reserveBatchCase(100, 10, 2),
  ack100: {
    calls: 20,
    jobs: 100,
    async run(q, count) {
      for (let i = 0; i < this.calls; i++) {
        const locks = await activeLocks(q, this.jobs);
        await count(() => q.ack(locks));
      }
    },
  },
  extend100: {
    calls: 20,
    jobs: 100,
    async run(q, count) {
      const locks = await activeLocks(q, this.jobs);
      await count(async () => {
        for (let i = 0; i < this.calls; i++) await q.extend(locks, 60_000);
      });
    },
  },
  dead100: {
    calls: 10,
    jobs: 100,
    async run(q, count) {
      const error = { name: "Error", message: "boom", reason: "error" as const };
      for (let i = 0; i < this.calls; i++) {
        await q.put(jobs(this.jobs));
        const got = await reserve(q, this.jobs);
        await count(() => q.nack(got.map((j) => ({ lock: j.lock, error, dead: true }))));
      }
    },
  },
  nack100: {
    calls: 10,
    jobs: 100,
    async run(q, count) {
      const error = { name: "Error", message: "boom", reason: "error" as const };
      for (let i = 0; i < this.calls; i++) {
        await q.put(jobs(this.jobs));
        const got = await reserve(q, this.jobs);
        const runAt = Date.now() + 3_600_000;
        await count(() => q.nack(got.map((j) => ({ lock: j.lock, error, runAt }))));
      }
    },
  },
};
CASES.put1000Tags = withTags(CASES.put1000 as Case);
CASES.ack100Tags = withTags(CASES.ack100 as Case);
CASES.put1000Groups = withGroups(CASES.put1000 as Case);
CASES.reserve100Groups = withGroups(CASES.reserve100 as Case);
CASES.ack100Groups = withGroups(CASES.ack100 as Case);

async function measure(name: string, c: Case, scripting: ScriptingMode): Promise<number> {
  const dir = mkdtempSync(join(tmpdir(), "tasklane-callgrind-"));
  const out = join(dir, "callgrind.out");
  const port = await freePort();
  const server = spawn(
    "valgrind",
    [
      "--tool=callgrind",
      "--instr-atstart=no",
      ...(process.env.COLLECT === "scripts"
        ? [
            "--collect-atstart=no",
            "--toggle-collect=fcallCommand",
            "--toggle-collect=evalShaCommand",
          ]
        : []),
      `--callgrind-out-file=${out}`,
      REDIS_SERVER,
      ...["--port", String(port), "--bind", "127.0.0.1", "--dir", dir],
      ...["--save", "", "--appendonly", "no"],
    ],
    { stdio: "ignore" },
  );
  const exited = new Promise((resolve) => server.once("exit", resolve));
  const admin = new Redis({ port, lazyConnect: true, maxRetriesPerRequest: 0 });
  admin.on("error", () => {});
  try {
    await waitFor(
      () =>
        admin.ping().then(
          () => true,
          () => false,
        ),
      `redis-server on ${port}`,
      60_000,
    );
    const adapter = createRedisAdapter({ connection: { port }, prefix: "tl", scripting });
    const q = await adapter.lane(name, {
      maxStalls: 1,
      historyLimit: 10,
      retention: DEFAULT_RETENTION,
      ...(c.groups ? { groups: { concurrency: 1_000 } } : {}),
    });
    // the scripts are loaded and the lane's keys exist before anything is counted
    await q.put([newJob()]);
    await q.ack((await reserve(q, 1)).map((j) => j.lock));
    const instr = (on: boolean) =>
      execFileSync("callgrind_control", [`--instr=${on ? "on" : "off"}`, String(server.pid)], {
        stdio: "ignore",
      });
    await c.run(q, async (work) => {
      instr(true);
      try {
        await work();
      } finally {
        instr(false);
      }
    });
    await adapter.close();
    await admin.call("SHUTDOWN", "NOSAVE").catch(() => {});
    await exited;
    const totals = /^totals: (\d+)/m.exec(readFileSync(out, "utf8"));
    if (!totals) throw new Error(`no totals in ${out}`);
    return Number(totals[1]);
  } finally {
    admin.disconnect();
    server.kill("SIGKILL");
    rmSync(dir, { recursive: true, force: true });
  }
}

const scripting = (process.env.SCRIPTING ?? "functions") as ScriptingMode;
const names = process.argv.slice(2);
for (const name of names) if (!CASES[name]) throw new Error(`no case ${name}`);
console.log(
  `redis-server instructions (${scripting}${process.env.COLLECT === "scripts" ? ", inside script commands" : ""}), per call and per job`,
);
for (const name of names.length > 0 ? names : Object.keys(CASES)) {
  const c = CASES[name] as Case;
  const total = await measure(name, c, scripting);
  const perCall = Math.round(total / c.calls);
  const perJob = Math.round(perCall / c.jobs);
  console.log(
    `${name.padEnd(10)} ${String(perCall).padStart(11)} per call ${String(perJob).padStart(9)} per job`,
  );
}
