/**
 * The management API inside a node:http service, beside the service's own routes, with
 * a worker running and a few jobs that fail, so there is something to look at.
 *
 *   npm run example:api
 *
 *   curl -H 'authorization: Bearer reader' localhost:3000/tasklane/lanes
 *   curl -H 'authorization: Bearer reader' 'localhost:3000/tasklane/lanes/default/jobs?state=failed'
 *   curl -X POST -H 'authorization: Bearer writer' -H 'content-type: application/json' \
 *     -d '{"filter":{"state":"failed"}}' localhost:3000/tasklane/lanes/default/jobs/retry
 *   curl -X POST -H 'authorization: Bearer writer' -H 'content-type: application/json' \
 *     -H 'idempotency-key: order-42' -d '{"payload":{"to":"ada@example.com","subject":"Hi"}}' \
 *     localhost:3000/tasklane/tasks/send-email/jobs
 *   curl -N -H 'authorization: Bearer reader' localhost:3000/tasklane/events
 *   curl localhost:3000/tasklane/openapi.json -H 'authorization: Bearer reader'
 *
 * The dashboard (@tasklane/dashboard) is at http://localhost:3000/tasklane/ui/: sign in
 * with the token writer (or reader, to look without changing anything).
 *
 * TASKLANE_ADAPTER=redis (REDIS_URL) or sqs picks another backend (adapter-from-env.ts).
 * Tokens here are fixed strings for the example; use your own authentication.
 */
import { createServer } from "node:http";
import { setTimeout } from "node:timers/promises";
import { createTasklane, defineTask } from "@tasklane/core";
import { createDashboard } from "@tasklane/dashboard";
import { createManagementHandler } from "@tasklane/http";
import { createNodeListener } from "@tasklane/http/node";
import { z } from "zod";
import { adapterFromEnv } from "./adapter-from-env.ts";

const sendEmail = defineTask({
  name: "send-email",
  lane: "default",
  schema: z.object({ to: z.email(), subject: z.string().min(1) }),
  retry: { maxAttempts: 2, baseMs: 500 },
  async run({ to }, ctx) {
    await setTimeout(50, undefined, { signal: ctx.signal });
    // Some addresses bounce, so the dead letter set has something in it.
    if (to.startsWith("bounce")) throw new Error(`mailbox ${to} does not exist`);
  },
});

const tl = createTasklane({
  adapter: await adapterFromEnv(),
  lanes: [
    { name: "high", priority: 100 },
    { name: "default", priority: 40 },
  ],
  tasks: [sendEmail],
});
const worker = tl.worker({ concurrency: 10 });
await worker.start();
await tl.publishMany(
  sendEmail,
  Array.from({ length: 20 }, (_, i) => ({
    payload: { to: `${i % 4 === 0 ? "bounce" : "user"}${i}@example.com`, subject: "Welcome" },
  })),
);

const TOKENS: Record<string, "read" | "write"> = { reader: "read", writer: "write" };
const api = createNodeListener(
  createManagementHandler({
    tasklane: tl,
    basePath: "/tasklane",
    // Answer the caller's scope: "write" includes read; false is 401, "none" 403.
    authorize: (request) => {
      const token = request.headers.get("authorization")?.replace(/^Bearer /, "");
      return (token !== undefined && TOKENS[token]) || false;
    },
    // The web UI at /tasklane/ui/; it asks for a token and sends it as a bearer token.
    dashboard: createDashboard(),
  }),
);

const server = createServer((req, res) => {
  // The API answers under /tasklane; everything else is the service's own.
  api(req, res, () => {
    if (req.url === "/health") {
      res.writeHead(200, { "content-type": "application/json" });
      res.end(JSON.stringify({ worker: worker.running }));
      return;
    }
    res.writeHead(404).end();
  });
});
const port = Number(process.env.PORT ?? 3000);
server.listen(port, () =>
  console.log(
    `management API on http://localhost:${port}/tasklane, dashboard on http://localhost:${port}/tasklane/ui/ (tokens: reader, writer)`,
  ),
);

async function shutdown() {
  server.close();
  server.closeAllConnections(); // event streams stay open otherwise
  await worker.stop({ graceMs: 5_000 });
  await tl.close();
  process.exit(0);
}
process.on("SIGTERM", () => void shutdown());
process.on("SIGINT", () => void shutdown());
