/**
 * One of the processes of rate-limit-race.test.ts: a worker on the rate-limited lane of
 * the Redis server (or Cluster) named in argv. Prints "started" once its worker runs; on
 * "stop" from stdin it stops and prints the ids of the jobs it ran, as one JSON line.
 */
import { createInterface } from "node:readline";
import { createTasklane, defineTask } from "@tasklane/core";
import { z } from "zod";
import { createRedisAdapter } from "../src/index.ts";
import { RACE_LANE } from "./rate-limit-race-lane.ts";

const args = JSON.parse(process.argv[2] as string) as {
  url?: string;
  cluster?: Array<{ host: string; port: number }>;
  prefix: string;
  scripting?: "functions" | "eval";
};
const adapter = createRedisAdapter({
  ...(args.cluster ? { cluster: { nodes: args.cluster } } : { connection: args.url as string }),
  prefix: args.prefix,
  ...(args.scripting ? { scripting: args.scripting } : {}),
});
const ran: string[] = [];
const task = defineTask({
  name: "limited",
  lane: RACE_LANE.name,
  schema: z.object({}),
  run: async (_p, ctx) => {
    ran.push(ctx.jobId);
  },
});
const tl = createTasklane({ adapter, lanes: [RACE_LANE], tasks: [task] });
const worker = tl.worker({ concurrency: 8 });
await worker.start();
process.stdout.write("started\n");
for await (const line of createInterface({ input: process.stdin })) {
  if (line.trim() === "stop") break;
}
// Reading stdin would keep the process alive after its work.
process.stdin.destroy();
await worker.stop();
await tl.close();
process.stdout.write(`${JSON.stringify(ran)}\n`);
