/**
 * Settling held jobs: deciding each one's outcome once, and sending the outcomes to the
 * backend in batches.
 *
 *   handler result / time limit / shutdown ──► settle ──► pending ack | nack | release
 *                                                          │ (one flush per event-loop turn,
 *                                                          ▼  per lane, per kind of call)
 *                                              "ok" ──► event, forget;  "lost"/"canceled" ──► lose
 *   heartbeat or event says lost/canceled/put ──► lose (abort the handler, forget)
 */
import type { JobError, LockStatus, NackItem } from "../adapter.ts";
import type { Clock } from "../clock.ts";
import { CanceledError, LockLostError, UnrecoverableError } from "../errors.ts";
import type { TasklaneEventBus } from "../events.ts";
import { backoffMs } from "../retry.ts";
import type { RandomSource } from "../selectors/selector.ts";
import { inBatches } from "./batches.ts";
import { abortHeld, type HeldJob } from "./held-job.ts";
import type { HeldJobs } from "./held-jobs.ts";
import { toJobError } from "./job-error.ts";
import type { LaneState } from "./lane-state.ts";

/** How a held job ended, as far as this worker decides it. */
export type Ending =
  | { kind: "success" }
  | { kind: "failure"; error: unknown; reason?: JobError["reason"] }
  | { kind: "dead"; error: JobError }
  | { kind: "release" };

/** Why a lease is gone without this worker settling it. */
export type LossStatus = "lost" | "canceled" | "put";

export interface SettlerDeps {
  clock: Clock;
  random: RandomSource;
  events: TasklaneEventBus;
  held: HeldJobs;
  /** The adapter's largest batch: larger settles go out in several calls. */
  maxBatch: number;
  /** A retry of a job of `ls` at `runAt` was accepted by the backend. */
  onRetryScheduled?(ls: LaneState, runAt: number): void;
}

export interface Settler {
  /** Decide a held job's outcome (once; later calls are ignored) and queue its call. */
  settle(h: HeldJob, ending: Ending): void;
  /**
   * The lease is gone (lost, canceled, moved). From a heartbeat or an adapter event the
   * handler may still run: abort it. From an ack/nack answer (`answered`) it has ended.
   */
  lose(h: HeldJob, status: LossStatus, answered?: boolean): void;
  /** Send every queued outcome now; resolves when all are answered. */
  flushAll(): Promise<void>;
  /** Send the queued outcomes at the end of this event-loop turn. */
  scheduleFlush(): void;
}

type NackEntry = { h: HeldJob; item: NackItem };
type Pending = { acks: HeldJob[]; nacks: NackEntry[]; releases: HeldJob[] };

