/**
 * One process of flow-crash.test.ts: acks the flow's child on the server (or Cluster) named in argv,
 * as a user that may not HSCAN, so its ack queues the end in the outbox and its delivery
 * (which starts with an HSCAN of the outbox) fails; prints "acked" and waits for the test
 * to kill it.
 */
import { createRedisAdapter } from "../src/index.ts";

const args = JSON.parse(process.argv[2] as string) as {
  host: string;
  port: number;
  /** Set: a Cluster's nodes instead of host and port. */
  cluster?: Array<{ host: string; port: number }>;
  username: string;
  prefix: string;
  scripting: "functions" | "eval";
  lane: string;
  childId: string;
};
const credentials = { username: args.username, password: "secret" };
const adapter = createRedisAdapter({
  ...(args.cluster === undefined
    ? { connection: { host: args.host, port: args.port, ...credentials } }
    : { cluster: { nodes: args.cluster, options: { redisOptions: credentials } } }),
  prefix: args.prefix,
  scripting: args.scripting,
});
const lane = await adapter.lane(args.lane, { maxStalls: 1, historyLimit: 10 });
const { jobs } = await lane.reserve({ limit: 1, leaseMs: 60_000, waitMs: 0 });
const held = jobs[0];
if (held?.id !== args.childId) throw new Error(`expected the child, got ${held?.id}`);
const acked = await lane.ack([{ ...held.lock, result: '"from the child"' }]);
process.stdout.write(`${JSON.stringify(acked)}\n`);
// Held open until killed: the end is in the outbox, and this process never delivers it.
setInterval(() => {}, 60_000);
