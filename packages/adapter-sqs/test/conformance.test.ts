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

// One SQS queue per lane (no job-level priority), and a lane of three priority bands
// (`-high`, base, `-low`): reserve then drains bands in order and watches empty ones.
for (const priorityLanes of [false, true]) {
  runConformanceSuite({
    name: priorityLanes ? "sqs (fauxqs, priorityLanes)" : "sqs (fauxqs)",
    createAdapter: async () => createSqsAdapter({ client, priorityLanes }),
    waitingPolls: async (lane) => polls.waiting(lane.name),
  });
}
