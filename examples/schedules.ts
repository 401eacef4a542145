/**
 * Recurring schedules, runnable: `npm run example:schedules` (memory), or on Redis:
 *
 *   TASKLANE_ADAPTER=redis REDIS_URL=redis://127.0.0.1:6379 npm run example:schedules
 *
 * A schedule lives in the backend, in its task's lane; every worker (in any process)
 * puts its due runs, each with the job id `<schedule id>@<slot epoch ms>`, so however
 * many workers run, each slot runs once. This one runs every second, three times in all;
 * a second one, at 02:30 Berlin time, is created, shown and paused. Both are removed at
 * the end (on Redis they would otherwise outlive the process, as they should).
 */
import { createTasklane, defineTask } from "@tasklane/core";
import { z } from "zod";
import { adapterFromEnv } from "./adapter-from-env.ts";

let runs = 0;
const report = defineTask({
  name: "report",
  lane: "cron",
  schema: z.object({ team: z.string() }),
  async run({ team }, ctx) {
    runs++;
    console.log(`run ${ctx.jobId}: report for ${team}`);
  },
});

const tl = createTasklane({
  adapter: await adapterFromEnv(),
  lanes: [{ name: "cron" }],
  tasks: [report],
});
const at = (ms: number | null) => (ms === null ? "none" : new Date(ms).toISOString());

// Six fields: seconds first. `limit` ends it after three runs.
const every = await tl.schedules.upsert("every-second", { cron: "* * * * * *", limit: 3 }, report, {
  team: "ops",
});
console.log(`every-second: first run at ${at(every.nextAt)}`);

// Five fields, read in a time zone (DST handled: 02:30 on the spring-forward day runs at 03:00).
const nightly = await tl.schedules.upsert(
  "nightly",
  { cron: "30 2 * * *", timezone: "Europe/Berlin", catchUp: "skip" },
  report,
  { team: "everyone" },
);
console.log(`nightly: next run at ${at(nightly.nextAt)} (02:30 in Berlin)`);
const paused = await tl.schedules.pause("nightly");
console.log(`nightly: paused, next run ${at(paused?.nextAt ?? null)}`);

const worker = tl.worker({ schedulePollMs: 250 });
await worker.start();
while (runs < 3) await new Promise((resolve) => setTimeout(resolve, 50));
await worker.stop();

for (const s of await tl.schedules.list()) {
  console.log(`${s.id}: ${s.runs} runs, next ${at(s.nextAt)}${s.paused ? ", paused" : ""}`);
}
await tl.schedules.remove("every-second");
await tl.schedules.remove("nightly");
await tl.close();
console.log("done: three runs, one per slot");
