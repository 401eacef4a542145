/**
 * Four processes, each a worker on one rate-limited lane (5 starts per 500 ms), share 60
 * jobs on a real server: no window of 500 ms holds more than 5 starts (the starts as the
 * server logged them, each job's "reserved" entry), and every job ran exactly once. On
 * redis-server (and valkey-server in the valkey project), with the function library and
 * with EVAL, and on a three-node Cluster.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { once } from "node:events";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";
import { mostStartsInAWindow } from "@tasklane/conformance";
import { createTasklane, defineTask } from "@tasklane/core";
import { expect } from "vitest";
import { z } from "zod";
import { createRedisAdapter, type RedisAdapterOptions } from "../src/index.ts";
import { type RaceConnection, raceOnServerAndCluster } from "./races.ts";
import { RACE_LANE } from "./rate-limit-race-lane.ts";

const CHILD = fileURLToPath(new URL("./rate-limit-race-child.ts", import.meta.url));
const PROCESSES = 4;
const JOBS = 60;

interface Child {
  process: ChildProcess;
  /** Resolves with the ids the child ran, once it stopped. */
  ran: Promise<string[]>;
}

/** Start one worker process; resolves once its worker runs. */
async function startChild(args: object): Promise<Child> {
  const child = spawn(process.execPath, ["--conditions=source", CHILD, JSON.stringify(args)], {
    stdio: ["pipe", "pipe", "inherit"],
  });
  const exited = once(child, "exit");
  const lines = createInterface({ input: child.stdout });
  const iterator = lines[Symbol.asyncIterator]();
  const first = await iterator.next();
  if (first.value !== "started") throw new Error(`worker process said ${first.value}`);
  const ran = (async () => {
    const last = await iterator.next();
    const [code] = await exited;
    if (code !== 0) throw new Error(`worker process exited with ${code}`);
    return JSON.parse(last.value as string) as string[];
  })();
  return { process: child, ran };
}

async function race(options: RedisAdapterOptions, connection: RaceConnection) {
  const prefix = options.prefix as string;
  const adapter = createRedisAdapter(options);
  const task = defineTask({
    name: "limited",
    lane: RACE_LANE.name,
    schema: z.object({}),
    run: () => {},
  });
  const tl = createTasklane({ adapter, lanes: [RACE_LANE], tasks: [task] });
  const children: Child[] = [];
  try {
    for (let i = 0; i < PROCESSES; i++) {
      children.push(await startChild({ ...connection, prefix, ...pickScripting(options) }));
    }
    const published = await tl.publishMany(
      task,
      Array.from({ length: JOBS }, () => ({ payload: {} })),
    );
    const ids = published.map((r) => r.id);
    const lane = await adapter.lane(RACE_LANE.name, { maxStalls: 3, historyLimit: 20 });
    for (;;) {
      const counts = await lane.counts();
      if (counts.succeeded === JOBS) break;
      await new Promise((r) => setTimeout(r, 50));
    }
    for (const c of children) c.process.stdin?.write("stop\n");
    const ran = (await Promise.all(children.map((c) => c.ran))).flat();
    // every job ran exactly once
    expect([...ran].sort()).toEqual([...ids].sort());
    const starts: number[] = [];
    for (const id of ids) {
      const info = await lane.get?.(id);
      const reserved = info?.history.filter((e) => e.event === "reserved") ?? [];
      expect(reserved).toHaveLength(1);
      starts.push(reserved[0]?.at as number);
    }
    expect(mostStartsInAWindow(starts, RACE_LANE.rateLimit.durationMs)).toBeLessThanOrEqual(
      RACE_LANE.rateLimit.max,
    );
    // 60 jobs at 5 per window take at least 11 windows after the first start
    expect(Math.max(...starts) - Math.min(...starts)).toBeGreaterThanOrEqual(
      (JOBS / RACE_LANE.rateLimit.max - 1) * RACE_LANE.rateLimit.durationMs,
    );
  } finally {
    for (const c of children) {
      c.ran.catch(() => {}); // a failed run already failed the test
      if (c.process.exitCode === null) c.process.kill();
    }
    await tl.close();
    await adapter.close();
  }
}

function pickScripting(options: RedisAdapterOptions) {
  return options.scripting ? { scripting: options.scripting } : {};
}

raceOnServerAndCluster(
  "rate limit: four processes on one lane",
  "no window holds more than max starts, each job runs once",
  120_000,
  race,
);
