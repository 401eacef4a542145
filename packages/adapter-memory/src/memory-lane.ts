/*
 * Data structures of one memory lane, and the invariants that hold between calls:
 *
 * - `byId`: every stored job (any state) by id. De-duplication is a lookup here; a job
 *   leaves it only through retention or `delete`.
 * - Two binary heaps (`heap.ts`: keys in typed arrays beside the slots); a waiting or
 *   delayed job is in the heap of its state:
 *     `ready`   waiting jobs, keyed (−priority, dueAt, seq)  → what reserve takes next
 *     `delayed` delayed jobs, keyed (dueAt, seq)             → what falls due next
 *   They delete lazily (only cancel and delete remove from them, and both end the
 *   record), so their sifts never touch a record. `heap.size` counts live entries only.
 * - `leases` (`lease-index.ts`): active jobs by expiresAt → what expires next. A
 *   sorted linked list takes the in-order expiries (O(1) add and ack), a small heap the
 *   rest.
 * - `lists`: one intrusive doubly linked list per state, in order of entry (`entrySeq`
 *   ascends head to tail). They give exact counts in O(1), oldest-finished-first retention
 *   in O(1) per job, and `list()` paging: a cursor node parked in the list survives any
 *   insertion or removal around it, so iteration needs no snapshot (constant memory) and
 *   visits every job that stays in the state once; jobs entering the state after the
 *   iteration began (entrySeq above its start) are not visited.
 * - Time is lazy: `maintain(now)`, run first by every call, promotes due delayed jobs,
 *   reclaims expired leases (stall counting) and applies retention (bounded per call).
 *   Fencing never depends on it: a lock whose lease has expired is "lost" either way.
 * - No timer per job. While long polls wait there is at most one lane timer, armed for
 *   the earliest of the next delayed due time and the next lease expiry; puts, releases,
 *   resumes and freed concurrency slots serve waiters synchronously. Each waiter has one
 *   timer for its own deadline.
 * - Flows (`flows`, flow-links.ts): a blocked job is in its state's list and no heap. The
 *   jobs that take part in a flow have an entry in `flowLinks`; a job's end (finish, or a
 *   delete while pending) is counted in the jobs waiting for it through their links, in
 *   whichever lane they are, before the call returns. A lane without flows pays one size
 *   check per finish.
 */
import {
  type AckItem,
  type AdapterEvent,
  addSample,
  type CancelResult,
  type ChangeResult,
  type Clock,
  ClosedError,
  ConfigError,
  type DayStats,
  type DependencyView,
  dayOf,
  emptyDayStats,
  type FailureGroup,
  type FinishedState,
  type JobDebounce,
  type JobError,
  type JobEvent,
  type JobFilter,
  type JobFinishedEvent,
  type JobInfo,
  type JobPage,
  type JobReport,
  type JobState,
  type JobSummary,
  type LaneCounts,
  LaneFullError,
  type LaneStore,
  type LaneStoreOptions,
  type LifecycleEventType,
  type ListFilter,
  type ListOptions,
  type Lock,
  type LockStatus,
  type MoveResult,
  type NackItem,
  type NewJob,
  onlyState,
  type PutResult,
  type RateLimit,
  type ReleaseItem,
  type ReportItem,
  type ReservedJob,
  type ReserveOptions,
  type ReserveResult,
  type RetentionPolicy,
  type ScheduleFireResult,
  type SchedulePage,
  type ScheduleRecord,
  type ScheduleWrite,
  type ScheduleWriteResult,
  type TimerHandle,
} from "@tasklane/core/adapter";
import { ExpiryIndex } from "./expiry-index.ts";
import { Extras, type JobExtra } from "./extras.ts";
import { FailureGroups } from "./failure-groups.ts";
import { type DependencyEnd, FlowLinks } from "./flow-links.ts";
import { GroupStarts } from "./group-starts.ts";
import { GroupedReady } from "./grouped-ready.ts";
import { RecordHeap } from "./heap.ts";
import { JobRecord, ListNode } from "./job-record.ts";
import { LeaseIndex } from "./lease-index.ts";
import { applyReport, keepResult } from "./reports.ts";
import { ScheduleStore } from "./schedule-store.ts";
import {
  changedAtOf,
  decodeCursor,
  encodeCursor,
  type ListPosition,
  matches,
  ParkedCursors,
  statesOf,
  summaryOf,
} from "./search.ts";
import { StateList } from "./state-list.ts";

const DAY_MS = 86_400_000;
/** Longest timeout a Node timer honours; longer waits are re-armed when this one fires. */
const MAX_TIMER_MS = 2_147_483_647;
/** Finished jobs removed by retention per state per call, at most. */
const RETENTION_BUDGET = 256;
const DEFAULT_PAGE_SIZE = 100;
const MAX_PAGE_SIZE = 10_000;
/** Jobs a listPage call examines at most (its page may come back short, with a cursor). */
const SCAN_BUDGET = 10_000;
/** Jobs handed out between two macrotask turns at most (see `yieldDue`). */
const YIELD_EVERY_JOBS = 1000;
/** Days of stats kept per lane (oldest dropped first). */
const STATS_DAYS_KEPT = 400;

/**
 * A `list()` iterator parks a cursor node in its state's list between pages. A for-await
 * loop always ends the iterator (its `finally` takes the cursor out), but one driven by
 * hand and dropped half-way never runs it: the cursor would stay forever, and every walk
 * of that list would step over it. Once such an iterator is garbage, this takes its
 * cursor out.
 */
const abandonedCursors = new FinalizationRegistry<{ list: StateList; cursor: ListNode }>(
  ({ list, cursor }) => list.removeCursor(cursor),
);

/** What all lanes of one adapter share. */
export interface AdapterShared {
  readonly clock: Clock;
  readonly maxJobs: number;
  readonly maxBatch: number;
  closed: boolean;
  /** Jobs handed out by reserves that resolved without leaving the microtask queue. */
  handedSinceYield: number;
  emit(event: AdapterEvent): void;
  /** A lifecycle event (or a cancel of a job nobody holds), delivered after the operation. */
  report(type: LifecycleEventType | "canceled", lane: string, jobId: string): void;
  /** True while any job is watched (`watch`): only then do lanes report finishes. */
  watching: boolean;
  /** A job finished or left its lane: tell its watchers, after the operation. */
  finished(lane: string, jobId: string, state: JobFinishedEvent["state"]): void;
  /** The lanes of this adapter, to check a move's target. */
  readonly lanes: ReadonlyMap<string, MemoryLaneImpl>;
}

/** The lifecycle event each history entry reports (see LifecycleEventType). */
const LIFECYCLE: Partial<Record<JobEvent["event"], LifecycleEventType>> = {
  published: "published",
  reserved: "started",
  succeeded: "succeeded",
  retrying: "retrying",
  failed: "failed",
  stalled: "stalled",
  released: "released",
  retried: "retried",
  expired: "expired",
  moved: "moved",
};

interface RetentionRule {
  state: FinishedState;
  maxAgeMs: number | undefined;
  maxCount: number | undefined;
}

interface Waiter {
  limit: number;
  leaseMs: number;
  startNow: number;
  resolve: (result: ReserveResult) => void;
  timer: TimerHandle | undefined;
  signal: AbortSignal | undefined;
  onAbort: (() => void) | undefined;
}

/** A memory lane: every method of the contract, optional ones included. */
export type MemoryLane = Required<LaneStore>;

export class MemoryLaneImpl implements MemoryLane {
  readonly name: string;
  private readonly shared: AdapterShared;
  private readonly clock: Clock;

  private maxConcurrency = Number.POSITIVE_INFINITY;
  /** LaneStoreOptions.rateLimit; undefined: none. */
  private rateLimit: RateLimit | undefined = undefined;
  /**
   * Start times (reserve's now) of the jobs handed out in the current window, oldest
   * first, from `startsHead` on: the rate limit's log, kept only while it is set.
   */
  private starts: number[] = [];
  private startsHead = 0;
  private maxStalls = 0;
  private historyLimit = 0;
  private logLimit = 100;
  private retentionRules: RetentionRule[] = [];

