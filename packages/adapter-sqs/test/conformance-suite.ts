/**
 * The conformance suite against fauxqs, for one queue layout: one SQS queue per lane (no
 * job-level priority), or a lane of three priority bands (`-high`, base, `-low`) that
 * reserve drains in order, watching the empty ones. Each layout has a test file of its
 * own, so vitest runs them side by side.
 */
import { runConformanceSuite } from "@tasklane/conformance";
import { afterAll } from "vitest";
import { createSqsAdapter } from "../src/index.ts";
import { sqsClient, startSqs, watchLongPolls } from "./helpers.ts";

export async function runSqsConformance(priorityLanes: boolean): Promise<void> {
  // A real SQS-protocol server: fauxqs in-process on port 0 (or SQS_ENDPOINT).
  const server = await startSqs();
  const client = sqsClient(server.endpoint);
  const polls = watchLongPolls(client);
  afterAll(async () => {
    polls.dispose();
    client.destroy();
    await server.stop();
  });
  runConformanceSuite({
    name: priorityLanes ? "sqs (fauxqs, priorityLanes)" : "sqs (fauxqs)",
    createAdapter: async () => createSqsAdapter({ client, priorityLanes }),
    waitingPolls: async (lane) => polls.waiting(lane.name),
  });
}
