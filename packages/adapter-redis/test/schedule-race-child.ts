/**
 * One of the processes of schedule-race.test.ts: a tasklane client on the Redis server (or
 * Cluster) named in argv, firing the race's schedules over an hour of its own virtual time
 * in random steps, as a worker's ticker would. Prints its totals as one JSON line.
 */
import { createManualClock, createTasklane, defineTask } from "@tasklane/core";
import { z } from "zod";
import { createRedisAdapter } from "../src/index.ts";

const args = JSON.parse(process.argv[2] as string) as {
  url?: string;
  cluster?: Array<{ host: string; port: number }>;
  prefix: string;
  startAt: number;
  durationMs: number;
  seed: number;
};
const adapter = createRedisAdapter({
  ...(args.cluster ? { cluster: { nodes: args.cluster } } : { connection: args.url as string }),
  prefix: args.prefix,
});
const tasks = ["a", "b", "c"].map((lane) =>
  defineTask({ name: `t-${lane}`, lane, schema: z.object({}), run: async () => {} }),
);
const clock = createManualClock(args.startAt);
const tl = createTasklane({
  adapter,
  clock,
  lanes: [{ name: "a" }, { name: "b" }, { name: "c" }],
  tasks,
});
// A small deterministic generator per process: the processes step differently.
let state = args.seed >>> 0 || 1;
const random = () => {
  state ^= state << 13;
  state ^= state >>> 17;
  state ^= state << 5;
  return (state >>> 0) / 4_294_967_296;
};
const totals = { created: 0, duplicates: 0, stale: 0, skipped: 0, calls: 0 };
while (clock.now() < args.startAt + args.durationMs) {
  await clock.advance(
    Math.min(200 + Math.floor(random() * 1_800), args.startAt + args.durationMs - clock.now()),
  );
  const r = await tl.schedules.fireDue();
  totals.created += r.created;
  totals.duplicates += r.duplicates;
  totals.stale += r.stale;
  totals.skipped += r.skipped;
  totals.calls++;
}
await tl.close();
process.stdout.write(`${JSON.stringify(totals)}\n`);
