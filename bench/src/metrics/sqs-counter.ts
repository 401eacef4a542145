import { SQSClient } from "@aws-sdk/client-sqs";

/**
 * SQS requests by command name, counted by middleware on every client the harness
 * creates. It sits after the SDK's retry middleware, so a retried request counts once
 * per attempt (what SQS bills).
 */
export const sqsRequests = new Map<string, number>();

export function totalSqsRequests(): number {
  let total = 0;
  for (const n of sqsRequests.values()) total += n;
  return total;
}

export function snapshotSqsRequests(): Record<string, number> {
  return Object.fromEntries(sqsRequests);
}

export function createCountingSqsClient(endpoint: string, region: string): SQSClient {
  const client = new SQSClient({
    endpoint,
    region,
    credentials: { accessKeyId: "bench", secretAccessKey: "bench" },
  });
  client.middlewareStack.add(
    (next, context) => async (args) => {
      const name = context.commandName ?? "unknown";
      sqsRequests.set(name, (sqsRequests.get(name) ?? 0) + 1);
      return await next(args);
    },
    { step: "finalizeRequest", priority: "low", name: "benchRequestCounter" },
  );
  return client;
}
