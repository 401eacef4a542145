import { CreateQueueCommand, GetQueueUrlCommand, SendMessageCommand } from "@aws-sdk/client-sqs";
import { type FauxqsServer, startFauxqs } from "fauxqs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createCountingSqsClient, snapshotSqsRequests, totalSqsRequests } from "./sqs-counter.ts";

// fauxqs in-process on port 0: the counter sits in the SDK's middleware stack.
describe("SQS request counter", () => {
  let server: FauxqsServer;

  beforeAll(async () => {
    server = await startFauxqs({ port: 0, logger: false });
  });

  afterAll(async () => {
    await server.stop();
  });

  it("counts every request by command", async () => {
    const client = createCountingSqsClient(`http://127.0.0.1:${server.port}`, "us-east-1");
    const before = totalSqsRequests();
    const { QueueUrl } = await client.send(new CreateQueueCommand({ QueueName: "counted" }));
    await client.send(new SendMessageCommand({ QueueUrl, MessageBody: "a" }));
    await client.send(new SendMessageCommand({ QueueUrl, MessageBody: "b" }));
    await client.send(new GetQueueUrlCommand({ QueueName: "counted" }));
    expect(totalSqsRequests() - before).toBe(4);
    expect(snapshotSqsRequests()).toMatchObject({
      CreateQueueCommand: 1,
      SendMessageCommand: 2,
      GetQueueUrlCommand: 1,
    });
    client.destroy();
  });
});
