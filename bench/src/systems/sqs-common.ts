/**
 * Shared by the SQS peers: queue creation, one-by-one and batched publishing with the
 * bare SDK (sqs-consumer has no producer; users pair it with the SDK like this).
 */
import {
  CreateQueueCommand,
  DeleteQueueCommand,
  SendMessageBatchCommand,
  SendMessageCommand,
  type SQSClient,
} from "@aws-sdk/client-sqs";
import type { BenchJob } from "../types.ts";

export async function createQueue(client: SQSClient, name: string): Promise<string> {
  const { QueueUrl } = await client.send(
    new CreateQueueCommand({ QueueName: name, Attributes: { VisibilityTimeout: "30" } }),
  );
  if (!QueueUrl) throw new Error(`CreateQueue ${name} returned no URL`);
  return QueueUrl;
}

export async function deleteQueue(client: SQSClient, queueUrl: string): Promise<void> {
  await client.send(new DeleteQueueCommand({ QueueUrl: queueUrl })).catch(() => {});
}

export async function sendOne(client: SQSClient, queueUrl: string, job: BenchJob): Promise<void> {
  await client.send(
    new SendMessageCommand({ QueueUrl: queueUrl, MessageBody: JSON.stringify({ i: job.i }) }),
  );
}

/** SendMessageBatch of 10, all batches of the chunk in parallel; failed entries throw. */
export async function sendMany(
  client: SQSClient,
  queueUrl: string,
  jobs: BenchJob[],
): Promise<void> {
  const batches: Promise<void>[] = [];
  for (let start = 0; start < jobs.length; start += 10) {
    const entries = jobs.slice(start, start + 10).map((job) => ({
      Id: String(job.i),
      MessageBody: JSON.stringify({ i: job.i }),
    }));
    batches.push(
      client
        .send(new SendMessageBatchCommand({ QueueUrl: queueUrl, Entries: entries }))
        .then((output) => {
          if (output.Failed && output.Failed.length > 0) {
            throw new Error(`SendMessageBatch: ${output.Failed.length} entries failed`);
          }
        }),
    );
  }
  await Promise.all(batches);
}