  private readonly byId = new Map<string, JobRecord>();
  private readonly ready = new RecordHeap(false);
  /**
   * A lane opened with `groups` keeps its waiting jobs here instead of `ready` (fair
   * groups, grouped-ready.ts), and runs at most `groupLimit` jobs of one group at once,
   * and, with `groups.rateLimit`, at most that many starts of one group per window.
   */
  private grouped: GroupedReady | undefined = undefined;
  private groupLimit = Number.POSITIVE_INFINITY;
  private groupStarts: GroupStarts | undefined = undefined;
  private readonly delayed = new RecordHeap(false);
  private readonly leases = new LeaseIndex();
  private readonly lists: Record<JobState, StateList> = {
    waiting: new StateList(),
    delayed: new StateList(),
    blocked: new StateList(),
    active: new StateList(),
    succeeded: new StateList(),
    failed: new StateList(),
    canceled: new StateList(),
    expired: new StateList(),
  };
  /** Jobs published with an expiry, by expiry time (only they pay for it). */
  private readonly expiring = new ExpiryIndex();
  private readonly failureGroups = new FailureGroups();
  private readonly parked = new ParkedCursors();
  /** Tags, expiry, result, progress and logs, for the jobs that have any. */
  private readonly extras = new Extras();
  /** The flow links of the jobs that take part in a flow (flow-links.ts), by record. */
  private readonly flowLinks = new Map<JobRecord, FlowLinks>();
  /** Jobs this lane unblocked for another lane's call: long polls are served after it. */
  private unblockedLater = false;
  /**
   * Debounce windows (NewJob.debounce) by task and key: the job a window belongs to and
   * when it ends. An entry whose job has been handed out, or whose window ended, is stale
   * (replaced by the next put of its key, swept when the map grows).
   */
  private readonly debounces = new Map<string, { rec: JobRecord; until: number }>();
  private debounceSweepAt = 1024;
  private putSeq = 0;
  private tokenSeq = 0;
  private entrySeq = 0;
  private paused = false;

  private readonly waiters: Waiter[] = [];
  private wakeTimer: TimerHandle | undefined = undefined;
  private wakeAt = Number.NaN;

  private readonly days = new Map<string, DayStats>();
  private today: DayStats | undefined = undefined;
  private todayStart = 0;

  constructor(name: string, options: LaneStoreOptions, shared: AdapterShared) {
    this.name = name;
    this.shared = shared;
    this.clock = shared.clock;
    this.configure(options);
  }

  /** Apply (validated) lane options; a later `adapter.lane(name, options)` re-applies. */
  configure(options: LaneStoreOptions): void {
    this.maxConcurrency = options.maxConcurrency ?? Number.POSITIVE_INFINITY;
    this.rateLimit = options.rateLimit;
    if (this.rateLimit === undefined) {
      this.starts = [];
      this.startsHead = 0;
    }
    this.maxStalls = options.maxStalls;
    this.historyLimit = options.historyLimit;
    this.logLimit = options.logLimit ?? 100;
    this.retentionRules = retentionRules(options.retention);
    this.configureGroups(options.groups);
    // A higher maxConcurrency may let waiting long polls take jobs now.
    this.afterChange();
  }

  /** Fair groups on or off: the waiting jobs move to the structure that now serves them. */
  private configureGroups(groups: LaneStoreOptions["groups"]): void {
    this.groupLimit = groups?.concurrency ?? Number.POSITIVE_INFINITY;
    const rate = groups?.rateLimit;
    // The same limit again (a lane opened once more) keeps the groups' windows.
    if (rate === undefined) this.groupStarts = undefined;
    else if (!this.groupStarts?.sameLimit(rate)) this.groupStarts = new GroupStarts(rate);
    if (groups !== undefined && this.grouped === undefined) {
      const grouped = new GroupedReady();
      for (let rec = this.ready.pop(); rec !== undefined; rec = this.ready.pop()) grouped.push(rec);
      this.grouped = grouped;
    } else if (groups === undefined && this.grouped !== undefined) {
      const recs = this.grouped.drain();
      this.grouped = undefined;
      for (const rec of recs) this.pushReady(rec);
    }
  }

  // ── put ──────────────────────────────────────────────────────────────────────────────

  async put(jobs: NewJob[]): Promise<PutResult[]> {
    return this.putNow(jobs);
  }

  /** put, synchronously: fireSchedule commits a schedule's write and its jobs in one step. */
  private putNow(jobs: NewJob[]): PutResult[] {
    this.check();
    const now = this.clock.now();
    this.maintain(now);
    const n = jobs.length;
    // Only a batch that might not fit needs an exact count (duplicates take no room)
    // before anything is written; otherwise one pass, where byId also catches repeats
    // inside the batch (the first occurrence is already in by then).
    if (this.pendingCount() + n > this.shared.maxJobs) this.checkFits(jobs);
    const results: PutResult[] = [];
    let created = 0;
    for (let i = 0; i < n; i++) {
      const job = jobs[i] as NewJob;
      const debounced = job.debounce === undefined ? undefined : this.debounced(job, now);
      if (debounced !== undefined) {
        results.push({ id: debounced, status: "debounced" });
      } else if (this.byId.has(job.id)) {
        results.push({ id: job.id, status: "duplicate" });
      } else {
        this.insert(job, now);
        results.push({ id: job.id, status: "created" });
        created++;
      }
    }
    if (created > 0) this.afterChange();
    return results;
  }

  /**
   * A put with a debounce key: the id of the job whose window it falls in (its payload
   * replaced when keep is "last"), or undefined when it opens a window of its own (the
   * caller creates the job; `insert` records the window).
   */
  private debounced(job: NewJob, now: number): string | undefined {
    const d = job.debounce as JobDebounce;
    const entry = this.debounces.get(debounceKey(job.task, d.key));
    if (entry === undefined || !(now < entry.until)) return undefined;
    const rec = entry.rec;
    // Started (attempt counts deliveries), finished, moved or deleted: not the window's job.
    if (this.byId.get(rec.id) !== rec || rec.attempt > 0) return undefined;
    if (rec.state !== "waiting" && rec.state !== "delayed") return undefined;
    if (d.keep === "last") {
      // what the put's job would have carried (Redis replaces the job's whole text)
      rec.payload = job.payload;
      rec.appData = job.appData;
      rec.traceContext = job.traceContext;
    }
    return rec.id;
  }

  /** Record the window a created job opens; drop stale windows once there are many. */
  private openWindow(rec: JobRecord, d: JobDebounce): void {
    this.debounces.set(debounceKey(rec.task, d.key), { rec, until: d.until });
    if (this.debounces.size < this.debounceSweepAt) return;
    const now = this.clock.now();
    for (const [key, e] of this.debounces) {
      if (!(now < e.until) || this.byId.get(e.rec.id) !== e.rec || e.rec.attempt > 0) {
        this.debounces.delete(key);
      }
    }
    this.debounceSweepAt = Math.max(1024, 2 * this.debounces.size);
  }

  /** Throw LaneFullError, before any write, when the batch's new jobs do not fit. */
  private checkFits(jobs: NewJob[]): void {
    const seen = new Set<string>();
    for (const job of jobs) if (!this.byId.has(job.id)) seen.add(job.id);
    if (seen.size > 0 && this.pendingCount() + seen.size > this.shared.maxJobs) {
      throw new LaneFullError(this.name, this.shared.maxJobs);
    }
  }

  private insert(job: NewJob, now: number): void {
    // A runAt that is not a finite number is treated as absent: due now.
    const runAt = typeof job.runAt === "number" && Number.isFinite(job.runAt) ? job.runAt : now;
    const isDelayed = runAt > now;
    const dueAt = runAt;
    const rec = new JobRecord(job, this.putSeq++, isDelayed ? "delayed" : "waiting", dueAt);
    this.byId.set(rec.id, rec);
    this.enter(rec);
    if (isDelayed) {
      rec.reservedAt = now;
      this.pushDelayed(rec);
    } else this.pushReady(rec);
    if (job.tags !== undefined || job.expiresAt !== undefined) {
      const expiresAt = this.extras.fromJob(rec, job)?.expiresAt;
      if (expiresAt !== undefined) this.expiring.push(expiresAt, rec);
    }
    if (job.debounce !== undefined) this.openWindow(rec, job.debounce);
    this.note(rec, now, "published");
  }

  // ── reserve ──────────────────────────────────────────────────────────────────────────

  reserve(options: ReserveOptions): Promise<ReserveResult> {
    try {
      this.check();
    } catch (err) {
      return Promise.reject(err);
    }
    const now = this.clock.now();
    this.maintain(now);
    const limit = Math.min(Math.floor(options.limit), this.shared.maxBatch);
    const leaseMs = options.leaseMs;
    if (!validLease(leaseMs)) return Promise.reject(leaseError(leaseMs));
    const startNow = options.startNow ?? limit;
    const jobs = this.take(limit, leaseMs, now, startNow);
    const signal = options.signal;
    const waitMs = Math.min(options.waitMs, MAX_TIMER_MS);
    if (jobs.length > 0 || !(waitMs > 0) || !(limit > 0) || signal?.aborted) {
      const result = this.result(jobs);
      return this.yieldDue(jobs.length) ? yieldThen(result) : Promise.resolve(result);
    }
    return new Promise<ReserveResult>((resolve) => {
      const waiter: Waiter = {
        limit,
        leaseMs,
        startNow,
        resolve,
        timer: undefined,
        signal,
        onAbort: undefined,
      };
      waiter.timer = this.clock.setTimeout(() => {
        waiter.timer = undefined;
        if (!this.removeWaiter(waiter)) return;
        const at = this.clock.now();
        this.maintain(at);
        this.settle(waiter, this.take(waiter.limit, waiter.leaseMs, at, waiter.startNow));
      }, waitMs);
      if (signal !== undefined) {
        waiter.onAbort = () => {
          if (this.removeWaiter(waiter)) this.settle(waiter, []);
        };
        signal.addEventListener("abort", waiter.onAbort, { once: true });
      }
      this.waiters.push(waiter);
      this.armWakeTimer();
    });
  }

