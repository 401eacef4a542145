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
 */
import {
  type AdapterEvent,
  addSample,
  type CancelResult,
  type Clock,
  ClosedError,
  ConfigError,
  type DayStats,
  dayOf,
  emptyDayStats,
  type JobError,
  type JobEvent,
  type JobInfo,
  type JobState,
  type LaneCounts,
  LaneFullError,
  type LaneStore,
  type LaneStoreOptions,
  type LifecycleEventType,
  type ListOptions,
  type Lock,
  type LockStatus,
  type NackItem,
  type NewJob,
  type PutResult,
  type ReleaseItem,
  type ReservedJob,
  type ReserveOptions,
  type ReserveResult,
  type RetentionPolicy,
  type TimerHandle,
} from "@tasklane/core/adapter";
import { RecordHeap } from "./heap.ts";
import { JobRecord, ListNode } from "./job-record.ts";
import { LeaseIndex } from "./lease-index.ts";
import { StateList } from "./state-list.ts";

const DAY_MS = 86_400_000;
/** Longest timeout a Node timer honours; longer waits are re-armed when this one fires. */
const MAX_TIMER_MS = 2_147_483_647;
/** Finished jobs removed by retention per state per call, at most. */
const RETENTION_BUDGET = 256;
const DEFAULT_PAGE_SIZE = 100;
const MAX_PAGE_SIZE = 10_000;
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
};

interface RetentionRule {
  state: "succeeded" | "failed" | "canceled";
  maxAgeMs: number | undefined;
  maxCount: number | undefined;
}

interface Waiter {
  limit: number;
  leaseMs: number;
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
  private maxStalls = 0;
  private historyLimit = 0;
  private retentionRules: RetentionRule[] = [];

