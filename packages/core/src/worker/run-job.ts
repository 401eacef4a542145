import type { Clock } from "../clock.ts";
import { decodeJson } from "../codec.ts";
import { PayloadTooLargeError, RetryAfterError, TimeoutError, ValidationError } from "../errors.ts";
import type { TasklaneEventBus } from "../events.ts";
import type { Instrumentation, JobTelemetry } from "../instrumentation.ts";
import { type AnyTask, validatePayload } from "../task.ts";
import { abortHeld, type HeldJob } from "./held-job.ts";
import { type ContextHost, HeldJobContext } from "./job-context.ts";
import { toJobError } from "./job-error.ts";
import { createSucceed } from "./job-result.ts";
import type { Reporter } from "./reporter.ts";
import type { Settler } from "./settler.ts";

export interface JobRunnerDeps {
  clock: Clock;
  events: TasklaneEventBus;
  settler: Settler;
  /** Aborted when the worker begins to stop. */
  stopping: AbortSignal;
  /** The client's limit on payload + appData, bytes: a larger job is dead, never parsed. */
  maxPayloadBytes: number;
  /** The client's telemetry hooks, if any. */
  instrumentation: Instrumentation | undefined;
  /** Largest encoded return value, bytes. */
  maxResultBytes: number;
  /** The adapter stores results (capability `results`). */
  storeResults: boolean;
  /** Sends handlers' reports, where the adapter stores them (capability `reports`). */
  reporter: Reporter | undefined;
  /** The adapter's name, and its maxDelayMs where it honours `ctx.retryAfter`. */
  adapterName: string;
  retryAfterMaxMs: number | undefined;
  /** The adapter has capabilities `flows` and `get` (`ctx.children()`). */
  flows: boolean;
  /** A lane's config name from its full name. */
  configName(full: string): string;
}

/**
 * Running one held job, from a runner: check it can start, decode and validate it, run
 * its handler under its time limit, and settle the outcome. Never starts a job that
 * cannot run (malformed, unknown task, oversize or bad payload: dead with a reason) or cannot finish
 * inside its lease (Kale's time budget: handed back unstarted).
 */
export function createJobRunner(deps: JobRunnerDeps) {
  const { clock, events, settler, stopping, maxPayloadBytes, instrumentation, reporter } = deps;
  const { settle } = settler;
  const contextHost: ContextHost = {
    clock,
    events,
    lose: settler.lose,
    reporter,
    adapterName: deps.adapterName,
    retryAfterMaxMs: deps.retryAfterMaxMs,
    flows: deps.flows,
    configName: deps.configName,
  };
  const succeed = createSucceed({
    settle,
    maxResultBytes: deps.maxResultBytes,
    storeResults: deps.storeResults,
  });

  return async function runJob(h: HeldJob): Promise<void> {
    if (h.settled) return;
    if (stopping.aborted) {
      // A prefetched job that had not started when the worker began to stop: hand it
      // back at once, unstarted and uncounted, for another worker.
      settle(h, { kind: "release" });
      return;
    }
    const job = h.job;
    if (instrumentation?.job !== undefined) {
      h.telemetry = instrumentation.job(h.lane.config.name, job);
    }
    if (job.malformed !== undefined) {
      settle(h, {
        kind: "dead",
        error: { name: "MalformedJobError", message: job.malformed, reason: "malformed" },
      });
      return;
    }
    const task = h.task;
    if (!task) {
      settle(h, {
        kind: "dead",
        error: {
          name: "UnknownTaskError",
          message: `No worker task named "${job.task}"`,
          reason: "unknown_task",
        },
      });
      return;
    }
    // Kale's time budget: never start what cannot finish inside the lease we hold. Without
    // a time limit, never start a job whose lease has already ended (a prefetched job held
    // through a paused process or a held-up reply): another worker may be running it.
    const budgetMs = task.timeLimitMs ?? 0;
    if (clock.now() + budgetMs >= job.lock.expiresAt) {
      settle(h, { kind: "release" });
      return;
    }
    // A body over the limit (a foreign producer wrote it past publish's check) is dead
    // before it is parsed: parsing is what the limit protects the worker from.
    const size = oversize(job.payload, job.appData, maxPayloadBytes);
    if (size !== undefined) {
      const error = new PayloadTooLargeError(`Payload of job ${job.id}`, size, maxPayloadBytes);
      settle(h, { kind: "dead", error: toJobError(error, "payload_too_large") });
      return;
    }
    let payload: unknown;
    let appData: unknown;
    try {
      const raw = decodeJson(job.payload);
      appData = job.appData === undefined ? undefined : decodeJson(job.appData);
      const v = validatePayload(task, raw);
      payload = v instanceof Promise ? await v : v;
    } catch (error) {
      const reason = error instanceof ValidationError ? "invalid_payload" : "malformed";
      settle(h, { kind: "dead", error: toJobError(error, reason) });
      return;
    }
    if (h.settled) return;
    h.running = true;
    h.startedAt = clock.now();
    // Most services do not listen to `started`; skip building its payload then.
    if (events.listenerCount("started") > 0) {
      events.emit("started", {
        lane: h.lane.config.name,
        jobId: job.id,
        task: job.task,
        attempt: job.attempt,
      });
    }
    const ctx = new HeldJobContext(contextHost, h, appData);
    if (task.timeLimitMs !== undefined) {
      const limit = task.timeLimitMs;
      h.timer = clock.setTimeout(() => {
        if (h.settled) return;
        const err = new TimeoutError(task.name, limit);
        abortHeld(h, err, clock);
        settle(h, { kind: "failure", error: err, reason: "timeout" });
      }, limit);
    }
    try {
      const result =
        h.telemetry === undefined
          ? task.run(payload, ctx)
          : runObserved(h.telemetry, task, payload, ctx);
      let value: unknown;
      if (!(result instanceof Promise)) value = result;
      else {
        // Race the handler against an interrupt, so a handler that ignores its signal
        // does not keep a slot (or the shutdown) waiting forever.
        await new Promise<void>((resolve, reject) => {
          h.interrupt = resolve;
          result.then((v) => {
            value = v;
            resolve();
          }, reject);
        });
      }
      if (!h.settled) {
        const checking = succeed(h, value);
        if (checking !== undefined) await checking;
      }
    } catch (error) {
      if (h.settled) return;
      if (error instanceof RetryAfterError) settle(h, { kind: "release", runAt: error.runAt });
      else settle(h, { kind: "failure", error });
    } finally {
      h.running = false;
      h.interrupt = undefined;
    }
  };
}

/**
 * The handler, run by its telemetry. A function of its own: the closure it makes would
 * otherwise move runJob's locals into a heap context on every call, telemetry or not.
 */
function runObserved(
  telemetry: JobTelemetry,
  task: AnyTask,
  payload: unknown,
  ctx: HeldJobContext,
): unknown {
  return telemetry.run(() => task.run(payload, ctx));
}

/**
 * The encoded size of payload + appData in bytes when it is over `limit`, else undefined.
 * A UTF-16 code unit takes at most 3 bytes in UTF-8 (a surrogate pair, two units, takes
 * 4), so only a text longer than a third of the limit is measured, and measuring counts
 * without encoding.
 */
export function oversize(
  payload: string,
  appData: string | undefined,
  limit: number,
): number | undefined {
  const units = payload.length + (appData === undefined ? 0 : appData.length);
  if (units * 3 <= limit) return undefined;
  const size =
    Buffer.byteLength(payload, "utf8") +
    (appData === undefined ? 0 : Buffer.byteLength(appData, "utf8"));
  return size > limit ? size : undefined;
}