  /**
   * Everything here is synchronous, so a worker draining a backlog through this adapter
   * would run reserve → handler → reserve… in microtasks only, starving timers and I/O
   * (heartbeats, the worker's own ack flush, an HTTP server in the same process) until
   * the backlog is gone. Every YIELD_EVERY_JOBS jobs handed out, one reserve resolves
   * after a macrotask turn instead: bounded starvation, at a negligible cost.
   */
  private yieldDue(taken: number): boolean {
    const shared = this.shared;
    shared.handedSinceYield += taken;
    if (shared.handedSinceYield < YIELD_EVERY_JOBS) return false;
    shared.handedSinceYield = 0;
    return true;
  }

  /**
   * Take up to `limit` ready jobs as this reservation: waiting → active. The first
   * `startNow` start at once; the others are prefetched, unless suspects (which always
   * count as started).
   */
  private take(limit: number, leaseMs: number, now: number, startNow: number): ReservedJob[] {
    const jobs: ReservedJob[] = [];
    if (this.paused) return jobs;
    let n = Math.min(limit, this.maxConcurrency - this.lists.active.size);
    if (this.rateLimit !== undefined) n = Math.min(n, this.rateRoom(now));
    const grouped = this.grouped;
    if (n <= 0 || (grouped === undefined ? this.ready.size : grouped.size) === 0) return jobs;
    const active = grouped === undefined ? undefined : this.activeByGroup();
    const room = active === undefined ? undefined : this.groupRoom(now, active);
    const stats = this.dayStats(now);
    const expiresAt = now + leaseMs;
    while (n-- > 0) {
      const rec =
        grouped === undefined ? this.ready.pop() : grouped.pop(room as (group: string) => number);
      if (rec === undefined) break;
      if (active !== undefined) {
        const group = rec.group ?? "";
        active.set(group, (active.get(group) ?? 0) + 1);
        this.groupStarts?.add(group, now);
      }
      rec.attempt++;
      rec.token = String(++this.tokenSeq);
      rec.reservedAt = now;
      rec.expiresAt = expiresAt;
      this.setState(rec, "active");
      this.leases.add(rec);
      addSample(stats.wait, now - rec.dueAt);
      this.note(rec, now, "reserved");
      const job: ReservedJob = {
        id: rec.id,
        task: rec.task,
        payload: rec.payload,
        priority: rec.priority,
        attempt: rec.attempt,
        publishedAt: rec.publishedAt,
        readyAt: rec.dueAt,
        lock: { jobId: rec.id, token: rec.token, expiresAt },
      };
      if (rec.appData !== undefined) job.appData = rec.appData;
      if (rec.traceContext !== undefined) job.traceContext = rec.traceContext;
      const suspect = rec.stalls > 0 || rec.skipped;
      if (suspect) job.suspect = true;
      rec.prefetched = !suspect && jobs.length >= startNow;
      jobs.push(job);
      if (this.rateLimit !== undefined) this.starts.push(now);
    }
    return jobs;
  }

  /** Starts the rate limit allows at `now`: the window's log pruned to (now - durationMs, now]. */
  private rateRoom(now: number): number {
    const limit = this.rateLimit as RateLimit;
    const from = now - limit.durationMs;
    while (
      this.startsHead < this.starts.length &&
      (this.starts[this.startsHead] as number) <= from
    ) {
      this.startsHead++;
    }
    if (this.startsHead > 1024 && this.startsHead * 2 > this.starts.length) {
      this.starts = this.starts.slice(this.startsHead);
      this.startsHead = 0;
    }
    return limit.max - (this.starts.length - this.startsHead);
  }

  /**
   * While the rate limit's window is full and jobs are ready: when the next start is
   * allowed (the start that leaves the window then, plus durationMs). Infinity otherwise.
   */
  private rateOpenAt(now: number): number {
    const limit = this.rateLimit;
    if (limit === undefined || this.paused) return Number.POSITIVE_INFINITY;
    // A grouped lane keeps its waiting jobs in `grouped`, not in `ready`.
    const grouped = this.grouped;
    if ((grouped === undefined ? this.ready.size : grouped.size) === 0) {
      return Number.POSITIVE_INFINITY;
    }
    const room = this.rateRoom(now);
    if (room > 0) return Number.POSITIVE_INFINITY;
    const leaving = this.starts[this.startsHead - room] as number;
    return leaving + limit.durationMs;
  }

  /** A reserve's answer: its jobs, what is left to take and, with nothing left, what falls due next. */
  private result(jobs: ReservedJob[]): ReserveResult {
    const ready = this.shared.closed ? 0 : this.takeable();
    if (ready > 0 || this.shared.closed || this.paused) return { jobs, ready };
    const next = Math.min(
      this.delayed.peekKey(),
      this.leases.peekKey(),
      this.rateOpenAt(this.clock.now()),
      this.groupOpenAt(this.clock.now()),
    );
    return next === Number.POSITIVE_INFINITY ? { jobs, ready } : { jobs, ready, nextDueAt: next };
  }

  /** Due jobs a reserve could take right now (0 while paused or at maxConcurrency). */
  private takeable(): number {
    if (this.paused) return 0;
    let free = this.maxConcurrency - this.lists.active.size;
    if (this.rateLimit !== undefined) free = Math.min(free, this.rateRoom(this.clock.now()));
    if (free <= 0) return 0;
    const grouped = this.grouped;
    if (grouped === undefined) return Math.min(this.ready.size, free);
    if (this.groupLimit === Number.POSITIVE_INFINITY && this.groupStarts === undefined) {
      return Math.min(grouped.size, free);
    }
    const room = this.groupRoom(this.clock.now(), this.activeByGroup());
    return Math.min(grouped.takeable(room), free);
  }

  /** Starts a group may still make now: its concurrency's and its own window's room. */
  private groupRoom(now: number, active: Map<string, number>): (group: string) => number {
    const limit = this.groupLimit;
    const starts = this.groupStarts;
    if (starts === undefined) return (group) => limit - (active.get(group) ?? 0);
    return (group) => Math.min(limit - (active.get(group) ?? 0), starts.room(group, now));
  }

  /**
   * While groups with jobs are held back by their own windows only: when the first of
   * those windows lets a start happen. Infinity otherwise.
   */
  private groupOpenAt(now: number): number {
    const starts = this.groupStarts;
    const grouped = this.grouped;
    if (starts === undefined || grouped === undefined || grouped.size === 0 || this.paused) {
      return Number.POSITIVE_INFINITY;
    }
    const active = this.activeByGroup();
    const limit = this.groupLimit;
    return grouped.earliest((group) =>
      (active.get(group) ?? 0) >= limit ? Number.POSITIVE_INFINITY : starts.openAt(group, now),
    );
  }

  /**
   * Active jobs per group, counted from the active list (a grouped lane's reserve only;
   * bounded by the jobs running, and no count to keep right on every way out of active).
   */
  private activeByGroup(): Map<string, number> {
    const active = new Map<string, number>();
    if (this.groupLimit === Number.POSITIVE_INFINITY) return active;
    const list = this.lists.active;
    for (let node = list.root.next; node !== list.root; node = node.next) {
      if (!node.isJob) continue;
      const group = (node as JobRecord).group ?? "";
      active.set(group, (active.get(group) ?? 0) + 1);
    }
    return active;
  }

  // ── ack, nack, release, extend ───────────────────────────────────────────────────────

  async ack(locks: AckItem[]): Promise<LockStatus[]> {
    this.check();
    const now = this.clock.now();
    this.maintain(now);
    const statuses: LockStatus[] = [];
    let changed = false;
    for (const lock of locks) {
      const rec = this.byId.get(lock.jobId);
      const status = this.lockStatus(rec, lock, now);
      statuses.push(status);
      if (status !== "ok" || rec === undefined) continue;
      changed = true;
      this.leases.remove(rec);
      addSample(this.dayStats(now).run, now - rec.reservedAt);
      // A plain lock carries neither: one check each for the common ack.
      if (lock.result !== undefined) keepResult(this.extras, rec, lock.result);
      if (lock.report !== undefined) this.storeReport(rec, lock.report);
      this.finish(rec, "succeeded", now);
      this.note(rec, now, "succeeded");
    }
    if (changed) this.afterFinish(now);
    return statuses;
  }

