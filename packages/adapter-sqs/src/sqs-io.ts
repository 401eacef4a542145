/**
 * Batched SQS writes for one queue URL: SendMessageBatch, DeleteMessageBatch and
 * ChangeMessageVisibilityBatch, each behind a coalescing batcher (<= 10 entries, and
 * <= 1 MiB per SendMessageBatch).
 *
 * Whole-request failures (network, throttling, 5xx) are retried by the SDK's own retry
 * strategy; if it gives up, every entry of that request is rejected with an AdapterError.
 * Per-entry failures reported inside a 200 response are retried here when SQS says they
 * were not the sender's fault, with a short back-off, and otherwise returned to the
 * caller as `{ code, message }` for that entry. Nothing is dropped silently.
 */
import {
  type BatchResultErrorEntry,
  ChangeMessageVisibilityBatchCommand,
  DeleteMessageBatchCommand,
  SendMessageBatchCommand,
  type SendMessageBatchRequestEntry,
  type SQSClient,
} from "@aws-sdk/client-sqs";
import { AdapterError } from "@tasklane/core/adapter";
import { type Batcher, createBatcher } from "./batcher.ts";
import { type OutgoingMessage, SQS_MAX_MESSAGE_BYTES } from "./codec.ts";

/** One message to send. */
export interface SendEntry extends OutgoingMessage {
  delaySeconds?: number;
  /** FIFO only. */
  groupId?: string;
  /** FIFO only. */
  dedupId?: string;
}

/** What SQS said about one entry that failed for good. */
export interface EntryFailure {
  code: string;
  message: string;
  senderFault: boolean;
}

export type EntryResult = "ok" | EntryFailure;

export interface UrlIO {
  send(entry: SendEntry): Promise<EntryResult>;
  delete(receiptHandle: string): Promise<EntryResult>;
  changeVisibility(receiptHandle: string, seconds: number): Promise<EntryResult>;
  drain(): Promise<void>;
}

export interface UrlIOOptions {
  client: SQSClient;
  url: string;
  /** Extra tries for entries that failed on SQS's side. */
  entryRetries: number;
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms).unref?.());

/**
 * Send `items` with `call`, retrying the entries that failed on the server's side. `call`
 * gets the items still pending with their batch ids ("0".."9") and returns the failed
 * entries of its response.
 */
async function withEntryRetries<T>(
  items: T[],
  retries: number,
  call: (batch: Array<{ id: string; item: T }>) => Promise<BatchResultErrorEntry[]>,
): Promise<EntryResult[]> {
  const results: EntryResult[] = items.map(() => "ok");
  let pending = items.map((item, i) => ({ id: String(i), item, index: i }));
  for (let attempt = 0; pending.length > 0; attempt++) {
    let failed: BatchResultErrorEntry[];
    try {
      failed = await call(pending);
    } catch (error) {
      throw new AdapterError("sqs", `SQS batch request failed: ${describe(error)}`, {
        cause: error,
      });
    }
    const byId = new Map(pending.map((p) => [p.id, p]));
    const retry: typeof pending = [];
    for (const f of failed) {
      const p = f.Id === undefined ? undefined : byId.get(f.Id);
      if (!p) continue;
      const failure: EntryFailure = {
        code: f.Code ?? "Unknown",
        message: f.Message ?? "",
        senderFault: f.SenderFault === true,
      };
      if (!failure.senderFault && attempt < retries) retry.push(p);
      else results[p.index] = failure;
    }
    pending = retry;
    if (pending.length > 0) await sleep(25 * 2 ** attempt);
  }
  return results;
}

export function describe(error: unknown): string {
  if (error instanceof Error) return `${error.name}: ${error.message}`;
  return String(error);
}

export function createUrlIO(options: UrlIOOptions): UrlIO {
  const { client, url, entryRetries } = options;

  const sendBatcher: Batcher<SendEntry, EntryResult> = createBatcher({
    maxEntries: 10,
    maxBytes: SQS_MAX_MESSAGE_BYTES,
    sizeOf: (e) => e.bytes,
    send: (entries) =>
      withEntryRetries(entries, entryRetries, async (batch) => {
        const out = await client.send(
          new SendMessageBatchCommand({
            QueueUrl: url,
            Entries: batch.map(({ id, item }) => {
              const entry: SendMessageBatchRequestEntry = {
                Id: id,
                MessageBody: item.body,
                MessageAttributes: item.attributes,
              };
              if (item.delaySeconds) entry.DelaySeconds = item.delaySeconds;
              if (item.groupId !== undefined) entry.MessageGroupId = item.groupId;
              if (item.dedupId !== undefined) entry.MessageDeduplicationId = item.dedupId;
              return entry;
            }),
          }),
        );
        return out.Failed ?? [];
      }),
  });

  const deleteBatcher: Batcher<string, EntryResult> = createBatcher({
    maxEntries: 10,
    send: (handles) =>
      withEntryRetries(handles, entryRetries, async (batch) => {
        const out = await client.send(
          new DeleteMessageBatchCommand({
            QueueUrl: url,
            Entries: batch.map(({ id, item }) => ({ Id: id, ReceiptHandle: item })),
          }),
        );
        return out.Failed ?? [];
      }),
  });

  const visibilityBatcher: Batcher<{ handle: string; seconds: number }, EntryResult> =
    createBatcher({
      maxEntries: 10,
      send: (items) =>
        withEntryRetries(items, entryRetries, async (batch) => {
          const out = await client.send(
            new ChangeMessageVisibilityBatchCommand({
              QueueUrl: url,
              Entries: batch.map(({ id, item }) => ({
                Id: id,
                ReceiptHandle: item.handle,
                VisibilityTimeout: item.seconds,
              })),
            }),
          );
          return out.Failed ?? [];
        }),
    });

  return {
    send: (entry) => sendBatcher.add(entry),
    delete: (handle) => deleteBatcher.add(handle),
    changeVisibility: (handle, seconds) => visibilityBatcher.add({ handle, seconds }),
    async drain() {
      await Promise.all([sendBatcher.drain(), deleteBatcher.drain(), visibilityBatcher.drain()]);
    },
  };
}

/** Codes that mean "this receipt handle no longer holds the message": the lease is lost. */
export const LOST_CODES = new Set([
  "ReceiptHandleIsInvalid",
  "MessageNotInflight",
  "InvalidParameterValue",
  "AWS.SimpleQueueService.MessageNotInflight",
  "AWS.SimpleQueueService.ReceiptHandleIsInvalid",
]);