export function createSettler(deps: SettlerDeps): Settler {
  const { clock, random, events, held, maxBatch, onRetryScheduled } = deps;
  const pendingByLane = new Map<LaneState, Pending>();
  let flushScheduled = false;

  const lose = (h: HeldJob, status: LossStatus, answered = false) => {
    if (h.settled && !answered) return; // its ack/nack is in flight: that answer decides
    h.settled = true;
    const ref = { lane: h.lane.config.name, jobId: h.job.id, task: h.job.task };
    const reason =
      status === "canceled" ? new CanceledError(h.job.id) : new LockLostError(h.job.id);
    if (!answered) abortHeld(h, reason, clock);
    if (status === "canceled") events.emit("canceled", ref);
    else {
      if (status === "lost" && clock.now() > h.job.lock.expiresAt) events.emit("stalled", ref);
      events.emit(status === "put" ? "put" : "lock_lost", ref);
    }
    held.forget(h);
  };

  const scheduleFlush = () => {
    if (flushScheduled) return;
    flushScheduled = true;
    // setImmediate gathers every job that finished in this turn into one adapter call.
    setImmediate(() => {
      flushScheduled = false;
      void flushAll();
    });
  };

  const pendingFor = (ls: LaneState): Pending => {
    let p = pendingByLane.get(ls);
    if (!p) {
      p = { acks: [], nacks: [], releases: [] };
      pendingByLane.set(ls, p);
    }
    return p;
  };

  const flushAll = async (): Promise<void> => {
    const work: Promise<void>[] = [];
    for (const [ls, p] of pendingByLane) {
      if (p.acks.length + p.nacks.length + p.releases.length === 0) continue;
      pendingByLane.set(ls, { acks: [], nacks: [], releases: [] });
      work.push(flushLane(ls, p));
    }
    await Promise.all(work);
  };

  /** Send one kind of settling call in batches; "ok" runs `onOk`, anything else loses the job. */
  const sendBatched = async <T>(
    ls: LaneState,
    items: T[],
    holder: (item: T) => HeldJob,
    call: (batch: T[]) => Promise<LockStatus[]>,
    onOk: (item: T) => void,
    during: string,
  ): Promise<void> => {
    for (const batch of inBatches(items, maxBatch)) {
      let statuses: LockStatus[];
      try {
        statuses = await call(batch);
      } catch (error) {
        // Infrastructure failure: the outcome is unknown. The lease will expire and the
        // job will be delivered again (at least once), so stop tracking it here.
        events.emit("error", { error, during, lane: ls.config.name });
        for (const item of batch) held.forget(holder(item));
        continue;
      }
      batch.forEach((item, i) => {
        const s = statuses[i] ?? "lost";
        if (s === "ok") {
          onOk(item);
          held.forget(holder(item));
        } else lose(holder(item), s, true);
      });
    }
  };

  const flushLane = async (ls: LaneState, p: Pending): Promise<void> => {
    const lane = ls.config.name;
    const self = (h: HeldJob) => h;
    await Promise.all([
      sendBatched(
        ls,
        p.acks,
        self,
        (b) => ls.store.ack(b.map((h) => h.job.lock)),
        (h) =>
          events.emit("succeeded", {
            lane,
            jobId: h.job.id,
            task: h.job.task,
            attempt: h.job.attempt,
            runMs: clock.now() - h.startedAt,
          }),
        "ack",
      ),
      sendBatched(
        ls,
        p.nacks,
        (n) => n.h,
        (b) => ls.store.nack(b.map((n) => n.item)),
        ({ h, item }) => {
          const ref = {
            lane,
            jobId: h.job.id,
            task: h.job.task,
            attempt: h.job.attempt,
            error: item.error,
          };
          if ("dead" in item) events.emit("failed", ref);
          else {
            onRetryScheduled?.(ls, item.runAt);
            events.emit("retrying", { ...ref, runAt: item.runAt });
          }
        },
        "nack",
      ),
      sendBatched(
        ls,
        p.releases,
        self,
        (b) => ls.store.release(b.map((h) => ({ lock: h.job.lock, uncounted: true as const }))),
        () => {},
        "release",
      ),
    ]);
  };

  const settle = (h: HeldJob, ending: Ending) => {
    if (h.settled) return;
    h.settled = true;
    h.finishing = true;
    if (h.timer !== undefined) clock.clearTimeout(h.timer as never);
    const p = pendingFor(h.lane);
    if (ending.kind === "success") p.acks.push(h);
    else if (ending.kind === "release") p.releases.push(h);
    else if (ending.kind === "dead")
      p.nacks.push({ h, item: { lock: h.job.lock, dead: true, error: ending.error } });
    else {
      const task = h.task;
      const unrecoverable = ending.error instanceof UnrecoverableError;
      const error = toJobError(
        ending.error,
        ending.reason ?? (unrecoverable ? "unrecoverable" : "error"),
      );
      if (!task || unrecoverable || h.job.attempt >= task.retry.maxAttempts) {
        p.nacks.push({ h, item: { lock: h.job.lock, dead: true, error } });
      } else {
        const runAt = clock.now() + backoffMs(task.retry, h.job.attempt, random);
        p.nacks.push({ h, item: { lock: h.job.lock, runAt, error } });
      }
    }
    scheduleFlush();
  };

  return { settle, lose, flushAll, scheduleFlush };
}
