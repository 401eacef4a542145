/**
 * Flows (dependencies), runnable: `npm run example:flow` (memory), or on Redis:
 *
 *   TASKLANE_ADAPTER=redis REDIS_URL=redis://127.0.0.1:6379 npm run example:flow
 *
 * (SQS has no capability `flows`.)
 *
 * A report waits for the pages it is made of: `tl.flow` publishes the report and its
 * three page fetches, on another lane, in one step. The report is `blocked` until every
 * fetch has ended, then runs and reads their results with `ctx.children()`. One page
 * fails; its onFailure "ignore" lets the report run anyway. A notification published
 * separately waits for the report with `dependsOn`.
 */
import { randomUUID } from "node:crypto";
import { createTasklane, defineTask, UnrecoverableError } from "@tasklane/core";
import { z } from "zod";
import { adapterFromEnv } from "./adapter-from-env.ts";

// Lanes "io" and "reports", fresh per run (a random suffix): on Redis a run never meets an
// earlier one's jobs.
const run = randomUUID().slice(0, 8);
const IO = `io-${run}`;
const REPORTS = `reports-${run}`;

const fetchPage = defineTask({
  name: "fetch-page",
  lane: IO,
  schema: z.object({ url: z.string() }),
  async run({ url }) {
    if (url.endsWith("/missing")) throw new UnrecoverableError(`404 for ${url}`);
    console.log(`fetched ${url}`);
    return { url, words: url.length * 10 };
  },
});

const buildReport = defineTask({
  name: "build-report",
  lane: REPORTS,
  schema: z.object({ title: z.string() }),
  async run({ title }, ctx) {
    const pages = await ctx.children();
    const fetched = pages.filter((p) => p.state === "succeeded");
    const words = fetched.reduce((n, p) => n + (p.result as { words: number }).words, 0);
    console.log(
      `report "${title}": ${fetched.length} of ${pages.length} pages (${pages
        .map((p) => p.state)
        .join(", ")}), ${words} words`,
    );
    return { words };
  },
});

const notify = defineTask({
  name: "notify",
  lane: REPORTS,
  schema: z.object({ to: z.string() }),
  async run({ to }, ctx) {
    const [report] = await ctx.children();
    console.log(`notified ${to}: report ${report?.state} with ${JSON.stringify(report?.result)}`);
  },
});

const tl = createTasklane({
  adapter: await adapterFromEnv(),
  lanes: [{ name: IO }, { name: REPORTS }],
  tasks: [fetchPage, buildReport, notify],
});

const flow = await tl.flow({
  task: buildReport,
  payload: { title: "weekly" },
  children: [
    { task: fetchPage, payload: { url: "https://example.com/a" } },
    { task: fetchPage, payload: { url: "https://example.com/bb" } },
    { task: fetchPage, payload: { url: "https://example.com/missing" }, onFailure: "ignore" },
  ],
});
const note = await tl.publish(notify, { to: "ops" }, { dependsOn: [flow.id] });
const reports = tl.lane(REPORTS);
console.log(`published: report ${(await reports.get(flow.id))?.state}, 3 fetches on lane io`);
console.log(`blocked in lane reports: ${(await reports.counts()).blocked}`);

const worker = tl.worker();
await worker.start();
// The memory adapter's timers do not keep the process alive (unref'd): this does.
const alive = setInterval(() => {}, 1_000);
await tl.waitFor(note.id);
clearInterval(alive);
await worker.stop();

console.log(
  `report ${(await reports.get(flow.id))?.state}, notify ${(await reports.get(note.id))?.state}`,
);
await tl.close();
console.log("done: the pages first, then the report, then the notification");
