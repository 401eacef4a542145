/**
 * Test support: a real SQS-protocol server (fauxqs, in-process on port 0, or the server
 * at SQS_ENDPOINT), SQS clients pointed at it, and a fault-injecting HTTP proxy.
 */
import { randomUUID } from "node:crypto";
import { createServer, type IncomingMessage, request, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { SQSClient, type SQSClientConfig } from "@aws-sdk/client-sqs";
import type { NewJob } from "@tasklane/core/adapter";
import { startFauxqs } from "fauxqs";

export interface SqsServer {
  endpoint: string;
  stop(): Promise<void>;
}

/** Start fauxqs on a free port (or use SQS_ENDPOINT). */
export async function startSqs(): Promise<SqsServer> {
  const external = process.env.SQS_ENDPOINT;
  if (external) return { endpoint: external, stop: async () => {} };
  const server = await startFauxqs({ port: 0, logger: false });
  return { endpoint: `http://127.0.0.1:${server.port}`, stop: () => server.stop() };
}

/**
 * A client for the test server. With `fastRetries`, failed requests are retried up to
 * that many times after 10 ms, 20 ms, ... instead of the SDK's back-off of up to seconds
 * (the fault tests inject many failures and must stay quick); the SDK's retry middleware
 * still decides what is retryable.
 */
export function sqsClient(endpoint: string, fastRetries?: number): SQSClient {
  const config: SQSClientConfig = {
    endpoint,
    region: "us-east-1",
    credentials: { accessKeyId: "test", secretAccessKey: "test" },
  };
  if (fastRetries !== undefined) {
    const token = (count: number) => ({
      getRetryCount: () => count,
      getRetryDelay: () => 10 * count,
    });
    config.retryStrategy = {
      mode: "standard",
      acquireInitialRetryToken: async () => token(0),
      refreshRetryTokenForRetry: async (
        previous: { getRetryCount(): number },
        info: { errorType: string },
      ) => {
        const next = previous.getRetryCount() + 1;
        if (info.errorType === "CLIENT_ERROR" || next > fastRetries) throw new Error("no retry");
        return token(next);
      },
      recordSuccess: () => {},
    } as unknown as NonNullable<SQSClientConfig["retryStrategy"]>;
  }
  return new SQSClient(config);
}

/** A lane name no other test uses. */
export function uniqueName(prefix = "q"): string {
  return `${prefix}-${randomUUID().slice(0, 8)}`;
}

export function job(id: string, extra: Partial<NewJob> = {}): NewJob {
  return {
    id,
    task: "t",
    payload: JSON.stringify({ id }),
    priority: 0,
    publishedAt: Date.now(),
    ...extra,
  };
}

/** Poll `check` until it returns a truthy value (or throw after `timeoutMs`). */
export async function waitFor<T>(
  check: () => T | Promise<T>,
  timeoutMs = 10_000,
  intervalMs = 50,
): Promise<NonNullable<T>> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value) return value as NonNullable<T>;
    if (Date.now() > deadline) throw new Error(`waitFor timed out after ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, intervalMs));
  }
}

/** What the proxy does with one request. */
export type Fault =
  | "throttle" // 400 ThrottlingException, not forwarded
  | "unavailable" // 503, not forwarded
  | "lost-response" // forwarded (SQS acts on it), then answered 500
  | "entry-failed" // batch actions: the last entry is not forwarded and reported failed, SQS's fault
  | "entry-rejected"; // batch actions: the same, reported as the sender's fault (not retryable)

export interface FaultProxy {
  endpoint: string;
  /** Requests seen, and faults injected, by SQS action. */
  readonly seen: Record<string, number>;
  readonly injected: Record<string, number>;
  close(): Promise<void>;
}

/**
 * An HTTP proxy in front of the SQS server. `decide(action, n)` is asked for each request
 * (`n` counts requests of that action from 1) and may inject a fault.
 */
export async function startFaultProxy(
  target: string,
  decide: (action: string, n: number) => Fault | undefined,
): Promise<FaultProxy> {
  const url = new URL(target);
  const seen: Record<string, number> = {};
  const injected: Record<string, number> = {};
  const answer = (res: import("node:http").ServerResponse, fault: Fault) => {
    if (fault === "throttle") {
      res.writeHead(400, {
        "content-type": "application/x-amz-json-1.0",
        "x-amzn-query-error": "ThrottlingException;Sender",
      });
      res.end(
        JSON.stringify({
          __type: "com.amazonaws.sqs#ThrottlingException",
          message: "Rate exceeded",
        }),
      );
    } else {
      res.writeHead(fault === "unavailable" ? 503 : 500, {
        "content-type": "application/x-amz-json-1.0",
      });
      res.end(JSON.stringify({ __type: "com.amazonaws.sqs#InternalError", message: "injected" }));
    }
  };
  const server: Server = createServer((req: IncomingMessage, res) => {
    const action = String(req.headers["x-amz-target"] ?? "").replace("AmazonSQS.", "") || "unknown";
    const n = (seen[action] ?? 0) + 1;
    seen[action] = n;
    const fault = decide(action, n);
    if (fault) injected[action] = (injected[action] ?? 0) + 1;
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      if (fault === "throttle" || fault === "unavailable") {
        answer(res, fault);
        return;
      }
      let body = Buffer.concat(chunks);
      let failedEntry:
        | { Id: string; SenderFault: boolean; Code: string; Message: string }
        | undefined;
      if (fault === "entry-failed" || fault === "entry-rejected") {
        const parsed = JSON.parse(body.toString("utf8")) as { Entries?: Array<{ Id: string }> };
        const dropped = parsed.Entries?.pop();
        if (dropped) {
          failedEntry = {
            Id: dropped.Id,
            SenderFault: fault === "entry-rejected",
            Code: fault === "entry-rejected" ? "InvalidParameterValue" : "InternalError",
            Message: "injected entry failure",
          };
        }
        if (failedEntry && parsed.Entries?.length === 0) {
          res.writeHead(200, { "content-type": "application/x-amz-json-1.0" });
          res.end(JSON.stringify({ Successful: [], Failed: [failedEntry] }));
          return;
        }
        body = Buffer.from(JSON.stringify(parsed));
      }
      const headers = { ...req.headers, "content-length": String(body.length) };
      const upstream = request(
        {
          hostname: url.hostname,
          port: url.port,
          path: req.url,
          method: req.method,
          headers,
        },
        (up) => {
          if (fault === "lost-response") {
            up.resume();
            up.on("end", () => answer(res, fault));
            return;
          }
          if (failedEntry) {
            const parts: Buffer[] = [];
            up.on("data", (c: Buffer) => parts.push(c));
            up.on("end", () => {
              const out = JSON.parse(Buffer.concat(parts).toString("utf8")) as {
                Failed?: unknown[];
              };
              out.Failed = [...(out.Failed ?? []), failedEntry];
              const text = JSON.stringify(out);
              res.writeHead(up.statusCode ?? 200, {
                "content-type": "application/x-amz-json-1.0",
                "content-length": String(Buffer.byteLength(text)),
              });
              res.end(text);
            });
            return;
          }
          res.writeHead(up.statusCode ?? 502, up.headers);
          up.pipe(res);
        },
      );
      upstream.on("error", () => {
        if (!res.headersSent) answer(res, "unavailable");
      });
      // A client that gives up (an aborted long poll) ends the upstream request too.
      res.on("close", () => upstream.destroy());
      upstream.end(body);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    endpoint: `http://127.0.0.1:${port}`,
    seen,
    injected,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** Long polls in flight through one client (see `watchLongPolls`). */
export interface LongPollWatch {
  /** Receives with a wait time sent and not yet answered, on queues whose URL has `name`. */
  waiting(name?: string): number;
  dispose(): void;
}

let watchSerial = 0;

/**
 * Count the ReceiveMessage requests with `WaitTimeSeconds` > 0 that a client has sent and
 * not yet had answered: the long polls waiting on the server. SDK middleware on the test's
 * client (the adapter's code is untouched); tests wait for this count to rise instead of
 * sleeping to "let the poll block". A receive is counted from when its HTTP request leaves,
 * a moment before the server holds it; a message sent in that moment is still returned by
 * the receive (it checks for messages before it waits).
 */
export function watchLongPolls(client: SQSClient): LongPollWatch {
  const name = `tasklaneTestLongPolls${++watchSerial}`;
  const inFlight = new Map<object, string>();
  client.middlewareStack.add(
    (next, context) => async (args) => {
      const input = args.input as { WaitTimeSeconds?: number; QueueUrl?: string };
      if (context.commandName !== "ReceiveMessageCommand" || !(Number(input.WaitTimeSeconds) > 0))
        return next(args);
      const key = {};
      inFlight.set(key, input.QueueUrl ?? "");
      try {
        return await next(args);
      } finally {
        inFlight.delete(key);
      }
    },
    { step: "finalizeRequest", priority: "low", name },
  );
  return {
    waiting: (lane) => {
      let n = 0;
      for (const url of inFlight.values()) if (lane === undefined || url.includes(lane)) n++;
      return n;
    },
    dispose: () => {
      client.middlewareStack.remove(name);
    },
  };
}
