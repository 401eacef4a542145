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

// One SQS queue per lane (no job-level priority). The layout with priority bands runs in
// conformance-priority-lanes.test.ts: two files, so vitest runs them side by side.
runConformanceSuite({
  name: "sqs (fauxqs)",
  createAdapter: async () => createSqsAdapter({ client, priorityLanes: false }),
  waitingPolls: async (lane) => polls.waiting(lane.name),
});
