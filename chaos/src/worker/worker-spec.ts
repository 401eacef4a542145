/**
 * What a forked worker process is told (as JSON on its command line), and the adapter
 * both it and the orchestrator build from a backend description.
 */
import { createRedisAdapter } from "@tasklane/adapter-redis";
import { createSqsAdapter } from "@tasklane/adapter-sqs";
import type { Adapter, LaneConfigInput, RetryOptions } from "@tasklane/core";

export type BackendSpec =
  | {
      kind: "redis";
      host: string;
      port: number;
      prefix: string;
      /** The adapter's longest single block of an idle worker, ms (its default 5_000). */
      maxBlockMs?: number;
    }
  | { kind: "sqs"; endpoint: string; region: string; queuePrefix: string };

export interface WorkerSpec {
  slot: number;
  /** Where the process writes its ledger (`w<slot>-<pid>.jsonl`). */
  ledgerDir: string;
  /**
   * full: a ledger line per reservation, handler start and end, settling call and answer.
   * summary: only heap samples and a count of finished jobs (the depth runs: a million jobs).
   */
  mode: "full" | "summary";
  backend: BackendSpec;
  lane: LaneConfigInput;
  retry: RetryOptions;
  concurrency: number;
  /** Worker `prefetch` (default: the worker's own). */
  prefetch?: number;
  /** Sample heapUsed (and the finished count) this often, ms. */
  heapSampleMs?: number;
  /** Log an event-loop lag of at least this many ms. */
  lagThresholdMs: number;
}

export function createBackendAdapter(backend: BackendSpec): Adapter {
  if (backend.kind === "redis") {
    return createRedisAdapter({
      connection: { host: backend.host, port: backend.port },
      prefix: backend.prefix,
      ...(backend.maxBlockMs === undefined ? {} : { maxBlockMs: backend.maxBlockMs }),
    });
  }
  return createSqsAdapter({
    clientConfig: {
      endpoint: backend.endpoint,
      region: backend.region,
      credentials: { accessKeyId: "chaos", secretAccessKey: "chaos" },
    },
    queuePrefix: backend.queuePrefix,
  });
}
