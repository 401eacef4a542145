/**
 * The discrete-event simulation: virtual time only, nothing waits for real. Every lane
 * gets its arrival stream (seeded per lane, so every selector sees the very same jobs
 * with the very same durations), N workers run tasklane's worker loop over it, and every
 * backend request is counted.
 *
 * The worker loop mirrors packages/core/src/worker.ts:
 *   select a lane → up to numIterations reserves of min(room, batchSize), each after
 *   waiting for room, leaving early on an empty or short one → select again.
 * Room is concurrency + prefetch − jobs held (running or prefetched), and a reserve is
 * made when a slot is idle or the prefetch buffer has room for a whole batch (the
 * worker's hasRoom rule); prefetched jobs start as slots free, highest lane priority
 * first.
 * A reserve waits (long poll, the lane's longPollMs) only on the first batch of a stay and
 * only when every lane's hint is 0; otherwise it returns at once. Hints are the ready
 * count learned from the worker's own last reserve or probe of the lane, trusted for
 * hintTtlMs. A selector may cap a turn (SelectionContext.limitTurn): the stay is then one
 * reserve of min(room, batchSize, cap) jobs that never waits; as in the worker, a
 * capped turn right after an empty one while every hint is 0 is served as a normal turn.
 */
import {
  createSelector,
  type Lane,
  type RandomSource,
  type SelectionContext,
  type Selector,
} from "@tasklane/core";
import { createArrivals } from "./arrivals.ts";
import { EventHeap } from "./heap.ts";
import type { LaneSpec, SimulationOptions, WorkloadSpec } from "./model.ts";
import { sampleDuration, stream } from "./random.ts";

export interface LaneResult {
  name: string;
  priority: number;
  arrived: number;
  /** Jobs started before the end. */
  served: number;
  meanWaitMs: number;
  p50WaitMs: number;
  p99WaitMs: number;
  /** Longest wait of a job that started. */
  maxServedWaitMs: number;
  /** When (ms from the start) the job with the longest served wait arrived. */
  maxServedWaitArrivedAtMs: number;
  /** Age at the end of the oldest job still waiting (0 if none). */
  oldestWaitingMs: number;
  /** max(maxServedWaitMs, oldestWaitingMs): the starvation measure. */
  longestWaitMs: number;
  waitingAtEnd: number;
  /** Fraction of all worker slot-time spent running this lane's jobs. */
  share: number;
  /** Times a worker selected this lane. */
  selections: number;
}

export interface RunResult {
  workload: string;
  selector: string;
  lanes: LaneResult[];
  served: number;
  /** Receives (including empty ones and long polls) plus probes. */
  requests: number;
  receives: number;
  emptyReceives: number;
  probes: number;
  /** Long polls that ended empty at their deadline. */
  idlePolls: number;
  requestsPerJob: number;
  requestsPerSec: number;
  /** Fraction of worker slot-time spent running jobs. */
  utilisation: number;
  selections: number;
  /** Depth of every lane and busy slots over time, when `timelineMs` was given. */
  timeline?: Array<{ atMs: number; queued: number[]; busySlots: number }>;
}

/**
 * What every lane holds right now, in configuration order: the jobs waiting, how long
 * the oldest has waited (0 when none), and the lane's batch size. No real selector can
 * know this; the simulator's `oracle` variant reads it to bound what any selector could
 * reach.
 */
export type Peek = () => ReadonlyArray<{ ready: number; oldestWaitMs: number; batchSize: number }>;

interface LaneRuntime {
  index: number;
  spec: LaneSpec;
  lane: Lane;
  arrivals: number[];
  durations: number[];
  head: number;
  waiters: WorkerRuntime[];
  waits: number[];
  busyMs: number;
  arrived: number;
  selections: number;
  maxWait: number;
  maxWaitArrivedAt: number;
}

interface WorkerRuntime {
  id: number;
  selector: Selector;
  context: SelectionContext;
  hints: Array<number | undefined>;
  hintAt: number[];
  running: number;
  lane: LaneRuntime | undefined;
  iteration: number;
  /**
   * The selector's cap on the current turn (SelectionContext.limitTurn): one reserve of
   * at most this many jobs. Undefined: a normal stay.
   */
  turnLimit: number | undefined;
  /** The last turn was capped and came back empty (the worker's guard against spinning). */
  lastCappedEmpty: boolean;
  /**
   * Prefetched jobs: reserved, holding a lease, waiting for a slot of this worker. They
   * start in lane-priority order (then oldest first), as the worker's pool starts them.
   */
  buffer: Array<{ lane: LaneRuntime; arrivedAt: number; duration: number; availableAt: number }>;
  /** Continuation waiting for room (a free slot, or room in the prefetch buffer). */
  resume: (() => void) | undefined;
  /** The long poll in progress, if any. */
  poll: { lane: LaneRuntime; limit: number; done: boolean } | undefined;
  probes: number;
}

