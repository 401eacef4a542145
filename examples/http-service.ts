/**
 * A worker embedded in a node:http service, with graceful shutdown.
 *
 *   npm run example:http                                   # memory backend, port 3000
 *   TASKLANE_ADAPTER=redis REDIS_URL=redis://127.0.0.1:6379 npm run example:http
 *   curl -X POST localhost:3000/thumbnails -d '{"imageId":"42"}'
 *   curl localhost:3000/health
 *
 * PORT (default 3000; 0 picks a free one) and WORK_MS (how long one simulated thumbnail
 * takes, default 200) are read from the environment; the backend as in adapter-from-env.ts.
 * The npm script runs node in npm's place (`exec`), so SIGTERM and Ctrl-C reach this
 * process; with `npx node examples/http-service.ts` a SIGTERM sent to npx stops npx only.
 *
 * On SIGTERM (or SIGINT) the service stops taking requests and then:
 * - on Redis or SQS, the worker stops fetching, hands back the jobs it holds that did not
 *   start, gives running ones up to 20 s to finish and hands back what still runs. Every
 *   accepted job either ran or waits in the lane for another instance.
 * - on memory, the lane lives in this process and ends with it, so handing jobs back
 *   would lose them. The worker first drains: it keeps running until every accepted job
 *   has run (retries included), for up to 20 s. Only what is still pending after that is
 *   lost, and the service says how many and exits with code 1.
 */
import { createServer } from "node:http";
import { setTimeout } from "node:timers/promises";
import { createTasklane, defineTask, ValidationError } from "@tasklane/core";
import { z } from "zod";
import { adapterFromEnv, backendFromEnv } from "./adapter-from-env.ts";

const GRACE_MS = 20_000;
const WORK_MS = Number(process.env.WORK_MS ?? 200);

const makeThumbnail = defineTask({
  name: "make-thumbnail",
  lane: "default",
  schema: z.object({ imageId: z.string().min(1) }),
  timeLimitMs: 30_000,
  async run({ imageId }, ctx) {
    // Pass ctx.signal to anything that can be canceled: it aborts on time limit, lease
    // loss, cancel and shutdown.
    await setTimeout(WORK_MS, undefined, { signal: ctx.signal });
    console.log(`thumbnail ${imageId} done (job ${ctx.jobId}, attempt ${ctx.attempt})`);
  },
});

const backend = backendFromEnv();
const tl = createTasklane({
  adapter: await adapterFromEnv(),
  lanes: [{ name: "default", leaseMs: 60_000 }],
  tasks: [makeThumbnail],
});
const lane = tl.lane("default");
const worker = tl.worker({ concurrency: 20 });
await worker.start();
// Failures of any instance's jobs, not only this one's (memory and Redis; SQS cannot).
if (tl.adapter.capabilities.lifecycleEvents) {
  await tl.subscribe((e) => {
    if (e.type === "failed") console.warn(`job ${e.jobId} on ${e.lane} went to dead letters`);
  });
}

let stopping = false;
/** Publishes under way: a job accepted while shutdown begins must still be waited for. */
let publishing = 0;

const server = createServer(async (req, res) => {
  if (req.method === "GET" && req.url === "/health") {
    res.writeHead(200, { "content-type": "application/json" });
    res.end(JSON.stringify({ worker: worker.running, held: worker.held, stopping }));
    return;
  }
  if (req.method === "POST" && req.url === "/thumbnails") {
    let body = "";
    for await (const chunk of req) body += chunk;
    // Checked after the body arrived, right before publishing: once shutdown has begun,
    // a job accepted now might be published after the drain finished looking.
    if (stopping) {
      res.writeHead(503, { "content-type": "application/json", connection: "close" });
      res.end(JSON.stringify({ error: "shutting down" }));
      return;
    }
    publishing++;
    try {
      const { id } = await tl.publish(makeThumbnail, JSON.parse(body));
      res.writeHead(202, { "content-type": "application/json" });
      res.end(JSON.stringify({ id }));
    } catch (err) {
      const status = err instanceof ValidationError || err instanceof SyntaxError ? 400 : 500;
      res.writeHead(status, { "content-type": "application/json" });
      res.end(JSON.stringify({ error: (err as Error).message }));
    } finally {
      publishing--;
    }
    return;
  }
  res.writeHead(404).end();
});
server.listen(Number(process.env.PORT ?? 3000), () => {
  const address = server.address();
  const port = typeof address === "object" && address ? address.port : address;
  console.log(`listening on http://localhost:${port} (backend: ${backend})`);
});

/** Jobs of the lane not finished yet: waiting, delayed (a retry's backoff) or running. */
async function pending(): Promise<number> {
  const c = await lane.counts();
  return c.waiting + c.delayed + c.active;
}

/**
 * Memory only: let the worker run every accepted job before it stops, until `deadline`.
 * Polls the lane's exact counts (cheap in memory) rather
 * than trusting one event: a failed attempt goes back as delayed and must run again.
 */
async function drain(deadline: number): Promise<void> {
  for (;;) {
    if (publishing + (await pending()) === 0 || Date.now() >= deadline) return;
    await setTimeout(Math.min(100, deadline - Date.now()));
  }
}

async function shutdown(signal: string) {
  // Repeats are ignored: Ctrl-C under `npm run` arrives twice (from the terminal and
  // forwarded by npm), and a second signal must not cut the drain short.
  if (stopping) return;
  stopping = true;
  const startedAt = Date.now();
  const deadline = startedAt + GRACE_MS;
  console.log(`${signal}: shutting down`);
  server.close(); // no new connections; requests on open ones get 503 from here on
  if (backend === "memory") {
    const left = publishing + (await pending());
    console.log(`memory backend: ${left} jobs pending, running them before exit`);
    await drain(deadline);
  }
  // Hands back what did not start; running jobs get the rest of the grace period.
  await worker.stop({ graceMs: Math.max(0, deadline - Date.now()) });
  let lost = 0;
  if (backend === "memory") {
    // Anything still pending, or handed back just now, lives only in this process.
    lost = publishing + (await pending());
    if (lost > 0) console.error(`${lost} accepted jobs did not run and are lost`);
    else console.log(`drained in ${Date.now() - startedAt} ms: every accepted job ran`);
  } else if (tl.adapter.capabilities.exactCounts) {
    const c = await lane.counts();
    console.log(`stopped: ${c.waiting + c.delayed} jobs wait in the lane for another instance`);
  } else {
    console.log("stopped: jobs not run wait in the lane for another instance");
  }
  await tl.close();
  process.exit(lost > 0 ? 1 : 0);
}
process.on("SIGTERM", () => void shutdown("SIGTERM"));
process.on("SIGINT", () => void shutdown("SIGINT"));
