/**
 * sqs-consumer 15 on SQS: the SQS baseline. One Consumer runs the messages of one
 * receive (up to `batchSize` 10) concurrently and polls again when they are all done,
 * so concurrency c uses ceil(c / 10) consumers with batchSize min(c, 10). Each message is
 * deleted with its own DeleteMessage, as sqs-consumer does with `handleMessage`.
 * Publishing uses the bare SDK (sqs-consumer has no producer).
 */
import type { Message } from "@aws-sdk/client-sqs";
import { Consumer } from "sqs-consumer";
import type { BenchSystem, SystemUnderTest } from "../types.ts";
import { createQueue, deleteQueue, sendMany, sendOne } from "./sqs-common.ts";

export const system: BenchSystem = {
  async setup(env) {
    const client = env.createSqsClient();
    const queueUrl = await createQueue(client, env.queueName);
    const consumers: Consumer[] = [];
    const sut: SystemUnderTest = {
      publish: (job) => sendOne(client, queueUrl, job),
      publishMany: (jobs) => sendMany(client, queueUrl, jobs),
      async process({ concurrency, hooks }) {
        const index = new WeakMap<Message, number>();
        const count = Math.ceil(concurrency / 10);
        for (let n = 0; n < count; n++) {
          const consumer = Consumer.create({
            queueUrl,
            sqs: client,
            batchSize: Math.min(10, concurrency),
            waitTimeSeconds: 20,
            pollingWaitTimeMs: 0,
            handleMessage: async (message) => {
              const i = (JSON.parse(message.Body ?? "{}") as { i: number }).i;
              index.set(message, i);
              hooks.onStart(i);
              return message;
            },
          });
          consumer.on("message_processed", (message) => {
            const i = index.get(message);
            if (i !== undefined) hooks.onDone(i);
          });
          consumer.on("error", () => {});
          consumer.on("processing_error", () => {});
          consumer.start();
          consumers.push(consumer);
        }
      },
      async teardown() {
        for (const consumer of consumers) consumer.stop({ abort: true });
        await deleteQueue(client, queueUrl);
        client.destroy();
      },
    };
    return sut;
  },
};
