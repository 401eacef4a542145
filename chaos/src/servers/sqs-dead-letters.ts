/**
 * The dead letters of SQS lanes, read from their dead-letter queues: the adapter
 * dead-letters a job that stalled too often when it receives it, so no worker's ledger
 * shows those. Read at the end of a run (each message once: a long visibility timeout).
 */
import { ListQueuesCommand, ReceiveMessageCommand, SQSClient } from "@aws-sdk/client-sqs";
import type { ChaosSqs } from "./fauxqs-server.ts";

/** Every dead letter in the SQS lane's dead-letter queue: job id → reason. */
export async function sqsDeadLetters(
  sqs: ChaosSqs,
  queuePrefix: string,
): Promise<Map<string, string>> {
  const dead = new Map<string, string>();
  const client = new SQSClient({
    endpoint: sqs.endpoint,
    region: sqs.region,
    credentials: { accessKeyId: "chaos", secretAccessKey: "chaos" },
  });
  try {
    const queues = await client.send(new ListQueuesCommand({ QueueNamePrefix: queuePrefix }));
    for (const url of queues.QueueUrls ?? []) {
      if (!url.endsWith("-dlq")) continue;
      // Received with a long visibility timeout: each message once, until none is left.
      for (;;) {
        const out = await client.send(
          new ReceiveMessageCommand({
            QueueUrl: url,
            MaxNumberOfMessages: 10,
            VisibilityTimeout: 600,
            WaitTimeSeconds: 0,
            MessageAttributeNames: ["All"],
          }),
        );
        const messages = out.Messages ?? [];
        if (messages.length === 0) break;
        for (const m of messages) {
          const tl = m.MessageAttributes?.tl?.StringValue;
          const id = tl === undefined ? undefined : (JSON.parse(tl) as { id?: string }).id;
          const reason = m.MessageAttributes?.["tl-error-reason"]?.StringValue ?? "?";
          if (id !== undefined) dead.set(id, reason);
        }
      }
    }
  } finally {
    client.destroy();
  }
  return dead;
}
