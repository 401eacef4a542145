/**
 * A reference model of one lane: the LaneStore contract of docs/adapter-contract.md as
 * plain data, for the model-based suite (model-suite.ts). Each method takes the time the
 * adapter will use, applies the contract's maintenance first (due delayed jobs become
 * waiting, expired leases stall), and returns the answer the adapter must give.
 *
 * It is deliberately naive (arrays and sorts, no indexes): its only job is to be
 * obviously right.
 */
import type { CancelResult, JobState, LaneCounts, LockStatus } from "@tasklane/core/adapter";

export interface ModelJob {
  id: string;
  payload: string;
  priority: number;
  /** Put order in the lane. */
  seq: number;
  state: JobState;
  /** When it became (or becomes) due: runAt, the put time, a release, a lease's end. */
  dueAt: number;
  /** Deliveries counted so far. */
  attempt: number;
  stalls: number;
  /** The current delivery was prefetched (ReserveOptions.startNow): its expiry is a skip. */
  prefetched: boolean;
  /** A prefetched delivery's lease ran out (a suspect); the next stall counts it too. */
  skipped: boolean;
  /** The current (or, once finished, the last) reservation's token and lease end. */
  token?: string;
  expiresAt?: number;
  /** That reservation was canceled while active: its lock answers "canceled". */
  canceledWhileActive: boolean;
  error?: { name: string; reason: string; message?: string } | undefined;
}

/** A lock as the adapter handed it out, kept for replaying stale ones. */
export interface ModelLock {
  jobId: string;
  token: string;
  expiresAt: number;
  /** For reports: the job and which of its deliveries, e.g. "j2#3". */
  label: string;
}

export interface ModelConfig {
  maxStalls: number;
  maxConcurrency: number | undefined;
}

const STATES: readonly JobState[] = [
  "waiting",
  "delayed",
  "active",
  "succeeded",
  "failed",
  "canceled",
];

export class LaneModel {
  readonly jobs = new Map<string, ModelJob>();
  /** Every lock ever handed out, in order. */
  readonly locks: ModelLock[] = [];
  paused = false;
  private seq = 0;

  readonly config: ModelConfig;
  constructor(config: ModelConfig) {
    this.config = config;
  }

  /** The contract's lazy maintenance, as every call runs it first. */
  maintain(now: number): void {
    for (const job of this.jobs.values()) {
      if (job.state === "delayed" && job.dueAt <= now) job.state = "waiting";
    }
    for (const job of this.jobs.values()) {
      if (job.state !== "active" || (job.expiresAt ?? 0) > now) continue;
      if (job.prefetched) {
        // Never started, as far as the backend knows: no stall, the attempt not spent.
        job.prefetched = false;
        job.skipped = true;
        job.attempt--;
        job.state = "waiting";
        continue;
      }
      job.stalls += job.skipped ? 2 : 1;
      job.skipped = false;
      if (job.stalls > this.config.maxStalls) {
        job.state = "failed";
        job.error = { name: "StalledError", reason: "stalled" };
      } else {
        // Its due time stays: it has waited already, so it goes back to its place.
        job.state = "waiting";
      }
    }
  }

  /** Waiting jobs in reserve order: higher priority, earlier due time, put order. */
  ready(): ModelJob[] {
    return [...this.jobs.values()]
      .filter((j) => j.state === "waiting")
      .sort((a, b) => b.priority - a.priority || a.dueAt - b.dueAt || a.seq - b.seq);
  }

  activeCount(): number {
    let n = 0;
    for (const job of this.jobs.values()) if (job.state === "active") n++;
    return n;
  }

  /** What probe() and ReserveResult.ready must say: jobs a reserve could take now. */
  takeable(): number {
    if (this.paused) return 0;
    const free = (this.config.maxConcurrency ?? Number.POSITIVE_INFINITY) - this.activeCount();
    return Math.max(0, Math.min(this.ready().length, free));
  }

  counts(): LaneCounts {
    // The model never sets an expiry nor a dependency: it has no expired or blocked job.
    const counts = {
      waiting: 0,
      delayed: 0,
      blocked: 0,
      active: 0,
      succeeded: 0,
      failed: 0,
      canceled: 0,
      expired: 0,
    };
    for (const job of this.jobs.values()) counts[job.state]++;
    return counts;
  }

  idsIn(state: JobState): string[] {
    return [...this.jobs.values()]
      .filter((j) => j.state === state)
      .map((j) => j.id)
      .sort();
  }

  static readonly states = STATES;

