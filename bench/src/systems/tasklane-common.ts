/**
 * The tasklane side of every tasklane system: one no-op task on one lane, configured as
 * a service would (batch reserve of 100, 30 s lease, 1 s long poll), everything else at
 * its defaults (retention of 1,000 succeeded jobs, history, stats, zod validation of
 * every payload). Only the adapter differs between tasklane-memory, -redis and -sqs
 * (and -redis-otel adds telemetry).
 */
import type { Adapter, TasklaneOptions } from "@tasklane/core";
import { createTasklane, defineTask, type Worker } from "@tasklane/core";
import { z } from "zod";
import type { BenchJob, JobHooks, SystemUnderTest } from "../types.ts";

export const TASKLANE_LANE = {
  priority: 1,
  batchSize: 100,
  leaseMs: 30_000,
  longPollMs: 1_000,
  numIterations: 10,
};

/**
 * The operator features a case uses per job (tasklane-memory-ops): what they cost shows
 * against the same system without them.
 */
export interface OperatorUse {
  /** Tags published with every job. */
  tags: string[];
  /** Every job expires this long after its publish (far beyond the case's run). */
  expiresInMs: number;
  /** The handler returns a small result and reports progress once. */
  resultAndProgress: boolean;
}

/**
 * `laneName` becomes the tasklane lane name (unique per case). `onTeardown` runs after
 * the client closed (for what the system module created itself, such as a client it
 * injected into the adapter). Resolves once the lane is open (connection made, start-up
 * checks done), as the peers' setups wait for theirs (BullMQ's `waitUntilReady`), so no
 * timed scenario includes connecting.
 */
export async function tasklaneSystem(
  adapter: Adapter,
  laneName: string,
  onTeardown?: () => Promise<void>,
  operator?: OperatorUse,
  clientOptions: Pick<TasklaneOptions, "instrumentation"> = {},
): Promise<SystemUnderTest> {
  let hooks: JobHooks | undefined;
  /** jobId → job index, between the handler's start and the `succeeded` event. */
  const indexById = new Map<string, number>();
  const noop = defineTask({
    name: "noop",
    lane: laneName,
    schema: z.object({ i: z.number() }),
    run: async (payload, ctx) => {
      indexById.set(ctx.jobId, payload.i);
      hooks?.onStart(payload.i);
      if (operator?.resultAndProgress) {
        ctx.progress({ done: 1 });
        return { i: payload.i };
      }
      return undefined;
    },
  });
  const tl = createTasklane({
    adapter,
    lanes: [{ name: laneName, ...TASKLANE_LANE }],
    tasks: [noop],
    ...clientOptions,
  });
  tl.events.on("succeeded", (event) => {
    const i = indexById.get(event.jobId);
    if (i === undefined) return;
    indexById.delete(event.jobId);
    hooks?.onDone(i);
  });
  tl.events.on("error", () => {});
  let worker: Worker | undefined;
  const extra = operator ? { tags: operator.tags, expiresInMs: operator.expiresInMs } : {};
  // Without the operator features the items are exactly what they were before them.
  const item = operator
    ? (job: BenchJob) => ({ payload: { i: job.i }, priority: job.priority ?? 0, ...extra })
    : (job: BenchJob) =>
        job.priority === undefined
          ? { payload: { i: job.i } }
          : { payload: { i: job.i }, priority: job.priority };
  await tl.lane(laneName).probe();
  return {
    async publish(job) {
      await (job.priority === undefined
        ? operator
          ? tl.publish(noop, { i: job.i }, extra)
          : tl.publish(noop, { i: job.i })
        : tl.publish(noop, { i: job.i }, { priority: job.priority, ...extra }));
    },
    async publishMany(jobs) {
      await tl.publishMany(noop, jobs.map(item));
    },
    async process(options) {
      hooks = options.hooks;
      worker = tl.worker({ concurrency: options.concurrency });
      await worker.start();
    },
    async teardown() {
      await worker?.stop({ graceMs: 1_000 });
      await tl.close({ graceMs: 1_000 });
      await onTeardown?.();
    },
  };
}