export async function simulate(
  workload: WorkloadSpec,
  selectorName: string,
  options: SimulationOptions,
  /** Builds each worker's selector; default: the built-in named `selectorName`. */
  makeSelector: (
    workerId: number,
    random: RandomSource,
    now: () => number,
    peek: Peek,
  ) => Selector = (_id, random) => createSelector(selectorName, { random }),
): Promise<RunResult> {
  const { durationMs: endMs, requestMs, hintTtlMs } = options;
  const largestBatch = Math.max(...workload.lanes.map((l) => l.batchSize));
  // The worker's default: max(B, 2B − concurrency), B the largest batch size.
  const prefetch =
    options.prefetch ?? Math.max(largestBatch, 2 * largestBatch - workload.concurrency);
  const capacity = workload.concurrency + prefetch;
  const heap = new EventHeap();
  let now = 0;
  let requests = 0;
  let receives = 0;
  let emptyReceives = 0;
  let probes = 0;
  let idlePolls = 0;
  let selections = 0;

  const lanes: LaneRuntime[] = workload.lanes.map((spec, index) => ({
    index,
    spec,
    lane: { name: spec.name, priority: spec.priority },
    arrivals: [],
    durations: [],
    head: 0,
    waiters: [],
    waits: [],
    busyMs: 0,
    arrived: 0,
    selections: 0,
    maxWait: 0,
    maxWaitArrivedAt: 0,
  }));
  const laneOf = new Map<Lane, LaneRuntime>(lanes.map((l) => [l.lane, l]));
  const laneList: ReadonlyArray<Lane> = lanes.map((l) => l.lane);
  const queued = (l: LaneRuntime) => l.arrivals.length - l.head;
  const peek: Peek = () =>
    lanes.map((l) => ({
      ready: queued(l),
      oldestWaitMs: queued(l) > 0 ? now - l.arrivals[l.head]! : 0,
      batchSize: l.spec.batchSize,
    }));

  // ── arrivals ──────────────────────────────────────────────────────────────────────
  for (const l of lanes) {
    const next = createArrivals(
      l.spec.arrivals,
      stream(options.seed, `arrivals:${l.spec.name}`),
      endMs,
    );
    const durationRandom = stream(options.seed, `durations:${l.spec.name}`);
    const arrive = () => {
      l.arrivals.push(now);
      l.durations.push(sampleDuration(l.spec.duration, durationRandom));
      l.arrived++;
      const waiter = l.waiters.shift();
      if (waiter?.poll !== undefined) {
        // A long poll returns as soon as a job is there (its response leg still costs time).
        waiter.poll.done = true;
        const { limit } = waiter.poll;
        waiter.poll = undefined;
        respond(waiter, l, limit, take(waiter, l, limit, now + requestMs / 2), requestMs / 2);
      }
      const at = next();
      if (at !== undefined) heap.push(at, arrive);
    };
    const first = next();
    if (first !== undefined) heap.push(first, arrive);
  }

  // ── hints ─────────────────────────────────────────────────────────────────────────
  const hintOf = (w: WorkerRuntime, l: LaneRuntime): number | undefined => {
    const hint = w.hints[l.index];
    return hint !== undefined && now - w.hintAt[l.index]! <= hintTtlMs ? hint : undefined;
  };
  const setHint = (w: WorkerRuntime, l: LaneRuntime, hint: number | undefined) => {
    w.hints[l.index] = hint;
    w.hintAt[l.index] = now;
  };

  // ── jobs ──────────────────────────────────────────────────────────────────────────
  /** Start one job on `w` at `startAt` (a slot is taken now, freed when it ends). */
  const start = (
    w: WorkerRuntime,
    l: LaneRuntime,
    arrivedAt: number,
    duration: number,
    startAt: number,
  ) => {
    const wait = startAt - arrivedAt;
    l.waits.push(wait);
    if (wait > l.maxWait) {
      l.maxWait = wait;
      l.maxWaitArrivedAt = arrivedAt;
    }
    l.busyMs += Math.max(0, Math.min(startAt + duration, endMs) - startAt);
    w.running++;
    heap.push(startAt + duration, () => {
      w.running--;
      const next = nextBuffered(w);
      if (next !== undefined)
        start(w, next.lane, next.arrivedAt, next.duration, Math.max(now, next.availableAt));
      const resume = w.resume;
      if (resume !== undefined) {
        w.resume = undefined;
        resume();
      }
    });
  };

  /** The prefetched job the worker's pool starts next: highest lane priority, then oldest. */
  const nextBuffered = (w: WorkerRuntime) => {
    if (w.buffer.length === 0) return undefined;
    let best = 0;
    for (let i = 1; i < w.buffer.length; i++) {
      const a = w.buffer[i]!;
      const b = w.buffer[best]!;
      if (a.lane.spec.priority > b.lane.spec.priority) best = i;
    }
    return w.buffer.splice(best, 1)[0];
  };

  /**
   * Take up to `limit` jobs for `w`, arriving at the worker at `startAt`: each starts
   * then if a slot is free, or waits in the worker's prefetch buffer. Returns how many.
   */
  const take = (w: WorkerRuntime, l: LaneRuntime, limit: number, startAt: number): number => {
    const count = Math.min(limit, queued(l));
    for (let i = 0; i < count; i++) {
      const arrivedAt = l.arrivals[l.head]!;
      const duration = l.durations[l.head]!;
      l.head++;
      if (w.running < workload.concurrency) start(w, l, arrivedAt, duration, startAt);
      else w.buffer.push({ lane: l, arrivedAt, duration, availableAt: startAt });
    }
    if (l.head > 65_536 && l.head * 2 > l.arrivals.length) {
      l.arrivals.splice(0, l.head);
      l.durations.splice(0, l.head);
      l.head = 0;
    }
    return count;
  };

  /** Jobs `w` holds: running and prefetched. */
  const holding = (w: WorkerRuntime) => w.running + w.buffer.length;
  /**
   * The worker's rule for making a reserve on a lane of batch size `batch`: a slot is
   * idle, or the prefetch buffer has room for a whole refill.
   */
  const hasRoom = (w: WorkerRuntime, batch: number) => {
    const held = holding(w);
    const room = capacity - held;
    return room >= 1 && (held < workload.concurrency || room >= Math.min(batch, prefetch));
  };

  // ── the worker loop ───────────────────────────────────────────────────────────────
  const selectNext = (w: WorkerRuntime) => heap.push(now, () => runSelection(w));

  const runSelection = async (w: WorkerRuntime) => {
    if (!hasRoom(w, largestBatch)) {
      w.resume = () => selectNext(w);
      return;
    }
    const before = w.probes;
    w.turnLimit = undefined;
    const lane = await w.selector.select(w.context);
    if (
      w.turnLimit !== undefined &&
      w.lastCappedEmpty &&
      lanes.every((other) => hintOf(w, other) === 0)
    ) {
      w.turnLimit = undefined;
    }
    const l = laneOf.get(lane);
    if (l === undefined) throw new Error(`selector ${w.selector.name} returned an unknown lane`);
    selections++;
    l.selections++;
    w.lane = l;
    w.iteration = 0;
    // Probes are sequential round trips before the first reserve.
    heap.push(now + (w.probes - before) * requestMs, () => serve(w));
  };

  const serve = (w: WorkerRuntime): void => {
    const l = w.lane!;
    const iterations = w.turnLimit === undefined ? l.spec.numIterations : 1;
    if (w.iteration >= iterations) {
      selectNext(w);
      return;
    }
    if (!hasRoom(w, l.spec.batchSize)) {
      w.resume = () => serve(w);
      return;
    }
    const limit = Math.min(
      capacity - holding(w),
      l.spec.batchSize,
      w.turnLimit ?? Number.POSITIVE_INFINITY,
    );
    const allEmpty = lanes.every((other) => hintOf(w, other) === 0);
    // A capped turn is a quick look: it never waits (see SelectionContext.limitTurn).
    const waitMs =
      w.iteration === 0 && allEmpty && w.turnLimit === undefined ? l.spec.longPollMs : 0;
    requests++;
    receives++;
    const got = take(w, l, limit, now + requestMs);
    if (got > 0 || waitMs === 0) {
      respond(w, l, limit, got, requestMs);
      return;
    }
    const poll = { lane: l, limit, done: false };
    w.poll = poll;
    l.waiters.push(w);
    heap.push(now + waitMs, () => {
      if (poll.done) return;
      poll.done = true;
      w.poll = undefined;
      l.waiters.splice(l.waiters.indexOf(w), 1);
      idlePolls++;
      respond(w, l, limit, 0, 0);
    });
  };

  const respond = (
    w: WorkerRuntime,
    l: LaneRuntime,
    limit: number,
    got: number,
    afterMs: number,
  ) => {
    const readyAfter = queued(l);
    heap.push(now + afterMs, () => {
      w.lastCappedEmpty = w.turnLimit !== undefined && got === 0;
      if (options.backend === "exact") setHint(w, l, readyAfter);
      else setHint(w, l, got < limit ? 0 : undefined);
      if (got === 0) {
        emptyReceives++;
        return selectNext(w);
      }
      w.iteration++;
      // The variant worker loop: a short batch (or ready 0) already says the lane is
      // drained, so end the stay without the empty receive that would confirm it.
      const drained = options.backend === "exact" ? readyAfter === 0 : got < limit;
      if (options.leaveOnShortBatch !== false && drained) w.iteration = l.spec.numIterations;
      serve(w);
    });
  };

  // ── workers ───────────────────────────────────────────────────────────────────────
  const startRandom = stream(options.seed, "worker-start");
  const workers: WorkerRuntime[] = [];
  for (let id = 0; id < workload.workers; id++) {
    const selector = makeSelector(id, stream(options.seed, `selector:${id}`), () => now, peek);
    const w: WorkerRuntime = {
      id,
      selector,
      context: undefined as unknown as SelectionContext,
      hints: lanes.map(() => undefined),
      hintAt: lanes.map(() => 0),
      running: 0,
      lane: undefined,
      iteration: 0,
      turnLimit: undefined,
      lastCappedEmpty: false,
      buffer: [],
      resume: undefined,
      poll: undefined,
      probes: 0,
    };
    w.context = {
      lanes: laneList,
      readyHint: (lane) => hintOf(w, laneOf.get(lane)!),
      probe: (lane) => {
        const l = laneOf.get(lane)!;
        requests++;
        probes++;
        w.probes++;
        const count = queued(l);
        setHint(w, l, count);
        return Promise.resolve(count);
      },
      limitTurn: (maxJobs) => {
        w.turnLimit = Math.max(1, Math.floor(maxJobs) || 1);
      },
    };
    workers.push(w);
    heap.push(startRandom() * requestMs, () => runSelection(w));
  }

  const timeline: NonNullable<RunResult["timeline"]> = [];
  if (options.timelineMs !== undefined && options.timelineMs > 0) {
    const every = options.timelineMs;
    const sample = () => {
      let busySlots = 0;
      for (const w of workers) busySlots += w.running;
      timeline.push({ atMs: now, queued: lanes.map(queued), busySlots });
      heap.push(now + every, sample);
    };
    heap.push(0, sample);
  }

  // ── run ───────────────────────────────────────────────────────────────────────────
  for (;;) {
    const event = heap.pop();
    if (event === undefined || event.at > endMs) break;
    now = event.at;
    const pending = event.run();
    if (pending !== undefined) await pending;
  }
  now = endMs;

  // ── results ───────────────────────────────────────────────────────────────────────
  const capacityMs = workload.workers * workload.concurrency * endMs;
  let served = 0;
  let busyMs = 0;
  const laneResults = lanes.map((l): LaneResult => {
    const waits = Float64Array.from(l.waits).sort();
    served += waits.length;
    busyMs += l.busyMs;
    const oldest = queued(l) > 0 ? endMs - l.arrivals[l.head]! : 0;
    const maxServed = waits.length > 0 ? waits[waits.length - 1]! : 0;
    let sum = 0;
    for (const w of waits) sum += w;
    return {
      name: l.spec.name,
      priority: l.spec.priority,
      arrived: l.arrived,
      served: waits.length,
      meanWaitMs: waits.length > 0 ? sum / waits.length : 0,
      p50WaitMs: quantile(waits, 0.5),
      p99WaitMs: quantile(waits, 0.99),
      maxServedWaitMs: maxServed,
      maxServedWaitArrivedAtMs: l.maxWaitArrivedAt,
      oldestWaitingMs: oldest,
      longestWaitMs: Math.max(maxServed, oldest),
      waitingAtEnd: queued(l),
      share: l.busyMs / capacityMs,
      selections: l.selections,
    };
  });
  return {
    workload: workload.name,
    selector: selectorName,
    lanes: laneResults,
    served,
    requests,
    receives,
    emptyReceives,
    probes,
    idlePolls,
    requestsPerJob: served > 0 ? requests / served : Number.POSITIVE_INFINITY,
    requestsPerSec: requests / (endMs / 1000),
    utilisation: busyMs / capacityMs,
    selections,
    ...(options.timelineMs === undefined ? {} : { timeline }),
  };
}

/** Nearest-rank quantile of sorted values (0 when empty). */
export function quantile(sorted: Float64Array, q: number): number {
  if (sorted.length === 0) return 0;
  const rank = Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1));
  return sorted[rank]!;
}