  async nack(items: NackItem[]): Promise<LockStatus[]> {
    this.check();
    const now = this.clock.now();
    this.maintain(now);
    const statuses: LockStatus[] = [];
    let changed = false;
    for (const item of items) {
      const rec = this.byId.get(item.lock.jobId);
      const status = this.lockStatus(rec, item.lock, now);
      statuses.push(status);
      if (status !== "ok" || rec === undefined) continue;
      changed = true;
      this.leases.remove(rec);
      const stats = this.dayStats(now);
      addSample(stats.run, now - rec.reservedAt);
      rec.error = item.error;
      if (item.report !== undefined) this.storeReport(rec, item.report);
      if ("dead" in item && item.dead === true) {
        stats.failures++;
        this.finish(rec, "failed", now);
        this.note(rec, now, "failed", item.error.reason);
      } else {
        stats.retries++;
        const runAt = "runAt" in item && Number.isFinite(item.runAt) ? item.runAt : now;
        rec.dueAt = runAt;
        this.note(rec, now, "retrying", item.error.message);
        if (this.expiredBy(rec, now)) this.expire(rec, now);
        else if (runAt > now) {
          this.setState(rec, "delayed");
          rec.reservedAt = now;
          this.pushDelayed(rec);
        } else {
          this.setState(rec, "waiting");
          this.pushReady(rec);
        }
      }
    }
    if (changed) this.afterFinish(now);
    return statuses;
  }

  async release(items: ReleaseItem[]): Promise<LockStatus[]> {
    this.check();
    const now = this.clock.now();
    this.maintain(now);
    const statuses: LockStatus[] = [];
    let changed = false;
    for (const item of items) {
      const rec = this.byId.get(item.lock.jobId);
      const status = this.lockStatus(rec, item.lock, now);
      statuses.push(status);
      if (status !== "ok" || rec === undefined) continue;
      changed = true;
      this.leases.remove(rec);
      if (item.report !== undefined) this.storeReport(rec, item.report);
      // The delivery does not count: the next reserve hands out the same attempt number.
      // Its due time stays: it has waited already, so it goes back to its place.
      rec.attempt--;
      this.note(rec, now, "released");
      // ctx.retryAfter: due again at runAt, delayed until then.
      const runAt = item.runAt;
      if (runAt !== undefined && Number.isFinite(runAt) && runAt > now) rec.dueAt = runAt;
      if (this.expiredBy(rec, now)) {
        this.expire(rec, now);
        continue;
      }
      if (rec.dueAt > now) {
        this.setState(rec, "delayed");
        rec.reservedAt = now;
        this.pushDelayed(rec);
      } else {
        this.setState(rec, "waiting");
        this.pushReady(rec);
      }
    }
    if (changed) this.afterChange();
    return statuses;
  }

  async extend(locks: Lock[], leaseMs: number): Promise<LockStatus[]> {
    this.check();
    if (!validLease(leaseMs)) throw leaseError(leaseMs);
    const now = this.clock.now();
    this.maintain(now);
    const statuses: LockStatus[] = [];
    const expiresAt = now + leaseMs;
    // A lock named again in the call is lost after its first use, as in ack, nack and
    // release (where the first use ends the lease).
    let extended: Set<JobRecord> | undefined;
    for (const lock of locks) {
      const rec = this.byId.get(lock.jobId);
      let status = this.lockStatus(rec, lock, now);
      if (status === "ok" && rec !== undefined) {
        extended ??= new Set();
        if (extended.has(rec)) status = "lost";
        else {
          extended.add(rec);
          rec.expiresAt = expiresAt;
          this.leases.update(rec);
        }
      }
      statuses.push(status);
    }
    const changed = extended !== undefined;
    if (changed) this.armWakeTimer();
    return statuses;
  }

  /**
   * "ok": active under this token with a live lease. "canceled": this very reservation was
   * canceled. "lost": anything else (stale token, expired lease, finished, gone).
   */
  private lockStatus(rec: JobRecord | undefined, lock: Lock, now: number): LockStatus {
    if (rec === undefined || rec.token !== lock.token) return "lost";
    if (rec.state === "active") return rec.expiresAt > now ? "ok" : "lost";
    if (rec.state === "canceled" && rec.canceledWhileActive) return "canceled";
    return "lost";
  }

  // ── counts and probes ────────────────────────────────────────────────────────────────

  async probe(): Promise<number> {
    this.check();
    this.maintain(this.clock.now());
    return this.takeable();
  }

  async counts(): Promise<LaneCounts> {
    this.check();
    this.maintain(this.clock.now());
    const l = this.lists;
    return {
      waiting: l.waiting.size,
      delayed: l.delayed.size,
      blocked: l.blocked.size,
      active: l.active.size,
      failed: l.failed.size,
      succeeded: l.succeeded.size,
      canceled: l.canceled.size,
      expired: l.expired.size,
    };
  }

  // ── optional parts ───────────────────────────────────────────────────────────────────

  async get(id: string): Promise<JobInfo | undefined> {
    this.check();
    this.maintain(this.clock.now());
    const rec = this.byId.get(id);
    return rec === undefined ? undefined : this.info(rec);
  }

  list(options: ListOptions): AsyncGenerator<JobInfo, void, undefined> {
    const self: { iterator?: object } = {};
    const iterator = this.pages(options, self);
    self.iterator = iterator;
    return iterator;
  }

  private async *pages(
    options: ListOptions,
    self: { iterator?: object },
  ): AsyncGenerator<JobInfo, void, undefined> {
    this.check();
    const list = this.lists[options.state];
    if (list === undefined) return;
    const pageSize = Math.max(
      1,
      Math.min(MAX_PAGE_SIZE, Math.floor(options.pageSize ?? DEFAULT_PAGE_SIZE) || 1),
    );
    this.maintain(this.clock.now());
    // Jobs entering the state from here on have a higher entrySeq and are not visited.
    const lastSeq = this.entrySeq;
    const cursor = new ListNode(false);
    list.addCursor(cursor);
    if (self.iterator) abandonedCursors.register(self.iterator, { list, cursor }, cursor);
    try {
      for (;;) {
        this.check();
        this.maintain(this.clock.now());
        const page: JobInfo[] = [];
        let node = cursor.next;
        while (node !== list.root && page.length < pageSize) {
          if (node.isJob) {
            if (node.entrySeq > lastSeq) {
              node = list.root;
              break;
            }
            page.push(this.info(node as JobRecord));
          }
          node = node.next;
        }
        list.moveCursorBefore(cursor, node);
        for (const info of page) yield info;
        if (node === list.root) return;
      }
    } finally {
      abandonedCursors.unregister(cursor);
      list.removeCursor(cursor);
    }
  }

  async cancel(ids: string[]): Promise<CancelResult[]> {
    this.check();
    const now = this.clock.now();
    this.maintain(now);
    const results: CancelResult[] = [];
    const canceledActive: string[] = [];
    let changed = false;
    for (const id of ids) {
      const rec = this.byId.get(id);
      if (rec === undefined) {
        results.push("not_found");
        continue;
      }
      switch (rec.state) {
        case "waiting":
          this.unready(rec);
          break;
        case "delayed":
          this.delayed.remove(rec);
          break;
        case "blocked":
          // in no heap; the jobs it waits for go on (docs/adapter-contract.md, "flows")
          break;
        case "active":
          this.leases.remove(rec);
          rec.canceledWhileActive = true;
          canceledActive.push(id);
          break;
        default:
          results.push("finished");
          continue;
      }
      changed = true;
      // An active job's cancel is the "canceled" event below (it stops the holder).
      if (!rec.canceledWhileActive) this.shared.report("canceled", this.name, id);
      this.finish(rec, "canceled", now);
      this.note(rec, now, "canceled");
      results.push("canceled");
    }
    if (changed) this.afterFinish(now);
    // Emitted after the batch is applied, so a listener that calls back in sees it whole.
    for (const jobId of canceledActive)
      this.shared.emit({ type: "canceled", lane: this.name, jobId });
    return results;
  }

