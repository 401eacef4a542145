/**
 * A worker embedded in a node:http service, with graceful shutdown.
 *
 *   npx node --conditions=source examples/http-service.ts
 *   curl -X POST localhost:3000/thumbnails -d '{"imageId":"42"}'
 *   curl localhost:3000/health
 *
 * On SIGTERM (or SIGINT) the service stops taking requests, the worker stops fetching,
 * running jobs get up to 20 s to finish, and whatever is still running is handed back to
 * the lane for another instance. Nothing is lost.
 */
import { createServer } from "node:http";
import { setTimeout } from "node:timers/promises";
import { createTasklane, defineTask, ValidationError } from "@tasklane/core";
import { z } from "zod";
import { adapterFromEnv } from "./adapter-from-env.ts";

const makeThumbnail = defineTask({
  name: "make-thumbnail",
  lane: "default",
  schema: z.object({ imageId: z.string().min(1) }),
  timeLimitMs: 30_000,
  async run({ imageId }, ctx) {
    // Pass ctx.signal to anything that can be canceled: it aborts on time limit, lease
    // loss, cancel and shutdown.
    await setTimeout(200, undefined, { signal: ctx.signal });
    console.log(`thumbnail ${imageId} done (attempt ${ctx.attempt})`);
  },
});

const tl = createTasklane({
  adapter: await adapterFromEnv(),
  lanes: [{ name: "default", leaseMs: 60_000 }],
  tasks: [makeThumbnail],
});
const worker = tl.worker({ concurrency: 20 });
await worker.start();
// Failures of any instance's jobs, not only this one's (memory and Redis; SQS cannot).
if (tl.adapter.capabilities.lifecycleEvents) {
  await tl.subscribe((e) => {
    if (e.type === "failed") console.warn(`job ${e.jobId} on ${e.lane} went to dead letters`);
  });
}

const server = createServer(async (req, res) => {
  if (req.method === "GET" && req.url === "/health") {
    res.writeHead(200, { "content-type": "application/json" });
    res.end(JSON.stringify({ worker: worker.running, held: worker.held }));
    return;
  }
  if (req.method === "POST" && req.url === "/thumbnails") {
    let body = "";
    for await (const chunk of req) body += chunk;
    try {
      const { id } = await tl.publish(makeThumbnail, JSON.parse(body));
      res.writeHead(202, { "content-type": "application/json" });
      res.end(JSON.stringify({ id }));
    } catch (err) {
      const status = err instanceof ValidationError || err instanceof SyntaxError ? 400 : 500;
      res.writeHead(status, { "content-type": "application/json" });
      res.end(JSON.stringify({ error: (err as Error).message }));
    }
    return;
  }
  res.writeHead(404).end();
});
server.listen(Number(process.env.PORT ?? 3000), () =>
  console.log("listening on", server.address()),
);

let stopping = false;
async function shutdown(signal: string) {
  if (stopping) return;
  stopping = true;
  console.log(`${signal}: shutting down`);
  server.close(); // stop taking new requests
  await worker.stop({ graceMs: 20_000 }); // resolves when no lease is held
  await tl.close();
  process.exit(0);
}
process.on("SIGTERM", () => void shutdown("SIGTERM"));
process.on("SIGINT", () => void shutdown("SIGINT"));
