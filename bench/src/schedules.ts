/**
 * `npm run bench:schedules`: what 10,000 schedules cost a worker's schedule tick (see
 * packages/core/src/worker/schedule-ticker.ts), on the memory adapter and on a
 * redis-server of its own. A tick asks the lane for its earliest next slot and fires the
 * lane only when that is due, so its cost should not grow with the number of schedules:
 * this measures a tick with no schedule, with 10,000 none of which is due, and with
 * 10,000 of which one is due at every tick (that tick fires it: one job put). The
 * schedules' time is a manual clock (one second per tick); the work is real.
 */
import { performance } from "node:perf_hooks";
import { createMemoryAdapter } from "@tasklane/adapter-memory";
import { createRedisAdapter } from "@tasklane/adapter-redis";
import { type Adapter, createManualClock, createTasklane, defineTask } from "@tasklane/core";
import { Redis } from "ioredis";
import { z } from "zod";
import { startRedisServer } from "./servers/redis.ts";

const SCHEDULES = 10_000;
const TICKS = 2_000;
const DAY = 86_400_000;

const task = defineTask({ name: "beat", lane: "cron", schema: z.object({}), run: async () => {} });

interface Row {
  backend: string;
  case: string;
  perTickUs: number;
  /** redis-server's own time per tick (INFO commandstats), µs: the machine's load barely moves it. */
  serverUs?: number;
}

/** The server's total command time, µs, since the last CONFIG RESETSTAT. */
async function serverUsec(raw: Redis): Promise<number> {
  const info = await raw.info("commandstats");
  let total = 0;
  for (const m of info.matchAll(/,usec=(\d+),/g)) total += Number(m[1]);
  return total;
}

async function measure(
  backend: string,
  make: (clock: ReturnType<typeof createManualClock>) => Adapter,
  server?: Redis,
) {
  const start = Math.ceil(Date.now() / 1_000) * 1_000;
  const clock = createManualClock(start);
  const adapter = make(clock);
  const tl = createTasklane({ adapter, clock, lanes: [{ name: "cron" }], tasks: [task] });
  const store = await adapter.lane("cron", { maxStalls: 1, historyLimit: 10 });
  const rows: Row[] = [];
  const tick = async () => {
    const at = await store.nextScheduleAt?.();
    if (at !== undefined && at <= clock.now()) await tl.schedules.fireDue("cron");
  };
  const run = async (name: string, advanceMs: number) => {
    for (let i = 0; i < 100; i++) await tick(); // warm-up
    if (server) await server.config("RESETSTAT");
    let total = 0;
    for (let i = 0; i < TICKS; i++) {
      if (advanceMs > 0) await clock.advance(advanceMs);
      const t0 = performance.now();
      await tick();
      total += performance.now() - t0;
    }
    const row: Row = { backend, case: name, perTickUs: Math.round((total / TICKS) * 1_000) };
    if (server) row.serverUs = Math.round(((await serverUsec(server)) / TICKS) * 10) / 10;
    rows.push(row);
  };
  await run("no schedule", 0);
  const t0 = performance.now();
  // due in a day or more: none falls due during the run
  for (let i = 0; i < SCHEDULES; i += 500) {
    await Promise.all(
      Array.from({ length: 500 }, (_, k) =>
        tl.schedules.upsert(
          `s${i + k}`,
          { everyMs: DAY, startAt: start + DAY + (i + k) * 1_000 },
          task,
          {},
        ),
      ),
    );
  }
  const upsertUs = Math.round(((performance.now() - t0) / SCHEDULES) * 1_000);
  await run(`${SCHEDULES} schedules, none due`, 0);
  await tl.schedules.upsert("hot", { everyMs: 1_000, catchUp: "one" }, task, {});
  await run(`${SCHEDULES} schedules, one due per tick (fires it)`, 1_000);
  await tl.close();
  await adapter.close();
  return { rows, upsertUs };
}

const server = await startRedisServer();
const raw = new Redis(server.port, server.host);
try {
  const results = [
    await measure("memory", (clock) => createMemoryAdapter({ clock })),
    await measure(
      "redis",
      () =>
        createRedisAdapter({
          connection: `redis://${server.host}:${server.port}`,
          prefix: "sched-bench",
        }),
      raw,
    ),
  ];
  console.log("| backend | case | per tick, wall (µs) | per tick, redis-server (µs) |");
  console.log("| --- | --- | ---: | ---: |");
  for (const r of results) {
    for (const row of r.rows) {
      console.log(`| ${row.backend} | ${row.case} | ${row.perTickUs} | ${row.serverUs ?? "–"} |`);
    }
  }
  console.log("");
  for (const [i, name] of ["memory", "redis"].entries()) {
    console.log(`${name}: upsert ${results[i]?.upsertUs} µs per schedule (500 at a time)`);
  }
} finally {
  raw.disconnect();
  await server.stop();
}
