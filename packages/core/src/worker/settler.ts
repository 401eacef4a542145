/**
 * Settling held jobs: deciding each one's outcome once, and sending the outcomes to the
 * backend in batches.
 *
 *   handler result / time limit / shutdown ──► settle ──► pending ack | nack | release
 *                                                          │ (one flush per event-loop turn,
 *                                                          ▼  per lane, per kind of call)
 *                                              "ok" ──► event, forget;  "lost"/"canceled" ──► lose
 *                                              threw ──► retry the same call, backing off,
 *                                                        while the lease lasts
 *   heartbeat or event says lost/canceled/put ──► lose (abort the handler, forget)
 *
 * A call that throws (the connection dropped, the backend failed over) may or may not
 * have taken effect. Forgetting it would let the lease run out and the job run again
 * when the call had not landed: a duplicate run per job in flight at every connection
 * drop. So it is sent again, with the same lock, until it is answered or the lease ends.
 * Fencing makes that safe: a retry can only take effect while the lease is still ours,
 * and the first one to land wins. A retry answered "lost" after an unknown outcome
 * proves nothing (the first call landing is the likely reason), so it is reported as
 * `unconfirmed`, never as a lost lock.
 *
 * A job whose call waits to be retried gets no heartbeats: a heartbeat could only get
 * through when the retry would too, and its "lost" answer would be just as ambiguous.
 * When the lease runs out first, the job is delivered again as it would have been
 * without retries (at least once).
 */
import type { JobError, LockStatus, NackItem } from "../adapter.ts";
import type { Clock } from "../clock.ts";
import {
  CanceledError,
  ClosedError,
  LockLostError,
  MovedError,
  UnrecoverableError,
} from "../errors.ts";
import type { SettleCall, TasklaneEventBus, TasklaneEvents } from "../events.ts";
import type { JobSettling } from "../instrumentation.ts";
import { backoffMs } from "../retry.ts";
import type { RandomSource } from "../selectors/selector.ts";
import { inBatches } from "./batches.ts";
import { abortHeld, type HeldJob } from "./held-job.ts";
import type { HeldJobs } from "./held-jobs.ts";
import { toJobError } from "./job-error.ts";
import type { LaneState } from "./lane-state.ts";
import { ackItemOf, withReport } from "./report-buffer.ts";

/** How a held job ended, as far as this worker decides it. */
export type Ending =
  | { kind: "success" }
  | { kind: "failure"; error: unknown; reason?: JobError["reason"] }
  | { kind: "dead"; error: JobError }
  | { kind: "release"; runAt?: number };

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
  /**
   * Give up every settling call waiting to be retried, and retry no more (the worker's
   * stop ran out of grace). Each is reported `unconfirmed` and forgotten; a call in
   * flight is still answered.
   */
  stopRetrying(): void;
}

const ACK: JobSettling = { kind: "ack" };
const RELEASE: JobSettling = { kind: "release" };

/** First wait before retrying a settling call that threw, ms; it doubles up to the cap. */
export const FIRST_SETTLE_RETRY_MS = 25;
/** Longest wait between two tries of one settling call, ms. */
export const MAX_SETTLE_RETRY_MS = 1_000;

type Unconfirmed = TasklaneEvents["unconfirmed"];
type NackEntry = { h: HeldJob; item: NackItem };
type Pending = { acks: HeldJob[]; nacks: NackEntry[]; releases: HeldJob[] };

/** One kind of settling call: how to send a batch, and what its items are. */
interface CallKind<T> {
  call: SettleCall;
  holder(item: T): HeldJob;
  send(ls: LaneState, batch: T[]): Promise<LockStatus[]>;
  onOk(ls: LaneState, item: T): void;
  /** Queue the item to be sent again with the lane's next flush. */
  requeue(p: Pending, item: T): void;
}

