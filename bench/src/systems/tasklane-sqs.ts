/**
 * tasklane with the SQS adapter on fauxqs (compared with sqs-consumer). The adapter gets
 * the harness's counting client. In the priority scenario it maps job priorities onto
 * three SQS queues (bands): 8..10 high, 4..7 default, 1..3 low; otherwise one queue,
 * like the peers.
 */
import { DeleteQueueCommand, ListQueuesCommand } from "@aws-sdk/client-sqs";
import { createSqsAdapter } from "@tasklane/adapter-sqs";
import type { BenchSystem } from "../types.ts";
import { tasklaneSystem } from "./tasklane-common.ts";

export const system: BenchSystem = {
  async setup(env) {
    const client = env.createSqsClient();
    const adapter = createSqsAdapter({
      client,
      ...(env.withPriorities ? { priorityLanes: { high: 8, low: 3 } } : {}),
    });
    return tasklaneSystem(adapter, env.queueName, async () => {
      const { QueueUrls } = await client.send(
        new ListQueuesCommand({ QueueNamePrefix: env.queueName }),
      );
      for (const url of QueueUrls ?? []) {
        await client.send(new DeleteQueueCommand({ QueueUrl: url })).catch(() => {});
      }
      client.destroy();
    });
  },
};