  async retryFailed(ids?: string[]): Promise<number> {
    this.check();
    const now = this.clock.now();
    this.maintain(now);
    // Retried jobs are pending again, so they count against maxJobs like a put: a retry
    // that does not fit is refused whole, retrying nothing.
    let retried = 0;
    if (ids === undefined) {
      if (!this.fits(this.lists.failed.size)) {
        throw new LaneFullError(this.name, this.shared.maxJobs);
      }
      for (
        let rec = this.lists.failed.first();
        rec !== undefined;
        rec = this.lists.failed.first()
      ) {
        this.retry(rec, now);
        retried++;
      }
    } else {
      const failed = new Set<JobRecord>();
      for (const id of ids) {
        const rec = this.byId.get(id);
        if (rec !== undefined && rec.state === "failed") failed.add(rec);
      }
      if (!this.fits(failed.size)) {
        throw new LaneFullError(this.name, this.shared.maxJobs);
      }
      for (const rec of failed) this.retry(rec, now);
      retried = failed.size;
    }
    if (retried > 0) this.afterChange();
    return retried;
  }

  private retry(rec: JobRecord, now: number): void {
    this.failureGroups.leave(rec);
    rec.attempt = 0;
    rec.stalls = 0;
    rec.skipped = false;
    rec.finishedAt = undefined;
    // Retried by hand: an operator wants it run, whatever its expiry said.
    const extra = this.extras.get(rec);
    if (extra !== undefined) extra.expiresAt = undefined;
    rec.dueAt = now;
    this.setState(rec, "waiting");
    this.pushReady(rec);
    this.note(rec, now, "retried");
  }

  async delete(ids: string[]): Promise<number> {
    this.check();
    this.maintain(this.clock.now());
    let removed = 0;
    for (const id of ids) {
      const rec = this.byId.get(id);
      if (rec === undefined || rec.state === "active") continue;
      if (rec.state === "waiting") this.unready(rec);
      else if (rec.state === "delayed") this.delayed.remove(rec);
      // A pending job deleted never ends: the jobs waiting for it count it as "deleted".
      const links = this.flowLinks.size === 0 ? undefined : this.flowLinks.get(rec);
      const pending = rec.state === "waiting" || rec.state === "delayed" || rec.state === "blocked";
      this.drop(rec);
      if (links !== undefined && pending) this.endDependency(links, "deleted", undefined);
      this.shared.report("deleted", this.name, id);
      if (this.shared.watching) this.shared.finished(this.name, id, "deleted");
      removed++;
    }
    if (removed > 0) this.armWakeTimer();
    return removed;
  }

  async pause(): Promise<void> {
    this.check();
    this.paused = true;
  }

  async resume(): Promise<void> {
    this.check();
    if (!this.paused) return;
    this.paused = false;
    this.maintain(this.clock.now());
    this.afterChange();
  }

  async isPaused(): Promise<boolean> {
    this.check();
    return this.paused;
  }

  async stats(day: string): Promise<DayStats | undefined> {
    this.check();
    const s = this.days.get(day);
    return s === undefined ? undefined : structuredClone(s);
  }

  // ── recurring schedules ──────────────────────────────────────────────────────────────

  private readonly schedules = new ScheduleStore();

  async putSchedule(record: ScheduleWrite, expectRevision?: number): Promise<ScheduleWriteResult> {
    this.check();
    checkScheduleWrite(record);
    return this.schedules.put(record, expectRevision);
  }

  async getSchedule(id: string): Promise<ScheduleRecord | undefined> {
    this.check();
    return this.schedules.get(id);
  }

  async listSchedules(cursor?: string): Promise<SchedulePage> {
    this.check();
    return this.schedules.list(cursor);
  }

  async removeSchedule(id: string): Promise<boolean> {
    this.check();
    return this.schedules.remove(id);
  }

  async dueSchedules(now: number, limit: number): Promise<ScheduleRecord[]> {
    this.check();
    return this.schedules.due(now, limit);
  }

  async nextScheduleAt(): Promise<number | undefined> {
    this.check();
    return this.schedules.nextAt();
  }

  async fireSchedule(
    record: ScheduleWrite,
    expectRevision: number,
    jobs: NewJob[],
  ): Promise<ScheduleFireResult> {
    this.check();
    checkScheduleWrite(record);
    if (!this.schedules.matches(record.id, expectRevision)) return { status: "stale" };
    // The put first: when it throws (a full lane), the schedule is left as it was.
    const results = this.putNow(jobs);
    const written = this.schedules.put(record, expectRevision);
    return { status: "ok", revision: (written as { revision: number }).revision, results };
  }

  // ── operator features ────────────────────────────────────────────────────────────────

  async report(items: ReportItem[]): Promise<LockStatus[]> {
    this.check();
    const now = this.clock.now();
    this.maintain(now);
    const statuses: LockStatus[] = [];
    for (const item of items) {
      const rec = this.byId.get(item.lock.jobId);
      const status = this.lockStatus(rec, item.lock, now);
      statuses.push(status);
      if (status === "ok" && rec !== undefined) this.storeReport(rec, item);
    }
    return statuses;
  }

  private storeReport(rec: JobRecord, report: JobReport): void {
    if (applyReport(this.extras, rec, report, this.logLimit)) {
      this.shared.report("progress", this.name, rec.id);
    }
  }

  /**
   * One page of a search: the states' lists walked in order of entry from where the last
   * page ended (a cursor node parked there, or found again by entrySeq), at most
   * SCAN_BUDGET jobs examined per call. Jobs entering a state after the first page have a
   * higher entrySeq than the cursor's bound and are not listed.
   */
  async listPage(filter: ListFilter, cursor?: string): Promise<JobPage<JobSummary>> {
    this.check();
    this.maintain(this.clock.now());
    const states = statesOf(filter);
    const pageSize = Math.max(
      1,
      Math.min(MAX_PAGE_SIZE, Math.floor(filter.pageSize ?? DEFAULT_PAGE_SIZE) || 1),
    );
    const summary = filter.fields === "summary";
    const pos: ListPosition =
      cursor === undefined
        ? { state: 0, after: 0, bound: this.entrySeq, handle: 0 }
        : decodeCursor(cursor);
    const jobs: JobSummary[] = [];
    let budget = Math.max(SCAN_BUDGET, pageSize);
    while (pos.state < states.length) {
      const list = this.lists[states[pos.state] as JobState];
      const found = pos.handle > 0 ? this.parked.get(pos.handle, list) : undefined;
      // A cursor passed again after its listing went on: the node has moved past its place.
      const parked = found !== undefined && found.after === pos.after ? found : undefined;
      let node: ListNode;
      if (parked !== undefined) node = parked.node.next;
      else {
        // No parked node to use (evicted, another lane's, or past this cursor's place):
        // find the place again.
        node = list.root.next;
        while (node !== list.root && (!node.isJob || node.entrySeq <= pos.after)) node = node.next;
      }
      let more = false;
      for (; node !== list.root; node = node.next) {
        if (!node.isJob) continue;
        // Lists are in order of entry: from here on every job entered after the listing began.
        if (node.entrySeq > pos.bound) break;
        if (jobs.length >= pageSize || budget <= 0) {
          more = true;
          break;
        }
        budget--;
        const rec = node as JobRecord;
        pos.after = rec.entrySeq;
        const extra = this.extras.get(rec);
        if (matches(rec, filter, extra)) {
          jobs.push(summary ? summaryOf(rec, this.name, extra) : this.info(rec));
        }
      }
      if (more) {
        if (parked !== undefined) {
          list.moveCursorBefore(parked.node, node);
          parked.after = pos.after;
        } else {
          const parkedNode = new ListNode(false);
          list.addCursor(parkedNode);
          list.moveCursorBefore(parkedNode, node);
          pos.handle = this.parked.park(list, parkedNode, pos.after);
        }
        return { jobs, cursor: encodeCursor(pos) };
      }
      if (parked !== undefined) this.parked.release(pos.handle);
      pos.handle = 0;
      pos.after = 0;
      pos.state++;
    }
    return { jobs };
  }

  async count(filter: JobFilter): Promise<number> {
    this.check();
    const states = statesOf(filter);
    this.maintain(this.clock.now());
    const plain = onlyState(filter);
    let n = 0;
    for (const state of states) {
      const list = this.lists[state];
      if (plain) {
        n += list.size;
        continue;
      }
      for (let node = list.root.next; node !== list.root; node = node.next) {
        if (!node.isJob) continue;
        const rec = node as JobRecord;
        if (matches(rec, filter, this.extras.get(rec))) n++;
      }
    }
    return n;
  }

  async failures(): Promise<FailureGroup[]> {
    this.check();
    this.maintain(this.clock.now());
    return this.failureGroups.list(this.name);
  }

