/**
 * The worker's loop: which lane to serve, and how much to take from it.
 *
 *   select a lane ──► reserve ≤ min(room, batchSize) ──► dispatch each job to the runners
 *        ▲               │ up to numIterations batches,
 *        │               │ leaving early on an empty or short one
 *        └───────────────┘
 *
 * A stay on a lane ends early when a batch comes back empty or short (the lane is then
 * known empty): staying would only cost another, empty, reserve.
 *
 * Idle: when every lane is known empty, the worker long-polls the selected lane for its
 * longPollMs, never spinning. A publish from this process ends that wait at once. So does
 * the time at which another lane has a job falling due (`nextDueAt`: learned from that
 * lane's last reserve, or a retry this worker scheduled): the backend wakes a poll for its
 * own lane's due jobs, but no backend can wake a poll on another lane.
 *
 * Room: the worker holds at most `concurrency + prefetch` unfinished jobs (a finished job
 * whose settle is still in flight no longer counts). While a lane has work,
 * the next reserve is sent before the batch just received is dispatched, within that
 * bound, so the backend round trip overlaps with running the batch.
 *
 * Suspects (poison isolation): a job whose lease ran out on an earlier delivery may be what
 * ended its last worker (ReservedJob.suspect). It runs alone: the loop stops reserving,
 * lets every job it holds finish, runs the suspect with nothing else held, and only then
 * reserves again. If it ends the process once more, it takes no other job with it. A
 * second suspect received meanwhile is handed back at once (released, uncounted) for a
 * later turn, here or on another worker. Each reserve tells the backend how many of its
 * jobs start at once (`startNow`): the rest are prefetched, and a crash hands them back
 * without spending an attempt.
 *
 * Failures: a lane whose reserve or probe throws is set aside with a back-off of its own
 * while the loop serves the others (lane-health.ts); the selector sees only the lanes not
 * set aside. The loop waits only when every lane is set aside.
 */
import type { Capabilities, ReservedJob, ReserveResult } from "../adapter.ts";
import type { Clock, TimerHandle } from "../clock.ts";
import { sleep } from "../clock.ts";
import { ClosedError } from "../errors.ts";
import type { TasklaneEventBus } from "../events.ts";
import type { SelectionContext, Selector } from "../selectors/selector.ts";
import type { AnyTask } from "../task.ts";
import { createHeldJob, type HeldJob } from "./held-job.ts";
import type { HeldJobs } from "./held-jobs.ts";
import { createLaneHealth } from "./lane-health.ts";
import { freshHint, type LaneState, setCount, setHint } from "./lane-state.ts";
import type { RunnerPool } from "./runner-pool.ts";
import type { Settler } from "./settler.ts";
import { bump, type WorkerMetrics } from "./worker-metrics.ts";
import { MAX_ERROR_BACKOFF_MS } from "./worker-options.ts";

export interface LaneLoopDeps {
  clock: Clock;
  events: TasklaneEventBus;
  capabilities: Capabilities;
  tasks: ReadonlyMap<string, AnyTask>;
  lanes: readonly LaneState[];
  selector: Selector;
  pool: RunnerPool<HeldJob>;
  held: HeldJobs;
  settler: Settler;
  metrics: WorkerMetrics;
  concurrency: number;
  prefetch: number;
  hintTtlMs: number;
  errorBackoffMs: number;
  /** Aborted when the worker begins to stop: the loop ends, a long poll ends at once. */
  stopping: AbortSignal;
}

export interface LaneLoop {
  /** Runs until the worker stops (or the adapter is closed under it). */
  run(): Promise<void>;
  /**
   * This process published to `laneName`: forget its hint, and end a long poll elsewhere;
   * with `dueAt` (every job delayed), do that when the earliest falls due instead.
   */
  onLocalPublish(laneName: string, dueAt?: number): void;
  /** End the current long poll, if any. */
  abortPoll(): void;
  /** This worker scheduled a retry of a job of `ls` at `runAt` (accepted by the backend). */
  retryScheduled(ls: LaneState, runAt: number): void;
}

/** A reserve in flight: its limit, and the lane's count of local publishes when it was sent. */
type PendingReserve = Promise<ReserveResult> & { limit: number; publishes: number };