  private readonly byId = new Map<string, JobRecord>();
  private readonly ready = new RecordHeap(false);
  private readonly delayed = new RecordHeap(false);
  private readonly leases = new LeaseIndex();
  private readonly lists: Record<JobState, StateList> = {
    waiting: new StateList(),
    delayed: new StateList(),
    active: new StateList(),
    succeeded: new StateList(),
    failed: new StateList(),
    canceled: new StateList(),
  };
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
    this.maxStalls = options.maxStalls;
    this.historyLimit = options.historyLimit;
    this.retentionRules = retentionRules(options.retention);
    // A higher maxConcurrency may let waiting long polls take jobs now.
    this.afterChange();
  }

  // ── put ──────────────────────────────────────────────────────────────────────────────

  async put(jobs: NewJob[]): Promise<PutResult[]> {
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
      if (this.byId.has(job.id)) {
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
    if (isDelayed) this.pushDelayed(rec);
    else this.pushReady(rec);
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
    const jobs = this.take(limit, leaseMs, now);
    const signal = options.signal;
    const waitMs = Math.min(options.waitMs, MAX_TIMER_MS);
    if (jobs.length > 0 || !(waitMs > 0) || !(limit > 0) || signal?.aborted) {
      const result: ReserveResult = { jobs, ready: this.takeable() };
      return this.yieldDue(jobs.length) ? yieldThen(result) : Promise.resolve(result);
    }
    return new Promise<ReserveResult>((resolve) => {
      const waiter: Waiter = {
        limit,
        leaseMs,
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
        this.settle(waiter, this.take(waiter.limit, waiter.leaseMs, at));
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

  /** Take up to `limit` ready jobs as this reservation: waiting → active. */
  private take(limit: number, leaseMs: number, now: number): ReservedJob[] {
    const jobs: ReservedJob[] = [];
    if (this.paused) return jobs;
    let n = Math.min(limit, this.maxConcurrency - this.lists.active.size);
    if (n <= 0 || this.ready.size === 0) return jobs;
    const stats = this.dayStats(now);
    const expiresAt = now + leaseMs;
    while (n-- > 0) {
      const rec = this.ready.pop();
      if (rec === undefined) break;
      rec.attempt++;
      rec.token = String(++this.tokenSeq);
      rec.reservedAt = now;
      rec.expiresAt = expiresAt;
      this.move(rec, "active");
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
      jobs.push(job);
    }
    return jobs;
  }

  /** Due jobs a reserve could take right now (0 while paused or at maxConcurrency). */
  private takeable(): number {
    if (this.paused) return 0;
    const free = this.maxConcurrency - this.lists.active.size;
    return free <= 0 ? 0 : Math.min(this.ready.size, free);
  }

  // ── ack, nack, release, extend ───────────────────────────────────────────────────────

  async ack(locks: Lock[]): Promise<LockStatus[]> {
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
      if ("dead" in item && item.dead === true) {
        stats.failures++;
        this.finish(rec, "failed", now);
        this.note(rec, now, "failed", item.error.reason);
      } else {
        stats.retries++;
        const runAt = "runAt" in item && Number.isFinite(item.runAt) ? item.runAt : now;
        rec.dueAt = runAt;
        if (runAt > now) {
          this.move(rec, "delayed");
          this.pushDelayed(rec);
        } else {
          this.move(rec, "waiting");
          this.pushReady(rec);
        }
        this.note(rec, now, "retrying", item.error.message);
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
      // The delivery does not count: the next reserve hands out the same attempt number.
      rec.attempt--;
      rec.dueAt = now;
      this.move(rec, "waiting");
      this.pushReady(rec);
      this.note(rec, now, "released");
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
    let changed = false;
    for (const lock of locks) {
      const rec = this.byId.get(lock.jobId);
      const status = this.lockStatus(rec, lock, now);
      statuses.push(status);
      if (status !== "ok" || rec === undefined) continue;
      changed = true;
      rec.expiresAt = expiresAt;
      this.leases.update(rec);
    }
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
      active: l.active.size,
      failed: l.failed.size,
      succeeded: l.succeeded.size,
      canceled: l.canceled.size,
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
          this.ready.remove(rec);
          break;
        case "delayed":
          this.delayed.remove(rec);
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
    let retried = 0;
    if (ids === undefined) {
      for (
        let rec = this.lists.failed.first();
        rec !== undefined;
        rec = this.lists.failed.first()
      ) {
        this.retry(rec, now);
        retried++;
      }
    } else {
      for (const id of ids) {
        const rec = this.byId.get(id);
        if (rec === undefined || rec.state !== "failed") continue;
        this.retry(rec, now);
        retried++;
      }
    }
    if (retried > 0) this.afterChange();
    return retried;
  }

  private retry(rec: JobRecord, now: number): void {
    rec.attempt = 0;
    rec.stalls = 0;
    rec.finishedAt = undefined;
    rec.dueAt = now;
    this.move(rec, "waiting");
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
      if (rec.state === "waiting") this.ready.remove(rec);
      else if (rec.state === "delayed") this.delayed.remove(rec);
      this.drop(rec);
      this.shared.report("deleted", this.name, id);
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
    while (this.delayed.peekKey() <= now) {
      const rec = this.delayed.pop() as JobRecord;
      this.move(rec, "waiting");
      this.pushReady(rec);
    }
    while (this.leases.peekKey() <= now) {
      this.stall(this.leases.pop() as JobRecord, now);
    }
    if (this.retentionRules.length > 0) this.applyRetention(now);
  }

  /** A lease expired: back to waiting with the stall counted, or dead past maxStalls. */
  private stall(rec: JobRecord, now: number): void {
    rec.stalls++;
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
    } else {
      // Due again from the moment its lease ended, so it keeps its place among equals.
      rec.dueAt = rec.expiresAt;
      this.move(rec, "waiting");
      this.pushReady(rec);
    }
  }

  /** After jobs became ready or slots freed: serve waiting long polls, re-arm the timer. */
  private afterChange(): void {
    if (this.waiters.length === 0) return;
    const now = this.clock.now();
    this.maintain(now);
    while (this.waiters.length > 0) {
      const waiter = this.waiters[0] as Waiter;
      const jobs = this.take(waiter.limit, waiter.leaseMs, now);
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

  /** One timer while long polls wait: the next delayed due time or lease expiry. */
  private armWakeTimer(): void {
    if (this.waiters.length === 0 || this.shared.closed) {
      this.clearWakeTimer();
      return;
    }
    const at = Math.min(this.delayed.peekKey(), this.leases.peekKey());
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
    waiter.resolve({ jobs, ready: this.shared.closed ? 0 : this.takeable() });
  }

  // ── state bookkeeping ────────────────────────────────────────────────────────────────

  /** Ready order: higher priority, then earlier due time, then put order. */
  private pushReady(rec: JobRecord): void {
    this.ready.push(rec, -rec.priority, rec.dueAt, rec.seq);
  }

  /** Delayed order: earlier due time, then put order. */
  private pushDelayed(rec: JobRecord): void {
    this.delayed.push(rec, rec.dueAt, rec.seq, 0);
  }

  private pendingCount(): number {
    const l = this.lists;
    return l.waiting.size + l.delayed.size + l.active.size;
  }

  private enter(rec: JobRecord): void {
    rec.entrySeq = ++this.entrySeq;
    this.lists[rec.state].append(rec);
  }

  /** Move between state lists (the caller keeps the heaps right). */
  private move(rec: JobRecord, state: JobState): void {
    this.lists[rec.state].remove(rec);
    rec.state = state;
    this.enter(rec);
  }

  private finish(rec: JobRecord, state: "succeeded" | "failed" | "canceled", now: number): void {
    rec.finishedAt = now;
    this.move(rec, state);
  }

  /** Forget a job that is in no heap. */
  private drop(rec: JobRecord): void {
    this.lists[rec.state].remove(rec);
    this.byId.delete(rec.id);
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
  for (const state of ["succeeded", "failed", "canceled"] as const) {
    const p = policy[state];
    if (p === undefined || (p.maxAgeMs === undefined && p.maxCount === undefined)) continue;
    rules.push({ state, maxAgeMs: p.maxAgeMs, maxCount: p.maxCount });
  }
  return rules;
}
