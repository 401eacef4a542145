/**
 * For working on the dashboard: the management API and the dashboard over a memory
 * adapter with a steady, varied load (three lanes, a few failures of different kinds,
 * delayed jobs), served from source, so a page reload shows the client as it is now.
 *
 *   npx node --conditions=source packages/dashboard/scripts/preview.ts   # PORT, default 3000
 *
 * Anonymous writes are allowed: it listens on 127.0.0.1 only.
 */
import { createServer } from "node:http";
import { setTimeout } from "node:timers/promises";
import { createMemoryAdapter } from "@tasklane/adapter-memory";
import { createTasklane, defineTask, UnrecoverableError } from "@tasklane/core";
import { createManagementHandler } from "@tasklane/http";
import { createNodeListener } from "@tasklane/http/node";
import { z } from "zod";
import { createDashboard } from "../src/index.ts";

const payload = z.object({ to: z.string(), workMs: z.number(), fail: z.string().optional() });
const run = async (p: z.infer<typeof payload>, ctx: { signal: AbortSignal; attempt: number }) => {
  await setTimeout(p.workMs, undefined, { signal: ctx.signal });
  if (p.fail === "timeout") throw new Error(`upstream ${p.to} timed out after 30 s`);
  if (p.fail === "bounce") throw new UnrecoverableError(`mailbox ${p.to} does not exist`);
  if (p.fail === "flaky" && ctx.attempt === 1) throw new Error("connection reset");
};
const tasks = [
  defineTask({
    name: "send-email",
    lane: "default",
    schema: payload,
    retry: { maxAttempts: 2, baseMs: 200 },
    run,
  }),
  defineTask({
    name: "notify",
    lane: "high",
    schema: payload,
    retry: { maxAttempts: 3, baseMs: 100 },
    run,
  }),
  defineTask({
    name: "build-report",
    lane: "low",
    schema: payload,
    retry: { maxAttempts: 2, baseMs: 500 },
    run,
  }),
];
const tl = createTasklane({
  adapter: createMemoryAdapter(),
  lanes: [
    { name: "high", priority: 100 },
    { name: "default", priority: 40 },
    { name: "low", priority: 5, maxConcurrency: 4 },
  ],
  tasks,
});
await tl.worker({ concurrency: 20 }).start();

const listener = createNodeListener(
  createManagementHandler({
    tasklane: tl,
    basePath: "/tasklane",
    allowAnonymousWrites: true,
    dashboard: createDashboard(),
  }),
);
const server = createServer((req, res) => listener(req, res, () => res.writeHead(404).end()));
const port = Number(process.env.PORT ?? 3000);
server.listen(port, "127.0.0.1", () =>
  console.log(`dashboard: http://127.0.0.1:${port}/tasklane/ui/`),
);

let n = 0;
for (;;) {
  for (const task of tasks) {
    const r = Math.random();
    const fail = r < 0.03 ? "timeout" : r < 0.05 ? "bounce" : r < 0.1 ? "flaky" : undefined;
    const delayMs = Math.random() < 0.1 ? 30_000 + Math.random() * 60_000 : 0;
    await tl.publish(
      task,
      {
        to: `user${n++}@example.com`,
        workMs: Math.round(5 + Math.random() * (task.name === "build-report" ? 800 : 80)),
        ...(fail ? { fail } : {}),
      },
      delayMs > 0 ? { delayMs } : {},
    );
  }
  await setTimeout(60);
}
