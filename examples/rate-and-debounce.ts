/**
 * Rate limits and debounce, runnable: `npm run example:rate` (memory), or on Redis:
 *
 *   TASKLANE_ADAPTER=redis REDIS_URL=redis://127.0.0.1:6379 npm run example:rate
 *
 * 2. The lane `mail` starts at most 4 jobs in any second, across every worker: 10 jobs
 *    published at once start 4, 4 and 2 a second apart. The start times printed are the
 *    backend's (each job's `reserved` history entry), the clock the limit is kept by.
 * 1. Five publishes of one debounce key within its window make one job, which runs at the
 *    window's end with the last payload (`keep: "last"`); with `keep: "first"` (throttle)
 *    the first payload runs and the later publishes are dropped.
 *
 * The lanes are fresh per run (a random suffix), so on Redis a run never meets an
 * earlier one's jobs; they keep their finished jobs for the default retention (a day).
 */
import { randomUUID } from "node:crypto";
import { createTasklane, defineTask } from "@tasklane/core";
import { z } from "zod";
import { adapterFromEnv } from "./adapter-from-env.ts";

const run = randomUUID().slice(0, 8);
const MAIL = `mail-${run}`;
const INDEX = `index-${run}`;
const WINDOW_MS = 1_000;

const sendMail = defineTask({
  name: "send-mail",
  lane: MAIL,
  schema: z.object({ to: z.string() }),
  async run() {},
});

const ran: string[] = [];
const reindex = defineTask({
  name: "reindex",
  lane: INDEX,
  schema: z.object({ user: z.string(), version: z.number() }),
  async run({ user, version }) {
    ran.push(`${user} v${version}`);
  },
});

const tl = createTasklane({
  adapter: await adapterFromEnv(),
  lanes: [{ name: MAIL, rateLimit: { max: 4, durationMs: WINDOW_MS } }, { name: INDEX }],
  tasks: [sendMail, reindex],
});
const settled = async (lane: string, n: number) => {
  for (;;) {
    const c = await tl.lane(lane).counts();
    if (c.succeeded >= n) return;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
};

// 1. Debounce: five publishes of one key within a second (before a worker runs, so none
// starts early: a job that has started closes its window).
const statuses: string[] = [];
for (let version = 1; version <= 5; version++) {
  const r = await tl.publish(
    reindex,
    { user: "ada", version },
    { debounce: { key: "ada", ms: 1_000 } },
  );
  statuses.push(r.status);
}
console.log(`debounce: ${statuses.join(", ")}`);
// Throttle: the first payload wins.
for (let version = 1; version <= 3; version++) {
  await tl.publish(
    reindex,
    { user: "bob", version },
    { debounce: { key: "bob", ms: 1_000, keep: "first" } },
  );
}
const worker = tl.worker({ concurrency: 20 });
await worker.start();
await settled(INDEX, 2);
console.log(`debounce: ran ${ran.sort().join(", ")}`);

// 2. Rate limit: 10 jobs at once.
const mails = await tl.publishMany(
  sendMail,
  Array.from({ length: 10 }, (_, i) => ({ payload: { to: `user${i}@example.com` } })),
);
await settled(MAIL, 10);
const starts: number[] = [];
for (const { id } of mails) {
  const info = await tl.lane(MAIL).get(id);
  const reserved = info?.history.find((e) => e.event === "reserved");
  if (reserved) starts.push(reserved.at);
}
starts.sort((a, b) => a - b);
const first = starts[0] ?? 0;
console.log(`mail: starts at +ms ${starts.map((s) => s - first).join(", ")}`);
// Starts grouped by window: each group is the starts within WINDOW_MS of its first one.
const groups: number[] = [];
let groupFrom = Number.NEGATIVE_INFINITY;
for (const s of starts) {
  if (s >= groupFrom + WINDOW_MS) {
    groups.push(0);
    groupFrom = s;
  }
  groups[groups.length - 1] = (groups.at(-1) ?? 0) + 1;
}
console.log(`mail: ${starts.length} jobs started ${groups.join(" + ")}, one window apart`);

await worker.stop();
await tl.close();
console.log("done: 8 publishes, 2 runs; 4 starts a window");
