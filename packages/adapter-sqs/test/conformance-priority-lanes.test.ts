import { runConformanceSuite } from "@tasklane/conformance";
import { afterAll } from "vitest";
import { createSqsAdapter } from "../src/index.ts";
import { sqsClient, startSqs, watchLongPolls } from "./helpers.ts";

// A real SQS-protocol server: fauxqs in-process on port 0 (or SQS_ENDPOINT).
const server = await startSqs();
const client = sqsClient(server.endpoint);
const polls = watchLongPolls(client);
afterAll(async () => {
  polls.dispose();
  client.destroy();
  await server.stop();
});

// A lane of three priority bands (`-high`, base, `-low`): reserve drains bands in order and
// watches empty ones. The layout with one queue per lane runs in conformance.test.ts.
runConformanceSuite({
  name: "sqs (fauxqs, priorityLanes)",
  createAdapter: async () => createSqsAdapter({ client, priorityLanes: true }),
  waitingPolls: async (lane) => polls.waiting(lane.name),
});
