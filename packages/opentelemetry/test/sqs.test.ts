/**
 * Telemetry on SQS (fauxqs, a real SQS-protocol server, in-process): the trace and metrics
 * scenarios, the trace context travelling as a message attribute.
 */
import { createSqsAdapter } from "@tasklane/adapter-sqs";
import { afterAll, afterEach, beforeAll, describe, it } from "vitest";
import { type SqsServer, sqsClient, startSqs, uniqueName } from "../../adapter-sqs/test/helpers.ts";
import { createOtel, type Otel } from "./helpers.ts";
import { metricsEqualTheQueue, traceFromPublishToRun } from "./scenarios.ts";

let sqs: SqsServer;
beforeAll(async () => {
  sqs = await startSqs();
});
afterAll(async () => {
  await sqs?.stop();
});
const otels: Otel[] = [];
afterEach(async () => {
  await Promise.all(otels.splice(0).map((o) => o.shutdown()));
});
const otel = () => {
  const o = createOtel();
  otels.push(o);
  return o;
};
const adapter = () => createSqsAdapter({ client: sqsClient(sqs.endpoint) });

describe("telemetry on SQS", () => {
  it("makes one trace from publish to run, the handler's spans inside it", {
    timeout: 30_000,
  }, async () => {
    await traceFromPublishToRun(adapter(), otel(), { namespace: uniqueName("t"), leaseMs: 30_000 });
  });

  it("records metrics equal to what the queue and the worker report", {
    timeout: 30_000,
  }, async () => {
    await metricsEqualTheQueue(adapter(), otel(), { namespace: uniqueName("t"), leaseMs: 30_000 });
  });
});