  async setPriority(ids: string[], priority: number): Promise<ChangeResult[]> {
    this.check();
    if (!Number.isInteger(priority))
      throw new ConfigError("priority", priority, "must be an integer");
    const now = this.clock.now();
    this.maintain(now);
    const results: ChangeResult[] = [];
    let requeued = false;
    for (const id of ids) {
      const rec = this.byId.get(id);
      if (rec === undefined) {
        results.push("not_found");
        continue;
      }
      if (rec.state === "delayed" || rec.state === "blocked") {
        // Not a key of the delayed heap (a blocked job is in none): it applies when the
        // job falls due.
        rec.priority = priority;
        this.note(rec, now, "prioritized", String(priority));
      } else if (rec.state === "waiting") {
        const copy = this.requeue(rec, priority);
        this.note(copy, now, "prioritized", String(priority));
        requeued = true;
      } else {
        results.push("wrong_state");
        continue;
      }
      results.push("ok");
    }
    if (requeued) this.afterChange();
    return results;
  }

  /** A waiting job under a new priority: a copy takes its place in the list and the ready heap. */
  private requeue(rec: JobRecord, priority: number): JobRecord {
    this.unready(rec);
    const copy = JobRecord.copy(rec, rec.seq, "waiting", rec.dueAt);
    copy.priority = priority;
    this.lists.waiting.replace(rec, copy);
    this.byId.set(copy.id, copy);
    this.pushReady(copy);
    const expiresAt = this.extras.move(rec, copy)?.expiresAt;
    if (expiresAt !== undefined) this.expiring.push(expiresAt, copy);
    this.moveLinks(rec, copy);
    return copy;
  }

  async promote(ids: string[]): Promise<ChangeResult[]> {
    this.check();
    const now = this.clock.now();
    this.maintain(now);
    const results: ChangeResult[] = [];
    let promoted = false;
    for (const id of ids) {
      const rec = this.byId.get(id);
      if (rec === undefined) results.push("not_found");
      else if (rec.state === "waiting") results.push("ok");
      else if (rec.state !== "delayed") results.push("wrong_state");
      else {
        // A copy, due now: the record stays a stale entry of the delayed heap.
        this.delayed.remove(rec);
        this.lists.delayed.remove(rec);
        const copy = JobRecord.copy(rec, rec.seq, "waiting", now);
        this.byId.set(copy.id, copy);
        this.enter(copy);
        this.pushReady(copy);
        const expiresAt = this.extras.move(rec, copy)?.expiresAt;
        if (expiresAt !== undefined) this.expiring.push(expiresAt, copy);
        this.moveLinks(rec, copy);
        this.note(copy, now, "promoted");
        promoted = true;
        results.push("ok");
      }
    }
    if (promoted) this.afterChange();
    return results;
  }

  /**
   * Move jobs into `to`, a lane of this adapter, in one step (both lanes live in this
   * process). A job held by a worker is taken from it: its lock is gone with the record
   * (a late ack is "lost"), and a `put` event naming this lane aborts its handler.
   */
  async move(ids: string[], to: LaneStore): Promise<MoveResult[]> {
    this.check();
    const target = this.shared.lanes.get(to?.name);
    if (target === undefined || target !== to) {
      throw new ConfigError("to", to?.name, "must be a lane of the same memory adapter");
    }
    if (target === this) throw new ConfigError("to", to.name, "is the lane the jobs are in");
    const now = this.clock.now();
    this.maintain(now);
    target.maintain(now);
    const results: MoveResult[] = [];
    const moving: JobRecord[] = [];
    const seen = new Set<string>();
    for (const id of ids) {
      const rec = this.byId.get(id);
      if (rec === undefined || seen.has(id)) results.push("not_found");
      else if (rec.state === "blocked") results.push("blocked");
      else if (
        rec.state !== "waiting" &&
        rec.state !== "delayed" &&
        rec.state !== "active" &&
        rec.state !== "failed"
      ) {
        results.push("finished");
      } else if (target.byId.has(id)) results.push("duplicate");
      else {
        seen.add(id);
        moving.push(rec);
        results.push("moved");
      }
    }
    // Checked before anything changes, as a put would: all of them fit, or none moves.
    if (moving.length > 0 && target.pendingCount() + moving.length > this.shared.maxJobs) {
      throw new LaneFullError(target.name, this.shared.maxJobs);
    }
    const taken: string[] = [];
    for (const rec of moving) {
      if (rec.state === "waiting") this.unready(rec);
      else if (rec.state === "delayed") this.delayed.remove(rec);
      else if (rec.state === "active") {
        this.leases.remove(rec);
        taken.push(rec.id);
      }
      const extra = this.extras.get(rec);
      const links = this.flowLinks.size === 0 ? undefined : this.flowLinks.get(rec);
      this.drop(rec);
      target.adopt(rec, extra, links, this.name, now);
      if (this.shared.watching) this.shared.finished(this.name, rec.id, "moved");
    }
    if (moving.length > 0) {
      this.armWakeTimer();
      target.afterChange();
    }
    for (const jobId of taken) {
      this.shared.emit({ type: "put", lane: this.name, jobId, toLane: target.name });
    }
    return results;
  }

  /** Take in a job moved from lane `from`: the same id and history, due as it was. */
  private adopt(
    rec: JobRecord,
    extra: JobExtra | undefined,
    links: FlowLinks | undefined,
    from: string,
    now: number,
  ): void {
    const delayed = rec.state === "delayed" && rec.dueAt > now;
    const dueAt = rec.state === "waiting" || delayed ? rec.dueAt : now;
    const copy = JobRecord.copy(rec, this.putSeq++, delayed ? "delayed" : "waiting", dueAt);
    copy.token = "";
    if (rec.state === "active") {
      // Interrupted by an operator, not by the job: the delivery does not count.
      copy.attempt = Math.max(0, rec.attempt - 1);
    } else if (rec.state === "failed") {
      // Out of the dead letter set, as retryFailed does.
      copy.attempt = 0;
      copy.stalls = 0;
      copy.skipped = false;
      copy.finishedAt = undefined;
      if (extra !== undefined) extra.expiresAt = undefined;
    }
    this.byId.set(copy.id, copy);
    this.enter(copy);
    if (delayed) {
      copy.reservedAt = now;
      this.pushDelayed(copy);
    } else this.pushReady(copy);
    if (extra !== undefined) this.extras.set(copy, extra);
    if (links !== undefined) {
      links.lane = this.name;
      this.flowLinks.set(copy, links);
    }
    this.note(copy, now, "moved", from);
    const expiresAt = extra?.expiresAt;
    if (expiresAt === undefined) return;
    if (expiresAt <= now) this.expire(copy, now);
    else this.expiring.push(expiresAt, copy);
  }

  // ── flows (putFlow's parts: memory-adapter.ts runs them in one step) ────────────────

  /** Bring the lane up to `now` before putFlow checks it; ClosedError when closed. */
  prepareFlow(now: number): void {
    this.check();
    this.maintain(now);
  }

  /** The job with this id, in any state. */
  record(id: string): JobRecord | undefined {
    return this.byId.get(id);
  }

  /** Whether `n` more pending jobs fit under maxJobs. */
  fits(n: number): boolean {
    return this.pendingCount() + n <= this.shared.maxJobs;
  }

  /**
   * Store one job of a putFlow: a job with dependencies blocked (in no heap, its runAt
   * kept as its due time), with its entries; any other as `put` stores it.
   */
  insertFlow(job: NewJob, now: number): void {
    const deps = job.dependsOn;
    if (deps === undefined || deps.length === 0) {
      this.insert(job, now);
      return;
    }
    const runAt = typeof job.runAt === "number" && Number.isFinite(job.runAt) ? job.runAt : now;
    const rec = new JobRecord(job, this.putSeq++, "blocked", runAt);
    // While blocked, as while delayed: when it entered the state (its changedAt).
    rec.reservedAt = now;
    this.byId.set(rec.id, rec);
    this.enter(rec);
    if (job.tags !== undefined || job.expiresAt !== undefined) {
      const expiresAt = this.extras.fromJob(rec, job)?.expiresAt;
      if (expiresAt !== undefined) this.expiring.push(expiresAt, rec);
    }
    const links = this.linksOf(rec);
    links.deps = deps.map(
      (d): DependencyView => ({ lane: d.lane, id: d.id, onFailure: d.onFailure }),
    );
    links.open = deps.length;
    this.note(rec, now, "published");
  }

  /** A job's stored result (capability `results`). */
  resultOf(rec: JobRecord): string | undefined {
    return this.extras.get(rec)?.result;
  }

  /** After putFlow stored jobs here: serve waiting long polls. */
  afterFlow(): void {
    this.afterChange();
  }

  /** A job's flow links, created for a job that has none. */
  linksOf(rec: JobRecord): FlowLinks {
    let links = this.flowLinks.get(rec);
    if (links === undefined) {
      links = new FlowLinks(this.name, rec.id);
      this.flowLinks.set(rec, links);
    }
    return links;
  }

