// Smoke app (Redis): the README quickstart's shape on the Redis adapter at REDIS_URL, run by
// plain `node` from the installed tarballs. Publishes jobs to two lanes, runs them (through
// the Lua scripts the adapter loads from its package), checks that a bad payload is refused,
// and exits 0 only when all of that worked and close() let the process end.
import { createRequire } from "node:module";
import { createRedisAdapter } from "@tasklane/adapter-redis";
import { createTasklane, defineTask, ValidationError } from "@tasklane/core";
import { z } from "zod";

const JOBS = 20;
const done = new Set();
let allDone;
const finished = new Promise((resolve) => {
  allDone = resolve;
});

const greet = defineTask({
  name: "greet",
  lane: "default",
  schema: z.object({ n: z.number().int() }),
  async run({ n }) {
    done.add(n);
    if (done.size === JOBS) allDone();
  },
});

const tl = createTasklane({
  adapter: createRedisAdapter({ connection: process.env.REDIS_URL, prefix: `smoke${process.pid}` }),
  lanes: [
    { name: "high", priority: 100 },
    { name: "default", priority: 40 },
  ],
  tasks: [greet],
});
const timer = setTimeout(() => {
  console.error(`redis app: ${done.size} of ${JOBS} jobs ran within 10 s`);
  process.exit(1);
}, 10_000);

await tl.worker({ concurrency: 5 }).start();
for (let n = 0; n < JOBS; n++) await tl.publish(greet, { n });
const refused = await tl.publish(greet, { n: "one" }).catch((error) => error);
if (!(refused instanceof ValidationError)) {
  throw new Error(`a bad payload was not refused with ValidationError: ${refused}`);
}
await finished;
const counts = await tl.lane("default").counts();
await tl.close();
clearTimeout(timer);
const ioredis = createRequire(import.meta.url)("ioredis/package.json").version;
console.log(
  `smoke ok: redis adapter ran ${JOBS} jobs with ioredis ${ioredis} (counts ${JSON.stringify(counts)})`,
);
