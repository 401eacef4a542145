/**
 * A bare SDK loop on SQS: the physical ceiling on fauxqs. ceil(concurrency / 10) pollers
 * (1 to 10) each receive up to 10 messages (long poll), run them under a shared limit of
 * `concurrency` handlers, and delete the batch with one DeleteMessageBatch. No retries,
 * no heartbeats, no dead letters.
 */
import {
  DeleteMessageBatchCommand,
  type Message,
  ReceiveMessageCommand,
} from "@aws-sdk/client-sqs";
import type { BenchSystem, JobHooks, SystemUnderTest } from "../types.ts";
import { createQueue, deleteQueue, sendMany, sendOne } from "./sqs-common.ts";

export const system: BenchSystem = {
  async setup(env) {
    const client = env.createSqsClient();
    const queueUrl = await createQueue(client, env.queueName);
    const abort = new AbortController();
    const pollers: Promise<void>[] = [];

    /** A counting semaphore: at most `limit` handlers at once across pollers. */
    let limit = 1;
    let active = 0;
    const waiters: Array<() => void> = [];
    const acquire = async () => {
      while (active >= limit) await new Promise<void>((resolve) => waiters.push(resolve));
      active++;
    };
    const release = () => {
      active--;
      waiters.shift()?.();
    };

    const handle = async (message: Message, hooks: JobHooks) => {
      await acquire();
      try {
        hooks.onStart((JSON.parse(message.Body ?? "{}") as { i: number }).i);
      } finally {
        release();
      }
    };

    const poll = async (hooks: JobHooks) => {
      while (!abort.signal.aborted) {
        let messages: Message[];
        try {
          const output = await client.send(
            new ReceiveMessageCommand({
              QueueUrl: queueUrl,
              MaxNumberOfMessages: 10,
              WaitTimeSeconds: 20,
            }),
            { abortSignal: abort.signal },
          );
          messages = output.Messages ?? [];
        } catch (error) {
          if (abort.signal.aborted) return;
          throw error;
        }
        if (messages.length === 0) continue;
        await Promise.all(messages.map((message) => handle(message, hooks)));
        const output = await client.send(
          new DeleteMessageBatchCommand({
            QueueUrl: queueUrl,
            Entries: messages.map((message, n) => ({
              Id: String(n),
              ReceiptHandle: message.ReceiptHandle,
            })),
          }),
        );
        const failed = new Set((output.Failed ?? []).map((entry) => entry.Id));
        messages.forEach((message, n) => {
          if (!failed.has(String(n)))
            hooks.onDone((JSON.parse(message.Body ?? "{}") as { i: number }).i);
        });
      }
    };

    const sut: SystemUnderTest = {
      publish: (job) => sendOne(client, queueUrl, job),
      publishMany: (jobs) => sendMany(client, queueUrl, jobs),
      async process({ concurrency, hooks }) {
        limit = concurrency;
        const count = Math.min(10, Math.max(1, Math.ceil(concurrency / 10)));
        for (let n = 0; n < count; n++) pollers.push(poll(hooks).catch(() => {}));
      },
      async teardown() {
        abort.abort();
        await Promise.all(pollers);
        await deleteQueue(client, queueUrl);
        client.destroy();
      },
    };
    return sut;
  },
};