export function createLaneLoop(deps: LaneLoopDeps): LaneLoop {
  const { clock, events, capabilities: caps, tasks, lanes, selector, pool, held } = deps;
  const { settler, metrics, concurrency, prefetch, hintTtlMs, errorBackoffMs, stopping } = deps;
  /** Jobs this worker may hold at once: running plus prefetched. */
  const capacity = concurrency + prefetch;
  /** Aborts the current long poll (shutdown, or a local publish to another lane). */
  let pollController: AbortController | undefined;
  /** The lane of the current reserve call. */
  let pollLane: LaneState | undefined;
  /** Whether the current reserve call is a long poll (it may wait). */
  let longPolling = false;
  /** Ends the current long poll when a job of another lane falls due. */
  let dueTimer: TimerHandle | undefined;
  let drainedEmitted = false;
  /** The cap a selector put on the turn it is choosing (`limitTurn`), if any. */
  let turnCap: number | undefined;
  /** Resolves when the worker begins to stop. */
  const stopped = new Promise<void>((resolve) => {
    if (stopping.aborted) resolve();
    else stopping.addEventListener("abort", () => resolve(), { once: true });
  });
  /** A suspect held to run alone (see the header), until its run has ended. */
  let quarantine: HeldJob | undefined;

  const hintOf = (ls: LaneState) => freshHint(ls, clock.now(), hintTtlMs);

  /**
   * A long poll's length allows for the next probe of a set-aside lane (see serveLane);
   * when a probe ends, the poll on another lane ends too, so the loop serves the lane that
   * is back, or waits again allowing for the lane's new back-off.
   */
  const endPollElsewhere = (ls: LaneState) => {
    if (pollLane !== ls && pollController && !pollController.signal.aborted) {
      pollController.abort();
    }
  };
  const health = createLaneHealth({
    clock,
    lanes,
    errorBackoffMs,
    onRejoin: (ls, ready) => {
      if (stopping.aborted) return;
      setCount(ls, ready, clock.now());
      endPollElsewhere(ls);
    },
    onProbeError: (ls, error) => {
      if (stopping.aborted) return;
      events.emit("error", { error, during: "probe", lane: ls.config.name });
      endPollElsewhere(ls);
    },
  });

  const selection: SelectionContext = {
    get lanes() {
      return health.usable().map((l) => l.lane);
    },
    readyHint: (lane) => {
      const ls = lanes.find((l) => l.lane === lane);
      return ls ? hintOf(ls) : undefined;
    },
    probe: async (lane) => {
      const ls = lanes.find((l) => l.lane === lane);
      if (!ls) return 0;
      const publishes = ls.localPublishes;
      let n: number;
      try {
        n = await ls.store.probe();
      } catch (error) {
        if (error instanceof ClosedError) throw error;
        // This lane's failure is the lane's, not the selection's: set it aside, and to the
        // selector it is a lane with nothing to take.
        events.emit("error", { error, during: "probe", lane: ls.config.name });
        health.failed(ls);
        return 0;
      }
      // A publish from this process overtook the probe: "empty" may predate its job. The
      // lane holds it unless another worker took it (the reserve tells); its hint stays
      // unknown (onLocalPublish), or the loop would long-poll elsewhere with it waiting.
      if (n === 0 && ls.localPublishes !== publishes) return 1;
      setCount(ls, n, clock.now());
      // A lane counted empty whose job has fallen due meanwhile counts as holding it (see
      // freshHint): a probe sent before the due time may answer after it, and the reserve
      // tells. Taken as empty, the loop would long-poll another lane with the job due.
      return hintOf(ls) ?? n;
    },
    limitTurn: (maxJobs) => {
      turnCap = Math.max(1, Math.floor(maxJobs) || 1);
    },
  };

  const onLocalPublish = (laneName: string, dueAt?: number) => {
    const ls = lanes.find((l) => l.config.name === laneName);
    if (!ls) return;
    if (dueAt !== undefined) {
      dueLater(ls, dueAt);
      return;
    }
    ls.localPublishes++;
    setCount(ls, undefined, clock.now());
    // End a long poll on another lane so the new job starts now, not after longPollMs. A
    // poll on this very lane is woken by the backend itself (the contract requires it):
    // aborting it would only cost a round trip.
    if (pollLane !== ls && pollController && !pollController.signal.aborted) pollController.abort();
  };

  const clearDueTimer = () => {
    if (dueTimer !== undefined) clock.clearTimeout(dueTimer);
    dueTimer = undefined;
  };

  /**
   * While a long poll waits, arm a timer for the earliest time another lane has a job
   * falling due; it ends the poll, and the selector, finding that lane no longer known
   * empty, serves it.
   */
  const armDueTimer = () => {
    clearDueTimer();
    const controller = pollController;
    if (!longPolling || controller === undefined || controller.signal.aborted) return;
    let at = Number.POSITIVE_INFINITY;
    for (const l of lanes) {
      if (l !== pollLane && l.nextDueAt !== undefined && l.nextDueAt < at) at = l.nextDueAt;
    }
    if (at === Number.POSITIVE_INFINITY) return;
    dueTimer = clock.setTimeout(
      () => {
        dueTimer = undefined;
        controller.abort();
      },
      Math.max(0, at - clock.now()),
    );
  };

  /** A job of `ls` falls due at `runAt` (a retry this worker scheduled, a delayed publish). */
  const dueLater = (ls: LaneState, runAt: number) => {
    // Due at runAt on a backend that keeps times to the millisecond; on a coarser one
    // (SQS: whole seconds, rounded up) by the end of that step.
    const dueAt = runAt + Math.max(0, caps.timeResolutionMs - 1);
    if (ls.nextDueAt === undefined || dueAt < ls.nextDueAt) ls.nextDueAt = dueAt;
    // A poll on this very lane is woken by the backend (the contract requires it).
    if (longPolling && pollLane !== ls) armDueTimer();
  };

  const dispatch = (ls: LaneState, job: ReservedJob) => {
    const h = createHeldJob(ls, job, tasks.get(job.task), clock.now());
    held.hold(h);
    drainedEmitted = false;
    if (job.suspect === true) {
      // One suspect at a time: holding a second while the first runs would put it at risk.
      if (quarantine === undefined) quarantine = h;
      else settler.settle(h, { kind: "release" });
      return;
    }
    pool.dispatch(ls.waiting, h);
  };

  /**
   * The quarantine turn: wait until nothing else of this worker runs or waits to run, run
   * the suspect alone, and wait until its run has ended. At a stop the suspect, if it has
   * not started, is handed back with the other unstarted jobs.
   */
  const runQuarantine = async (h: HeldJob) => {
    while (!stopping.aborted && pool.active > 0) await pool.nextSlotFree();
    // Runs that ended may still wait for their ack's answer: a crash now would cost them.
    await Promise.race([held.atMost(1), stopped]);
    if (stopping.aborted) return;
    pool.dispatch(h.lane.waiting, h);
    while (!stopping.aborted && pool.active > 0) await pool.nextSlotFree();
    quarantine = undefined;
  };

  /** Reserved while stopping: hand it back at once, unstarted and uncounted. */
  const dispatchRelease = (ls: LaneState, job: ReservedJob) => {
    const h = createHeldJob(ls, job, undefined, clock.now());
    held.hold(h);
    settler.settle(h, { kind: "release" });
  };

  /**
   * Whether a reserve is worth making while `holding` jobs are held and unfinished: a
   * slot is idle, or (with prefetch) the buffer of unstarted jobs has room for a whole
   * refill. Refilling only when the buffer has drained keeps batches full instead of
   * reserving one job per freed slot.
   */
  const hasRoom = (ls: LaneState, holding: number) => {
    const room = capacity - holding;
    return room >= 1 && (holding < concurrency || room >= Math.min(ls.config.batchSize, prefetch));
  };

  const waitForRoom = async (ls: LaneState) => {
    while (!stopping.aborted && !hasRoom(ls, pool.active)) await pool.nextSlotFree();
  };

  const countReserve = (ls: LaneState, got: number) => {
    bump(metrics.reserves, ls.config.name);
    if (got === 0) bump(metrics.emptyReserves, ls.config.name);
    else bump(metrics.jobs, ls.config.name, got);
  };

  /** Reserve on `ls` with room for `heldNow` jobs already held. */
  const reserveFrom = (
    ls: LaneState,
    waitMs: number,
    heldNow: number,
    cap = Number.POSITIVE_INFINITY,
  ): PendingReserve => {
    const limit = Math.min(capacity - heldNow, ls.config.batchSize, caps.maxBatch, cap);
    const promise = ls.store.reserve({
      limit,
      leaseMs: ls.config.leaseMs,
      waitMs,
      // Slots free now; a slot that frees before the answer arrives only makes a job start
      // earlier than the backend assumes, never later (see ReserveOptions.startNow).
      startNow: Math.max(0, Math.min(limit, concurrency - heldNow)),
      ...(pollController ? { signal: pollController.signal } : {}),
    });
    return Object.assign(promise, { limit, publishes: ls.localPublishes });
  };

  /**
   * A stay on one lane: up to numIterations reserves. While the lane has work, the next
   * reserve is sent *before* the jobs just received are dispatched (when the room rule
   * allows it counting them), so the backend round trip overlaps with running them.
   * Without this, jobs that finish quickly leave the worker idle for one round trip per
   * batch.
   *
   * A turn the selector capped (`limitTurn`) is one reserve of at most `cap` jobs that
   * never long-polls: a quick look at a lane, not a stay.
   */
  const serveLane = async (ls: LaneState, cap?: number): Promise<number> => {
    const iterations = cap === undefined ? ls.config.numIterations : 1;
    let ahead: PendingReserve | undefined;
    let taken = 0;
    try {
      for (let i = 0; i < iterations && !stopping.aborted; i++) {
        let pending = ahead;
        ahead = undefined;
        if (pending === undefined) {
          await waitForRoom(ls);
          if (stopping.aborted) return taken;
          const allEmpty = health.usable().every((l) => hintOf(l) === 0);
          let waitMs = 0;
          if (i === 0 && allEmpty && cap === undefined) {
            // A set-aside lane's probe falls due during the poll: end the poll then.
            const probeInMs = health.untilNextProbeMs() ?? Number.POSITIVE_INFINITY;
            waitMs = Math.min(ls.config.longPollMs, caps.maxWaitMs, Math.max(1, probeInMs));
            // A lane set aside is not known to be empty: no "drained" while one is.
            if (!drainedEmitted && held.size === 0 && health.usable().length === lanes.length) {
              drainedEmitted = true;
              events.emit("drained", { lanes: lanes.map((l) => l.config.name) });
            }
          }
          pollController = new AbortController();
          pollLane = ls;
          longPolling = waitMs > 0;
          try {
            pending = reserveFrom(ls, waitMs, pool.active, cap);
            armDueTimer();
            await pending;
          } finally {
            clearDueTimer();
            pollController = undefined;
            pollLane = undefined;
            longPolling = false;
          }
        }
        const { limit, publishes } = pending;
        const result = await pending;
        const got = result.jobs.length;
        taken += got;
        countReserve(ls, got);
        let ready = result.ready ?? (got < limit ? 0 : undefined);
        // A publish from this process overtook the reserve: "empty" may predate its job.
        if (ready === 0 && ls.localPublishes !== publishes) ready = undefined;
        setHint(ls, ready, clock.now(), ready === 0 ? result.nextDueAt : undefined);
        if (stopping.aborted) {
          for (const job of result.jobs) dispatchRelease(ls, job);
          return taken;
        }
        // Leave the lane when it is known empty: an empty batch, or a short one (the
        // backend had no more). Staying would cost one more, empty, reserve per visit.
        const leave = got === 0 || ls.hint === 0;
        if (!leave && i + 1 < iterations && hasRoom(ls, pool.active + got)) {
          // The jobs just received count as held: they are dispatched right below.
          ahead = reserveFrom(ls, 0, pool.active + got);
          // Never an unhandled rejection: the next iteration (or the finally) awaits it.
          ahead.catch(() => {});
        }
        for (const job of result.jobs) dispatch(ls, job);
        // A suspect waits for its turn alone: reserve nothing more until it has run.
        if (leave || quarantine !== undefined) return taken;
      }
      return taken;
    } finally {
      if (ahead !== undefined) {
        // The stay ended (stop, an error, or the last iteration raced the reserve) with a
        // reserve still in flight: its jobs are held, so hand them back or run them.
        const late = await ahead.catch(() => undefined);
        if (late !== undefined) countReserve(ls, late.jobs.length);
        for (const job of late?.jobs ?? []) {
          if (stopping.aborted) dispatchRelease(ls, job);
          else dispatch(ls, job);
        }
      }
    }
  };

  const run = async () => {
    let backoff = errorBackoffMs;
    let lastCappedEmpty = false;
    while (!stopping.aborted) {
      /** The lane being served, to set aside if its turn throws. */
      let serving: LaneState | undefined;
      try {
        if (quarantine !== undefined) {
          await runQuarantine(quarantine);
          continue;
        }
        health.probeDue();
        if (health.usable().length === 0) {
          // Every lane is set aside: wait for a probe to bring one back.
          await health.waitForChange(stopping);
          continue;
        }
        turnCap = undefined;
        const lane = await selector.select(selection);
        let cap = turnCap;
        const usable = health.usable();
        // A capped turn never long-polls; two in a row that find every lane empty would
        // spin. The second one is served as a normal turn instead, which waits.
        if (cap !== undefined && lastCappedEmpty && usable.every((l) => hintOf(l) === 0)) {
          cap = undefined;
        }
        // A lane set aside while the selector chose (its probe failed), or not one of the
        // lanes: the first usable one instead.
        const ls = usable.find((l) => l.lane === lane) ?? usable[0];
        if (!ls) continue;
        bump(metrics.selected, ls.config.name);
        serving = ls;
        const got = await serveLane(ls, cap);
        health.served(ls);
        lastCappedEmpty = cap !== undefined && got === 0;
        backoff = errorBackoffMs;
      } catch (error) {
        if (stopping.aborted) break;
        if (error instanceof ClosedError) {
          events.emit("error", { error, during: "reserve" });
          break;
        }
        if (serving !== undefined) {
          // One lane's failure: the others go on at once (see lane-health.ts).
          events.emit("error", { error, during: "reserve", lane: serving.config.name });
          health.failed(serving);
          continue;
        }
        events.emit("error", { error, during: "loop" });
        try {
          await sleep(clock, backoff, stopping);
        } catch {
          break;
        }
        backoff = Math.min(backoff * 2, MAX_ERROR_BACKOFF_MS);
      }
    }
  };

  return {
    run,
    onLocalPublish,
    abortPoll: () => pollController?.abort(),
    retryScheduled: dueLater,
  };
}
