import { GetQueueUrlCommand, SendMessageCommand, type SQSClient } from "@aws-sdk/client-sqs";
import { createTasklane, defineTask } from "@tasklane/core";
import { afterAll, beforeAll, expect, it } from "vitest";
import { createSqsAdapter } from "../src/index.ts";
import { countSqsRequests } from "../src/internal.ts";
import { type SqsServer, sqsClient, startSqs, uniqueName, waitFor } from "./helpers.ts";

let server: SqsServer;
let client: SQSClient;
beforeAll(async () => {
  server = await startSqs();
  client = sqsClient(server.endpoint);
});
afterAll(async () => {
  client.destroy();
  await server.stop();
});

/** A Standard Schema that accepts `{ n: number }`. */
const schema = {
  "~standard": {
    version: 1 as const,
    vendor: "test",
    validate: (value: unknown) =>
      value !== null &&
      typeof value === "object" &&
      typeof (value as { n?: unknown }).n === "number"
        ? { value: value as { n: number } }
        : { issues: [{ message: "expected { n: number }" }] },
  },
};

it("a worker with concurrency 100 keeps 100 jobs running and survives a foreign message", async () => {
  const lane = uniqueName("w");
  const done = new Set<number>();
  let running = 0;
  let peak = 0;
  const work = defineTask({
    name: "work",
    lane,
    schema,
    async run(payload: { n: number }) {
      running++;
      peak = Math.max(peak, running);
      await new Promise((r) => setTimeout(r, 100));
      running--;
      done.add(payload.n);
    },
  });
  const counter = countSqsRequests(client);
  const tl = createTasklane({
    adapter: createSqsAdapter({ client }),
    lanes: [{ name: lane, leaseMs: 30_000 }],
    tasks: [work],
  });
  await tl.publishMany(
    work,
    Array.from({ length: 300 }, (_, n) => ({ payload: { n } })),
  );
  const { QueueUrl } = await client.send(new GetQueueUrlCommand({ QueueName: lane }));
  await client.send(new SendMessageCommand({ QueueUrl, MessageBody: "<xml>not ours</xml>" }));
  const worker = tl.worker({ concurrency: 100 });
  await worker.start();
  await waitFor(() => done.size === 300, 20_000);
  await waitFor(async () => (await tl.lane(lane).counts()).failed === 1, 5000);
  expect(worker.running).toBe(true);
  expect(peak).toBeGreaterThan(10);
  expect(peak).toBeLessThanOrEqual(100);
  await tl.close();
  // Publish + process of 300 jobs in full batches: about 0.3 requests per job.
  expect(counter.commands / 300).toBeLessThan(0.6);
  counter.dispose();
}, 30_000);

it("a worker draining a backlog keeps several receives in flight, not one long poll at a time", async () => {
  // The worker long-polls (waitMs > 0) whenever its last batch was shorter than its
  // limit; on a busy lane the adapter must still fan out short receives.
  const lane = uniqueName("b");
  const total = 1_000;
  let done = 0;
  const work = defineTask({
    name: "work",
    lane,
    schema,
    async run() {
      done++;
    },
  });
  let inFlight = 0;
  let peak = 0;
  let longPolls = 0;
  const name = "countReceivesInFlight";
  client.middlewareStack.add(
    (next, context) => async (args) => {
      if (context.commandName !== "ReceiveMessageCommand") return next(args);
      if (((args.input as { WaitTimeSeconds?: number }).WaitTimeSeconds ?? 0) > 0) longPolls++;
      inFlight++;
      peak = Math.max(peak, inFlight);
      try {
        return await next(args);
      } finally {
        inFlight--;
      }
    },
    { step: "initialize", name },
  );
  const tl = createTasklane({
    adapter: createSqsAdapter({ client }),
    lanes: [{ name: lane, leaseMs: 30_000, batchSize: 100, longPollMs: 1_000 }],
    tasks: [work],
  });
  try {
    await tl.publishMany(
      work,
      Array.from({ length: total }, (_, n) => ({ payload: { n } })),
    );
    const worker = tl.worker({ concurrency: 100 });
    await worker.start();
    await waitFor(() => done === total, 20_000);
    // Before: every reserve after a short batch was one long poll of 10 (peak 1, ~100 polls).
    expect(peak).toBeGreaterThanOrEqual(4);
    expect(longPolls).toBeLessThanOrEqual(5);
  } finally {
    await tl.close();
    client.middlewareStack.remove(name);
  }
}, 30_000);
