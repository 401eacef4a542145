import { runConformanceSuite } from "@tasklane/conformance";
import { afterAll } from "vitest";
import { createSqsAdapter } from "../src/index.ts";
import { sqsClient, startSqs } from "./helpers.ts";

// A real SQS-protocol server: fauxqs in-process on port 0 (or SQS_ENDPOINT).
const server = await startSqs();
const client = sqsClient(server.endpoint);
afterAll(async () => {
  client.destroy();
  await server.stop();
});

runConformanceSuite({
  name: "sqs (fauxqs)",
  createAdapter: async () => createSqsAdapter({ client }),
});