  /**
   * Entry `index` of the job `links` belongs to (a job of this lane, or one that left it)
   * ended as `state`: recorded once (a second call for the entry changes nothing), and,
   * while the job is blocked, applied by the entry's onFailure: it fails, is unblocked,
   * or waits on.
   */
  dependencyEnded(
    links: FlowLinks,
    index: number,
    state: DependencyEnd,
    result: string | undefined,
    now: number,
  ): void {
    const entry = links.deps?.[index];
    if (entry === undefined || entry.state !== undefined) return;
    entry.state = state;
    if (result !== undefined) entry.result = result;
    links.open--;
    const rec = this.byId.get(links.id);
    // Deleted, removed by retention, or no longer waiting: its view is all that changes.
    if (rec === undefined || rec.state !== "blocked" || this.flowLinks.get(rec) !== links) return;
    const failed = state !== "succeeded";
    if (failed && entry.onFailure === "fail") {
      rec.error = {
        name: "DependencyFailedError",
        message: `Dependency ${entry.id} (${entry.task ?? "?"}, lane ${entry.lane}) ended ${state}`,
        reason: "dependency_failed",
      };
      this.dayStats(now).failures++;
      this.finish(rec, "failed", now);
      this.note(rec, now, "failed", "dependency_failed");
    } else if ((failed && entry.onFailure === "continue") || links.open === 0) {
      this.unblock(rec, now);
    }
  }

  /** A blocked job's wait is over: due (waiting) or delayed until its runAt. */
  private unblock(rec: JobRecord, now: number): void {
    this.note(rec, now, "unblocked");
    if (this.expiredBy(rec, now)) {
      this.expire(rec, now);
      return;
    }
    if (rec.dueAt > now) {
      this.setState(rec, "delayed");
      rec.reservedAt = now;
      this.pushDelayed(rec);
    } else {
      rec.dueAt = now;
      this.setState(rec, "waiting");
      this.pushReady(rec);
    }
    // Often inside another lane's call (or this lane's ack loop): long polls are served
    // once it is whole.
    if (this.unblockedLater) return;
    this.unblockedLater = true;
    queueMicrotask(() => {
      this.unblockedLater = false;
      if (!this.shared.closed) this.afterChange();
    });
  }

  /** A job others wait for ended (or was deleted while pending): tell each of them, once. */
  private endDependency(links: FlowLinks, state: DependencyEnd, result: string | undefined): void {
    const dependents = links.dependents;
    if (dependents === undefined) return;
    const now = this.clock.now();
    for (const d of dependents) {
      this.shared.lanes.get(d.links.lane)?.dependencyEnded(d.links, d.index, state, result, now);
    }
  }

  /** A record replaced by a copy (new priority, promote) keeps its flow links. */
  private moveLinks(rec: JobRecord, copy: JobRecord): void {
    if (this.flowLinks.size === 0) return;
    const links = this.flowLinks.get(rec);
    if (links === undefined) return;
    this.flowLinks.delete(rec);
    this.flowLinks.set(copy, links);
  }

  /**
   * Reserves waiting in a long poll on this lane now. For tests (the conformance suite's
   * `waitingPolls`): it reads the waiter list the lane keeps anyway.
   */
  get waitingPolls(): number {
    return this.waiters.length;
  }

  // ── life cycle ───────────────────────────────────────────────────────────────────────

  /** Called by the adapter's close: pending long polls return with no jobs. */
  shutdown(): void {
    this.clearWakeTimer();
    const waiters = this.waiters.splice(0);
    for (const w of waiters) this.settle(w, []);
  }

  private check(): void {
    if (this.shared.closed) throw new ClosedError(`memory lane "${this.name}"`);
  }

  // ── time: lazy maintenance and the wake timer ────────────────────────────────────────

  /** Promote due delayed jobs, reclaim expired leases, apply retention (bounded). */
  private maintain(now: number): void {
    if (this.expiring.size > 0) this.sweepExpired(now);
    while (this.delayed.peekKey() <= now) {
      const rec = this.delayed.pop() as JobRecord;
      this.setState(rec, "waiting");
      this.pushReady(rec);
    }
    while (this.leases.peekKey() <= now) {
      this.stall(this.leases.pop() as JobRecord, now);
    }
    if (this.retentionRules.length > 0) this.applyRetention(now);
  }

  /**
   * A lease expired: back to waiting with the stall counted, or dead past maxStalls. A
   * prefetched delivery is skipped instead: not a stall, its attempt not spent, but the
   * job is marked (a suspect), and its next stall counts this delivery too, since the
   * worker may have started it from its buffer just before it died.
   */
  private stall(rec: JobRecord, now: number): void {
    if (rec.prefetched) {
      rec.prefetched = false;
      rec.skipped = true;
      rec.attempt--;
      this.note(rec, now, "stalled", "prefetched");
      if (this.expiredBy(rec, now)) this.expire(rec, now);
      else {
        this.setState(rec, "waiting");
        this.pushReady(rec);
      }
      return;
    }
    rec.stalls += rec.skipped ? 2 : 1;
    rec.skipped = false;
    this.note(rec, now, "stalled");
    if (rec.stalls > this.maxStalls) {
      rec.error = {
        name: "StalledError",
        message: `Job ${rec.id} stalled ${rec.stalls} times (maxStalls ${this.maxStalls})`,
        reason: "stalled",
      };
      this.dayStats(now).failures++;
      this.finish(rec, "failed", now);
      this.note(rec, now, "failed", "stalled");
    } else if (this.expiredBy(rec, now)) {
      this.expire(rec, now);
    } else {
      // Its due time stays: it has waited already (its holder died or hung), so it goes
      // back to the front of its priority, not behind the jobs put while it was held.
      this.setState(rec, "waiting");
      this.pushReady(rec);
    }
  }

  /** Whether the job's expiry has come: it must never be handed out again. */
  private expiredBy(rec: JobRecord, now: number): boolean {
    const at = this.extras.get(rec)?.expiresAt;
    return at !== undefined && at <= now;
  }

  /** An unstarted job's expiry came: out of its heap (if in one; a blocked job is in none), into the expired state. */
  private expire(rec: JobRecord, now: number): void {
    if (rec.state === "waiting") this.unready(rec);
    else if (rec.state === "delayed") this.delayed.remove(rec);
    this.finish(rec, "expired", now);
    this.note(rec, now, "expired");
  }

  /** Expire every job whose expiry has come while it waits or is delayed. */
  private sweepExpired(now: number): void {
    for (let rec = this.expiring.popDue(now); rec !== undefined; rec = this.expiring.popDue(now)) {
      // Left the lane, replaced by a copy, or running or finished now: not this entry's job.
      if (this.byId.get(rec.id) !== rec) continue;
      if (rec.state === "waiting" || rec.state === "delayed" || rec.state === "blocked") {
        this.expire(rec, now);
      }
    }
  }

  /** After jobs became ready or slots freed: serve waiting long polls, re-arm the timer. */
  private afterChange(): void {
    if (this.waiters.length === 0) return;
    const now = this.clock.now();
    this.maintain(now);
    while (this.waiters.length > 0) {
      const waiter = this.waiters[0] as Waiter;
      const jobs = this.take(waiter.limit, waiter.leaseMs, now, waiter.startNow);
      if (jobs.length === 0) break;
      this.waiters.shift();
      this.settle(waiter, jobs);
    }
    this.armWakeTimer();
  }

  private afterFinish(now: number): void {
    if (this.retentionRules.length > 0) this.applyRetention(now);
    this.afterChange();
  }

  /**
   * One timer while long polls wait: the next delayed due time, lease expiry or, while
   * the rate limit holds ready jobs back, the time its window lets one start.
   */
  private armWakeTimer(): void {
    if (this.waiters.length === 0 || this.shared.closed) {
      this.clearWakeTimer();
      return;
    }
    const at = Math.min(
      this.delayed.peekKey(),
      this.leases.peekKey(),
      this.rateOpenAt(this.clock.now()),
      this.groupOpenAt(this.clock.now()),
    );
    if (at === this.wakeAt) return;
    this.clearWakeTimer();
    if (at === Number.POSITIVE_INFINITY) return;
    const delayMs = Math.min(MAX_TIMER_MS, Math.max(0, at - this.clock.now()));
    this.wakeAt = at;
    this.wakeTimer = this.clock.setTimeout(() => {
      this.wakeTimer = undefined;
      this.wakeAt = Number.NaN;
      if (this.shared.closed) return;
      this.afterChange();
      this.armWakeTimer();
    }, delayMs);
  }

  private clearWakeTimer(): void {
    if (this.wakeTimer !== undefined) this.clock.clearTimeout(this.wakeTimer);
    this.wakeTimer = undefined;
    this.wakeAt = Number.NaN;
  }