export function createSettler(deps: SettlerDeps): Settler {
  const { clock, random, events, held, maxBatch, onRetryScheduled } = deps;
  const pendingByLane = new Map<LaneState, Pending>();
  let flushScheduled = false;
  /** Settling calls waiting to be retried: the timer of each, and how to give it up. */
  const retrying = new Map<HeldJob, { timer: unknown; call: SettleCall }>();
  let retriesStopped = false;

  const lose = (h: HeldJob, status: LossStatus, answered = false) => {
    if (h.settled && !answered) return; // its ack/nack is in flight: that answer decides
    h.settled = true;
    const ref = { lane: h.lane.config.name, jobId: h.job.id, task: h.job.task };
    const reason =
      status === "canceled"
        ? new CanceledError(h.job.id)
        : status === "put"
          ? new MovedError(h.job.id)
          : new LockLostError(h.job.id);
    if (!answered) abortHeld(h, reason, clock);
    const stalled = status === "lost" && clock.now() > h.job.lock.expiresAt;
    if (status === "canceled") events.emit("canceled", ref);
    else {
      if (stalled) events.emit("stalled", ref);
      events.emit(status === "put" ? "put" : "lock_lost", ref);
    }
    h.telemetry?.end(stalled ? "stalled" : status);
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

  /** A settling call's outcome stays unknown: report it and stop tracking the job. */
  const unconfirmed = (h: HeldJob, call: SettleCall, detail: Unconfirmed["detail"]) => {
    events.emit("unconfirmed", {
      lane: h.lane.config.name,
      jobId: h.job.id,
      task: h.job.task,
      attempt: h.job.attempt,
      call,
      detail,
    });
    h.telemetry?.end("unconfirmed");
    held.forget(h);
  };

  /**
   * A settling call for `item` threw: send it again after a back-off, while its lease
   * lasts. The wait doubles from FIRST_SETTLE_RETRY_MS up to MAX_SETTLE_RETRY_MS, and is
   * no more than half of what is left of the lease (nor less than the first wait), so a
   * few tries fit in even a short lease.
   */
  const retryLater = <T>(ls: LaneState, kind: CallKind<T>, item: T, error: unknown) => {
    const h = kind.holder(item);
    h.unsure = true;
    if (retriesStopped || error instanceof ClosedError) {
      unconfirmed(h, kind.call, "stopped");
      return;
    }
    const leftMs = h.job.lock.expiresAt - clock.now();
    if (leftMs <= 0) {
      unconfirmed(h, kind.call, "lease_expired");
      return;
    }
    h.retryDelayMs =
      h.retryDelayMs === 0
        ? FIRST_SETTLE_RETRY_MS
        : Math.min(2 * h.retryDelayMs, MAX_SETTLE_RETRY_MS);
    const delayMs = Math.min(h.retryDelayMs, Math.max(FIRST_SETTLE_RETRY_MS, leftMs / 2));
    const timer = clock.setTimeout(() => {
      retrying.delete(h);
      // A retry past the lease could only answer "lost": the job is the backend's again.
      if (clock.now() >= h.job.lock.expiresAt) unconfirmed(h, kind.call, "lease_expired");
      else {
        kind.requeue(pendingFor(ls), item);
        scheduleFlush();
      }
    }, delayMs);
    retrying.set(h, { timer, call: kind.call });
  };

  /**
   * Send one kind of settling call in batches. "ok" runs `onOk`; "lost" or "canceled"
   * loses the job, except that "lost" after a call that threw is `unconfirmed`; a call
   * that throws is retried (retryLater).
   */
  const sendBatched = async <T>(ls: LaneState, kind: CallKind<T>, items: T[]): Promise<void> => {
    for (const batch of inBatches(items, maxBatch)) {
      let statuses: LockStatus[];
      try {
        statuses = await kind.send(ls, batch);
      } catch (error) {
        // Infrastructure failure: whether the call took effect is unknown.
        events.emit("error", { error, during: kind.call, lane: ls.config.name });
        for (const item of batch) retryLater(ls, kind, item, error);
        continue;
      }
      batch.forEach((item, i) => {
        const h = kind.holder(item);
        const s = statuses[i] ?? "lost";
        if (s === "ok") {
          kind.onOk(ls, item);
          h.telemetry?.end("ok");
          held.forget(h);
        } else if (s === "lost" && h.unsure) unconfirmed(h, kind.call, "lost_on_retry");
        else lose(h, s, true);
      });
    }
  };

  const self = (h: HeldJob) => h;
  const ackKind: CallKind<HeldJob> = {
    call: "ack",
    holder: self,
    send: (ls, b) => ls.store.ack(b.map(ackItemOf)),
    onOk: (ls, h) =>
      events.emit("succeeded", {
        lane: ls.config.name,
        jobId: h.job.id,
        task: h.job.task,
        attempt: h.job.attempt,
        runMs: clock.now() - h.startedAt,
      }),
    requeue: (p, h) => p.acks.push(h),
  };
  const nackKind: CallKind<NackEntry> = {
    call: "nack",
    holder: (n) => n.h,
    send: (ls, b) => ls.store.nack(b.map((n) => withReport(n.item, n.h))),
    onOk: (ls, { h, item }) => {
      const ref = {
        lane: ls.config.name,
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
    requeue: (p, n) => p.nacks.push(n),
  };
  const releaseKind: CallKind<HeldJob> = {
    call: "release",
    holder: self,
    send: (ls, b) =>
      ls.store.release(
        b.map((h) =>
          withReport(
            h.releaseAt === undefined
              ? { lock: h.job.lock, uncounted: true as const }
              : { lock: h.job.lock, uncounted: true as const, runAt: h.releaseAt },
            h,
          ),
        ),
      ),
    onOk: () => {},
    requeue: (p, h) => p.releases.push(h),
  };

  const flushLane = async (ls: LaneState, p: Pending): Promise<void> => {
    await Promise.all([
      sendBatched(ls, ackKind, p.acks),
      sendBatched(ls, nackKind, p.nacks),
      sendBatched(ls, releaseKind, p.releases),
    ]);
  };

  const stopRetrying = () => {
    retriesStopped = true;
    for (const [h, { timer, call }] of retrying) {
      clock.clearTimeout(timer as never);
      unconfirmed(h, call, "stopped");
    }
    retrying.clear();
  };

  const settle = (h: HeldJob, ending: Ending) => {
    if (h.settled) return;
    h.settled = true;
    h.finishing = true;
    if (h.timer !== undefined) clock.clearTimeout(h.timer as never);
    const p = pendingFor(h.lane);
    if (ending.kind === "success") {
      p.acks.push(h);
      h.telemetry?.settling(ACK);
    } else if (ending.kind === "release") {
      if (ending.runAt !== undefined) h.releaseAt = ending.runAt;
      p.releases.push(h);
      h.telemetry?.settling(RELEASE);
    } else if (ending.kind === "dead") {
      p.nacks.push({ h, item: { lock: h.job.lock, dead: true, error: ending.error } });
      h.telemetry?.settling({ kind: "dead", error: ending.error, cause: undefined });
    } else {
      const task = h.task;
      const unrecoverable = ending.error instanceof UnrecoverableError;
      const error = toJobError(
        ending.error,
        ending.reason ?? (unrecoverable ? "unrecoverable" : "error"),
      );
      if (!task || unrecoverable || h.job.attempt >= task.retry.maxAttempts) {
        p.nacks.push({ h, item: { lock: h.job.lock, dead: true, error } });
        h.telemetry?.settling({ kind: "dead", error, cause: ending.error });
      } else {
        const runAt = clock.now() + backoffMs(task.retry, h.job.attempt, random);
        p.nacks.push({ h, item: { lock: h.job.lock, runAt, error } });
        h.telemetry?.settling({ kind: "retry", error, cause: ending.error, runAt });
      }
    }
    scheduleFlush();
  };

  return { settle, lose, flushAll, scheduleFlush, stopRetrying };
}
