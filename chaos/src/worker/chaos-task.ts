/**
 * The one task every scenario runs. Its payload says what the handler does, so the
 * producer decides each job's behaviour and the checker knows it from the job id's kind.
 */
import { defineTask, type JobContext, type RetryOptions, type Task } from "@tasklane/core";
import { z } from "zod";

export const CHAOS_TASK = "chaos";

export const chaosPayload = z.object({
  /**
   * ok: sleep `ms`, succeed. fail1: sleep `ms`, throw on the first attempt (a retry).
   * exit / kill: a poison pill that ends its worker process with process.exit(1) or
   * SIGKILL to itself.
   */
  k: z.enum(["ok", "fail1", "exit", "kill"]),
  ms: z.number().int().min(0).max(600_000),
});

export type ChaosPayload = z.infer<typeof chaosPayload>;
export type JobKind = ChaosPayload["k"];

export type ChaosTask = Task<ChaosPayload, ChaosPayload>;

export function defineChaosTask(
  lane: string,
  retry: RetryOptions,
  run: (payload: ChaosPayload, ctx: JobContext) => Promise<void> = async () => {},
): ChaosTask {
  return defineTask({ name: CHAOS_TASK, lane, schema: chaosPayload, retry, run });
}