  private removeWaiter(waiter: Waiter): boolean {
    const i = this.waiters.indexOf(waiter);
    if (i < 0) return false;
    this.waiters.splice(i, 1);
    if (this.waiters.length === 0) this.clearWakeTimer();
    return true;
  }

  private settle(waiter: Waiter, jobs: ReservedJob[]): void {
    if (waiter.timer !== undefined) this.clock.clearTimeout(waiter.timer);
    waiter.timer = undefined;
    if (waiter.onAbort !== undefined) waiter.signal?.removeEventListener("abort", waiter.onAbort);
    waiter.resolve(this.result(jobs));
  }

  // ── state bookkeeping ────────────────────────────────────────────────────────────────

  /** Ready order: higher priority, then earlier due time, then put order. */
  /** A waiting job out of the structure reserve takes from (cancel, delete, a new key…). */
  private unready(rec: JobRecord): void {
    if (this.grouped === undefined) this.ready.remove(rec);
    else this.grouped.remove(rec);
  }

  private pushReady(rec: JobRecord): void {
    if (this.grouped !== undefined) {
      this.grouped.push(rec);
      return;
    }
    this.ready.push(rec, -rec.priority, rec.dueAt, rec.seq);
  }

  /** Delayed order: earlier due time, then put order. */
  private pushDelayed(rec: JobRecord): void {
    this.delayed.push(rec, rec.dueAt, rec.seq, 0);
  }

  private pendingCount(): number {
    const l = this.lists;
    return l.waiting.size + l.delayed.size + l.blocked.size + l.active.size;
  }

  private enter(rec: JobRecord): void {
    rec.entrySeq = ++this.entrySeq;
    this.lists[rec.state].append(rec);
  }

  /** Move between state lists (the caller keeps the heaps right). */
  private setState(rec: JobRecord, state: JobState): void {
    // Kept this small (reserve inlines it): a failed job joins its failure group in
    // finish, and leaves it in retry and drop, the only ways out of the failed state.
    this.lists[rec.state].remove(rec);
    rec.state = state;
    this.enter(rec);
  }

  private finish(rec: JobRecord, state: FinishedState, now: number): void {
    rec.finishedAt = now;
    this.setState(rec, state);
    if (state === "failed") this.failureGroups.join(rec);
    if (this.shared.watching) this.shared.finished(this.name, rec.id, state);
    if (this.flowLinks.size !== 0) {
      const links = this.flowLinks.get(rec);
      if (links?.dependents !== undefined) {
        const result = state === "succeeded" ? this.extras.get(rec)?.result : undefined;
        this.endDependency(links, state, result);
      }
    }
  }

  /** Forget a job that is in no heap. */
  private drop(rec: JobRecord): void {
    if (rec.state === "failed") this.failureGroups.leave(rec);
    this.lists[rec.state].remove(rec);
    this.byId.delete(rec.id);
    this.extras.delete(rec);
    if (this.flowLinks.size !== 0) this.flowLinks.delete(rec);
  }

  private applyRetention(now: number): void {
    for (const rule of this.retentionRules) {
      const list = this.lists[rule.state];
      let budget = RETENTION_BUDGET;
      if (rule.maxCount !== undefined) {
        while (list.size > rule.maxCount && budget > 0) {
          this.drop(list.first() as JobRecord);
          budget--;
        }
      }
      if (rule.maxAgeMs !== undefined) {
        const cutoff = now - rule.maxAgeMs;
        while (budget > 0) {
          const oldest = list.first();
          // Lists are in order of finishing, so the first young job ends the sweep.
          if (oldest === undefined || (oldest.finishedAt ?? now) > cutoff) break;
          this.drop(oldest);
          budget--;
        }
      }
    }
  }

  private note(rec: JobRecord, at: number, event: JobEvent["event"], detail?: string): void {
    const lifecycle = LIFECYCLE[event];
    if (lifecycle !== undefined) this.shared.report(lifecycle, this.name, rec.id);
    const limit = this.historyLimit;
    if (limit <= 0) return;
    // Flat (at, event, detail) triples: one array per job instead of an object per event.
    let history = rec.history;
    if (history === undefined) {
      history = [];
      rec.history = history;
    }
    history.push(at, event, detail);
    if (history.length > limit * 3) history.splice(0, history.length - limit * 3);
  }

  private dayStats(now: number): DayStats {
    if (this.today !== undefined && now >= this.todayStart && now < this.todayStart + DAY_MS) {
      return this.today;
    }
    const day = dayOf(now);
    let stats = this.days.get(day);
    if (stats === undefined) {
      stats = emptyDayStats(day);
      this.days.set(day, stats);
      if (this.days.size > STATS_DAYS_KEPT) {
        const oldest = this.days.keys().next().value;
        if (oldest !== undefined) this.days.delete(oldest);
      }
    }
    this.today = stats;
    this.todayStart = Math.floor(now / DAY_MS) * DAY_MS;
    return stats;
  }

  private info(rec: JobRecord): JobInfo {
    const info: JobInfo = {
      id: rec.id,
      lane: this.name,
      task: rec.task,
      payload: rec.payload,
      priority: rec.priority,
      state: rec.state,
      attempt: rec.attempt,
      publishedAt: rec.publishedAt,
      runAt: rec.dueAt,
      history: historyOf(rec),
    };
    if (rec.appData !== undefined) info.appData = rec.appData;
    if (rec.finishedAt !== undefined) info.finishedAt = rec.finishedAt;
    if (rec.error !== undefined) info.error = copyError(rec.error);
    info.changedAt = changedAtOf(rec);
    if (rec.group !== undefined) info.group = rec.group;
    const extra = this.extras.get(rec);
    if (extra !== undefined) {
      if (extra.tags !== undefined) info.tags = [...extra.tags];
      if (extra.expiresAt !== undefined) info.expiresAt = extra.expiresAt;
      if (extra.result !== undefined) info.result = extra.result;
      if (extra.progress !== undefined) info.progress = extra.progress;
      if (extra.logs !== undefined) info.logs = extra.logs.map((l) => ({ ...l }));
      if (extra.logsDropped > 0) info.logsDropped = extra.logsDropped;
    }
    const links = this.flowLinks.size === 0 ? undefined : this.flowLinks.get(rec);
    if (links !== undefined) {
      if (links.deps !== undefined) info.dependencies = links.deps.map((d) => ({ ...d }));
      if (links.dependents !== undefined) {
        info.dependents = links.dependents.map((d) => ({ lane: d.links.lane, jobId: d.links.id }));
      }
    }
    return info;
  }
}

function yieldThen<T>(value: T): Promise<T> {
  return new Promise((resolve) => setImmediate(resolve, value));
}

/** A lease must be a finite, non-negative number of ms (a NaN would corrupt the lease heap). */
function validLease(leaseMs: number): boolean {
  return typeof leaseMs === "number" && Number.isFinite(leaseMs) && leaseMs >= 0;
}

function leaseError(leaseMs: number): ConfigError {
  return new ConfigError("leaseMs", leaseMs, "must be a finite number of ms >= 0");
}

function historyOf(rec: JobRecord): JobEvent[] {
  const flat = rec.history;
  const events: JobEvent[] = [];
  if (flat === undefined) return events;
  for (let i = 0; i + 2 < flat.length; i += 3) {
    const event: JobEvent = { at: flat[i] as number, event: flat[i + 1] as JobEvent["event"] };
    const detail = flat[i + 2];
    if (detail !== undefined) event.detail = detail as string;
    events.push(event);
  }
  return events;
}

function copyError(error: JobError): JobError {
  return { ...error };
}

function retentionRules(policy: RetentionPolicy | undefined): RetentionRule[] {
  const rules: RetentionRule[] = [];
  if (policy === undefined) return rules;
  for (const state of ["succeeded", "failed", "canceled", "expired"] as const) {
    const p = policy[state];
    if (p === undefined || (p.maxAgeMs === undefined && p.maxCount === undefined)) continue;
    rules.push({ state, maxAgeMs: p.maxAgeMs, maxCount: p.maxCount });
  }
  return rules;
}

/** A schedule write as the contract types it (a third-party caller may pass anything). */
function checkScheduleWrite(record: ScheduleWrite): void {
  if (typeof record.id !== "string" || record.id.length === 0 || record.id.length > 128) {
    throw new ConfigError("schedule.id", record.id, "must be a string of 1-128 characters");
  }
  if (typeof record.data !== "string") {
    throw new ConfigError("schedule.data", record.data, "must be a string");
  }
  if (record.nextAt !== null && !Number.isFinite(record.nextAt)) {
    throw new ConfigError("schedule.nextAt", record.nextAt, "must be epoch ms or null");
  }
}

/** The debounce map's key: one key space per task. */
function debounceKey(task: string, key: string): string {
  return `${task}\n${key}`;
}
