// Smoke app (memory): the README quickstart's shape, run by plain `node` from the installed
// tarballs, with no build step or TypeScript. Publishes jobs to two lanes, runs them, checks
// that a bad payload is refused, and exits 0 only when all of that worked and nothing is
// left holding the process open.
import { createMemoryAdapter } from "@tasklane/adapter-memory";
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
  adapter: createMemoryAdapter(),
  lanes: [
    { name: "high", priority: 100 },
    { name: "default", priority: 40 },
  ],
  tasks: [greet],
});
const timer = setTimeout(() => {
  console.error(`memory app: ${done.size} of ${JOBS} jobs ran within 10 s`);
  process.exit(1);
}, 10_000);

await tl.worker({ concurrency: 5 }).start();
for (let n = 0; n < JOBS; n++) await tl.publish(greet, { n });
const refused = await tl.publish(greet, { n: "one" }).catch((error) => error);
if (!(refused instanceof ValidationError)) {
  throw new Error(`a bad payload was not refused with ValidationError: ${refused}`);
}
await finished;
await tl.close();
clearTimeout(timer);
console.log(`smoke ok: memory adapter ran ${JOBS} jobs`);
