/**
 * The producer: publishes jobs under ids it chooses (`<scenario>-<kind>-<n>`), so every
 * job that should exist is known, and records which publishes were acknowledged. A publish
 * that fails (the server is down, the connection dropped) is retried with the same ids
 * until acknowledged: a job id makes publishing idempotent, so a retry of a publish that
 * did reach the store answers "duplicate", which acknowledges it too.
 */
import type { Tasklane } from "@tasklane/core";
import type { ChaosTask, JobKind } from "./worker/chaos-task.ts";

export interface ProducerItem {
  kind: JobKind;
  /** Handler time, ms. */
  ms: number;
  runAt?: number;
}

export interface Producer {
  /** Every id the producer tried to publish, with its kind. */
  readonly attempted: ReadonlyMap<string, JobKind>;
  /** The ids whose publish was acknowledged. */
  readonly acked: ReadonlySet<string>;
  /** Publish failures that were retried. */
  readonly retries: number;
  /** Publish these jobs (in calls of `chunk`); resolves when every one is acknowledged. */
  publish(items: ProducerItem[]): Promise<string[]>;
  /** Ids of one kind. */
  idsOf(kind: JobKind): string[];
}

export function createProducer(options: {
  tl: Tasklane;
  task: ChaosTask;
  prefix: string;
  /** Jobs per publishMany call. Default 1_000. */
  chunk?: number;
  /** Give up on a publish that has failed for this long, ms. Default 60_000. */
  retryForMs?: number;
}): Producer {
  const { tl, task, prefix } = options;
  const chunk = options.chunk ?? 1_000;
  const retryForMs = options.retryForMs ?? 60_000;
  const attempted = new Map<string, JobKind>();
  const acked = new Set<string>();
  let next = 0;
  let retries = 0;

  const publishChunk = async (ids: string[], items: ProducerItem[]) => {
    const started = Date.now();
    for (;;) {
      try {
        const results = await tl.publishMany(
          task,
          items.map((item, i) => ({
            payload: { k: item.kind, ms: item.ms },
            jobId: ids[i] as string,
            ...(item.runAt === undefined ? {} : { runAt: item.runAt }),
          })),
        );
        for (const r of results) acked.add(r.id);
        return;
      } catch (error) {
        if (Date.now() - started > retryForMs) throw error;
        retries++;
        // A pause before trying again, not a wait for a state: the server is down or
        // reconnecting, and the next publish is what tells whether it is back.
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
    }
  };

  return {
    attempted,
    acked,
    get retries() {
      return retries;
    },
    async publish(items) {
      const ids = items.map((item) => {
        const id = `${prefix}-${item.kind}-${String(next++).padStart(6, "0")}`;
        attempted.set(id, item.kind);
        return id;
      });
      const calls: Promise<void>[] = [];
      for (let i = 0; i < items.length; i += chunk) {
        calls.push(publishChunk(ids.slice(i, i + chunk), items.slice(i, i + chunk)));
      }
      await Promise.all(calls);
      return ids;
    },
    idsOf(kind) {
      return [...attempted].filter(([, k]) => k === kind).map(([id]) => id);
    },
  };
}
