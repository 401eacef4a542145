/**
 * Flows (dependencies), runnable: `npm run example:flow` (memory; Redis and SQS do not
 * have capability `flows` yet).
 *
 * A report waits for the pages it is made of: `tl.flow` publishes the report and its
 * three page fetches, on another lane, in one step. The report is `blocked` until every
 * fetch has ended, then runs and reads their results with `ctx.children()`. One page
 * fails; its onFailure "ignore" lets the report run anyway. A notification published
 * separately waits for the report with `dependsOn`.
 */
import { createMemoryAdapter } from "@tasklane/adapter-memory";
import { createTasklane, defineTask, UnrecoverableError } from "@tasklane/core";
import { z } from "zod";

const fetchPage = defineTask({
  name: "fetch-page",
  lane: "io",
  schema: z.object({ url: z.string() }),
  async run({ url }) {
    if (url.endsWith("/missing")) throw new UnrecoverableError(`404 for ${url}`);
    console.log(`fetched ${url}`);
    return { url, words: url.length * 10 };
  },
});

const buildReport = defineTask({
  name: "build-report",
  lane: "reports",
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
  lane: "reports",
  schema: z.object({ to: z.string() }),
  async run({ to }, ctx) {
    const [report] = await ctx.children();
    console.log(`notified ${to}: report ${report?.state} with ${JSON.stringify(report?.result)}`);
  },
});

const tl = createTasklane({
  adapter: createMemoryAdapter(),
  lanes: [{ name: "io" }, { name: "reports" }],
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
const reports = tl.lane("reports");
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