  put(
    jobs: Array<{ id: string; payload: string; priority: number; runAt?: number }>,
    now: number,
    dedup: boolean,
  ): Array<"created" | "duplicate"> {
    return jobs.map((j) => {
      if (dedup && this.jobs.has(j.id)) return "duplicate";
      const dueAt = j.runAt ?? now;
      this.jobs.set(j.id, {
        id: j.id,
        payload: j.payload,
        priority: j.priority,
        seq: this.seq++,
        state: dueAt > now ? "delayed" : "waiting",
        dueAt,
        attempt: 0,
        stalls: 0,
        prefetched: false,
        skipped: false,
        canceledWhileActive: false,
      });
      return "created";
    });
  }

  /** The jobs a reserve of `limit` must hand out, in order (not yet taken). */
  toTake(limit: number): ModelJob[] {
    if (this.paused) return [];
    const free = (this.config.maxConcurrency ?? Number.POSITIVE_INFINITY) - this.activeCount();
    return this.ready().slice(0, Math.max(0, Math.min(limit, free)));
  }

  /** Whether a reserve must mark `job` a suspect (capability `suspects`). */
  static suspect(job: ModelJob): boolean {
    return job.stalls > 0 || job.skipped;
  }

  /**
   * Record that `job` was handed out under `token` until `expiresAt`; `prefetched` when it
   * came after the reserve's startNow (a suspect never is).
   */
  take(job: ModelJob, token: string, expiresAt: number, prefetched = false): ModelLock {
    job.prefetched = prefetched && !LaneModel.suspect(job);
    job.state = "active";
    job.attempt++;
    job.token = token;
    job.expiresAt = expiresAt;
    job.canceledWhileActive = false;
    const lock = { jobId: job.id, token, expiresAt, label: `${job.id}#${job.attempt}` };
    this.locks.push(lock);
    return lock;
  }

  /** What a lease-bound call must answer for `lock` now. */
  lockStatus(lock: { jobId: string; token: string }, now: number): LockStatus {
    const job = this.jobs.get(lock.jobId);
    if (job === undefined || job.token !== lock.token) return "lost";
    if (job.state === "active") return (job.expiresAt ?? 0) > now ? "ok" : "lost";
    if (job.state === "canceled" && job.canceledWhileActive) return "canceled";
    return "lost";
  }

  ack(lock: { jobId: string; token: string }, now: number): LockStatus {
    const status = this.lockStatus(lock, now);
    const job = this.jobs.get(lock.jobId);
    if (status === "ok" && job) job.state = "succeeded";
    return status;
  }

  nack(
    lock: { jobId: string; token: string },
    now: number,
    outcome: { dead: true; error: ModelJob["error"] } | { runAt: number; error: ModelJob["error"] },
  ): LockStatus {
    const status = this.lockStatus(lock, now);
    const job = this.jobs.get(lock.jobId);
    if (status !== "ok" || !job) return status;
    job.error = outcome.error;
    if ("dead" in outcome) {
      job.state = "failed";
    } else {
      job.dueAt = outcome.runAt;
      job.state = outcome.runAt > now ? "delayed" : "waiting";
    }
    return status;
  }

  release(lock: { jobId: string; token: string }, now: number): LockStatus {
    const status = this.lockStatus(lock, now);
    const job = this.jobs.get(lock.jobId);
    if (status !== "ok" || !job) return status;
    // Its due time stays: it goes back to its place among the waiting jobs.
    job.state = "waiting";
    job.attempt--;
    return status;
  }

  extend(lock: { jobId: string; token: string }, now: number, leaseMs: number): LockStatus {
    const status = this.lockStatus(lock, now);
    const job = this.jobs.get(lock.jobId);
    if (status === "ok" && job) {
      job.expiresAt = now + leaseMs;
      for (const l of this.locks)
        if (l.jobId === job.id && l.token === lock.token) l.expiresAt = job.expiresAt;
    }
    return status;
  }

  cancel(id: string): CancelResult {
    const job = this.jobs.get(id);
    if (job === undefined) return "not_found";
    if (job.state === "waiting" || job.state === "delayed") {
      job.state = "canceled";
      return "canceled";
    }
    if (job.state === "active") {
      job.state = "canceled";
      job.canceledWhileActive = true;
      return "canceled";
    }
    return "finished";
  }

  retryFailed(ids: string[] | undefined, now: number): number {
    const targets =
      ids === undefined
        ? [...this.jobs.values()].filter((j) => j.state === "failed")
        : ids.map((id) => this.jobs.get(id));
    let n = 0;
    for (const job of targets) {
      if (job === undefined || job.state !== "failed") continue;
      job.state = "waiting";
      job.attempt = 0;
      job.stalls = 0;
      job.skipped = false;
      job.dueAt = now;
      n++;
    }
    return n;
  }

  delete(ids: string[]): number {
    let n = 0;
    for (const id of ids) {
      const job = this.jobs.get(id);
      if (job === undefined || job.state === "active") continue;
      this.jobs.delete(id);
      n++;
    }
    return n;
  }
}
