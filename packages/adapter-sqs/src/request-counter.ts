import type { SQSClient } from "@aws-sdk/client-sqs";

/** Counts of SQS requests made through one client. */
export interface SqsRequestCounter {
  /** Commands sent (one per `client.send`, whatever the retries). */
  readonly commands: number;
  /** HTTP requests made, SDK retries included (what AWS bills). */
  readonly httpRequests: number;
  /** Commands per name, e.g. `{ ReceiveMessageCommand: 12, DeleteMessageBatchCommand: 10 }`. */
  readonly byCommand: Readonly<Record<string, number>>;
  /** Set every count back to zero. */
  reset(): void;
  /** Take the middleware off the client. */
  dispose(): void;
}

let serial = 0;

/**
 * Count the SQS requests a client makes, with SDK middleware (nothing is wrapped or
 * stubbed). Used by the benchmarks to report requests per job.
 *
 * @example
 * const counter = countSqsRequests(client);
 * // ... publish and process 1,000 jobs ...
 * console.log(counter.httpRequests / 1000);
 */
export function countSqsRequests(client: SQSClient): SqsRequestCounter {
  const id = ++serial;
  const initName = `tasklaneCountCommands${id}`;
  const httpName = `tasklaneCountHttp${id}`;
  let commands = 0;
  let httpRequests = 0;
  let byCommand: Record<string, number> = {};
  client.middlewareStack.add(
    (next, context) => (args) => {
      commands++;
      const name = context.commandName ?? "unknown";
      byCommand[name] = (byCommand[name] ?? 0) + 1;
      return next(args);
    },
    { step: "initialize", name: initName },
  );
  // finalizeRequest, low priority: inside the retry middleware, so once per HTTP attempt.
  client.middlewareStack.add(
    (next) => (args) => {
      httpRequests++;
      return next(args);
    },
    { step: "finalizeRequest", priority: "low", name: httpName },
  );
  return {
    get commands() {
      return commands;
    },
    get httpRequests() {
      return httpRequests;
    },
    get byCommand() {
      return byCommand;
    },
    reset() {
      commands = 0;
      httpRequests = 0;
      byCommand = {};
    },
    dispose() {
      client.middlewareStack.remove(initName);
      client.middlewareStack.remove(httpName);
    },
  };
}
