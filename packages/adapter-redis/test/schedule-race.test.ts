/**
 * Three processes fire the same schedules on a real server, racing, over an hour of
 * virtual time each (random steps of 0.2-2 s): every slot is put exactly once, and the
 * three together created exactly as many jobs as there are slots. On redis-server (and
 * valkey-server in the valkey project), with the function library and with EVAL, and on a
 * three-node Cluster where the lanes' slots live on different nodes.
 */
import { spawn } from "node:child_process";
import { once } from "node:events";
import { fileURLToPath } from "node:url";
import { createTasklane, defineTask, type ScheduleSpec, scheduleJobId } from "@tasklane/core";
import { expect } from "vitest";
import { z } from "zod";
import { createRedisAdapter, type RedisAdapterOptions } from "../src/index.ts";
import { type RaceConnection, raceOnServerAndCluster } from "./races.ts";

const CHILD = fileURLToPath(new URL("./schedule-race-child.ts", import.meta.url));
const HOUR = 3_600_000;

/** The race's schedules: lane, spec, and the slots an hour from `start` holds. */
const SCHEDULES: Array<{
  id: string;
  lane: string;
  spec: ScheduleSpec;
  slots: (start: number) => number[];
}> = [
  {
    id: "every-minute",
    lane: "a",
    spec: { cron: "* * * * *", catchUp: "all" },
    slots: (s) => Array.from({ length: 61 }, (_, i) => s + i * 60_000),
  },
  {
    id: "every-10s",
    lane: "b",
    spec: { cron: "*/10 * * * * *", catchUp: "all" },
    slots: (s) => Array.from({ length: 361 }, (_, i) => s + i * 10_000),
  },
  {
    id: "every-7s",
    lane: "c",
    spec: { everyMs: 7_000, catchUp: "all" },
    slots: (s) => Array.from({ length: Math.floor(HOUR / 7_000) + 1 }, (_, i) => s + i * 7_000),
  },
  {
    id: "quarter-berlin",
    lane: "a",
    spec: { cron: "*/15 * * * *", timezone: "Europe/Berlin", catchUp: "all" },
    slots: (s) => Array.from({ length: 5 }, (_, i) => s + i * 900_000),
  },
];

function runChild(args: object): Promise<{ created: number; duplicates: number; stale: number }> {
  const child = spawn(process.execPath, ["--conditions=source", CHILD, JSON.stringify(args)], {
    stdio: ["ignore", "pipe", "inherit"],
  });
  let out = "";
  child.stdout.on("data", (d) => {
    out += d;
  });
  return once(child, "exit").then(([code]) => {
    if (code !== 0) throw new Error(`schedule race child exited with ${code}`);
    return JSON.parse(out.trim());
  });
}

async function race(options: RedisAdapterOptions, connection: RaceConnection) {
  const prefix = options.prefix as string;
  const adapter = createRedisAdapter(options);
  const tasks = ["a", "b", "c"].map((lane) =>
    defineTask({ name: `t-${lane}`, lane, schema: z.object({}), run: async () => {} }),
  );
  const tl = createTasklane({
    adapter,
    lanes: [{ name: "a" }, { name: "b" }, { name: "c" }],
    tasks,
  });
  try {
    // an hour boundary, so the minute and quarter-hour crons start on it
    const start = Math.ceil(Date.now() / HOUR) * HOUR;
    for (const s of SCHEDULES) {
      const task = tasks.find((t) => t.lane === s.lane);
      if (!task) throw new Error("no task");
      await tl.schedules.upsert(s.id, { ...s.spec, startAt: start }, task, {});
    }
    const totals = await Promise.all(
      [1, 2, 3].map((seed) =>
        runChild({ ...connection, prefix, startAt: start, durationMs: HOUR, seed }),
      ),
    );
    const expected = new Map<string, string[]>();
    for (const s of SCHEDULES) {
      const ids = s.slots(start).map((slot) => scheduleJobId(s.id, slot));
      expected.set(s.lane, [...(expected.get(s.lane) ?? []), ...ids]);
    }
    let all = 0;
    for (const [lane, ids] of expected) {
      const store = await adapter.lane(lane, { maxStalls: 1, historyLimit: 10 });
      const got: string[] = [];
      for await (const j of store.list?.({ state: "waiting" }) ?? []) got.push(j.id);
      expect(got.sort()).toEqual([...ids].sort());
      all += ids.length;
    }
    // each slot created once, by exactly one process; the others lost the compare-and-set
    expect(totals.reduce((n, t) => n + t.created, 0)).toBe(all);
    expect(totals.reduce((n, t) => n + t.duplicates, 0)).toBe(0);
    for (const s of SCHEDULES) {
      expect((await tl.schedules.get(s.id))?.runs).toBe(s.slots(start).length);
    }
    return totals;
  } finally {
    await tl.close();
    await adapter.close();
  }
}

raceOnServerAndCluster(
  "schedules: three processes racing",
  "puts every slot of an hour exactly once",
  180_000,
  race,
);
