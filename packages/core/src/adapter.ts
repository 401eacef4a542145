/**
 * The adapter contract: what a storage backend must do for tasklane.
 *
 * Core owns policy (retries and backoff, heartbeat cadence, concurrency, selection,
 * events, validation). An adapter owns atomicity only: every method takes a batch and
 * applies each item's transition atomically. Every time handed to an adapter is an
 * absolute epoch-ms value computed by core; adapters never invent retry schedules.
 *
 * Job state machine (every arrow is one atomic transition in the backend):
 *
 *   putFlow ─deps─► blocked ─all ended─► waiting | delayed     (capability `flows`)
 *                   │    └─a dependency with onFailure "fail" ended unsucceeded─► failed
 *   put ──► waiting ──reserve──► active ──ack──► succeeded ──retention──► gone
 *    │       ▲  │  ▲               │
 *    │       │  │  └─promote─┐     ├◄── nack{runAt}  (core computed the backoff)
 *    └runAt──┼► delayed ─due─┴─────┤
 *            │  │                  ├─── nack{dead}   ──► failed (dead letter)
 *            │  │                  ├─── lease expired ──► waiting, attempt counted on the
 *            │  │                  │      next reserve; stalls > maxStalls ──► failed("stalled")
 *            │  │                  ├─── lease expired, delivery prefetched (not started,
 *            │  │                  │      ReserveOptions.startNow) ──► waiting, attempt not
 *            │  │                  │      spent, no stall, marked skipped (a suspect)
 *            │  └──────────────────┴─── expiresAt passed while waiting or delayed ──► expired
 *   any pending state ──cancel──► canceled        failed ──retryFailed──► waiting
 *   waiting | delayed | active | failed ──move──► (moving) ──► waiting | delayed in the
 *                                                  target lane, gone from the source
 *
 * Pending = blocked | waiting | delayed | active. Finished = succeeded | failed | canceled | expired.
 * Delivery is at least once. A move is one step on the memory adapter; on a backend
 * where two lanes cannot change in one atomic step (Redis Cluster) it is crash-safe
 * steps: the job is marked moving in the source (no longer handed out, its lock fenced),
 * put by id into the target, then removed from the source; a later move of the same id
 * completes one that was interrupted (docs/adapter-contract.md, "move").
 *
 * Flows (capability `flows`): a job put with `dependsOn` waits `blocked` until the jobs
 * it names end (each one's end is counted once, by its place in the list, so a repeated
 * notification changes nothing); docs/adapter-contract.md, "flows", has the rules.
 *
 * Fencing: each reservation gets a fresh `token`. `ack`, `nack` and `extend` with a token
 * that is no longer the job's current one return "lost" and change nothing, so a worker
 * whose lease expired can never complete a job that another worker now owns.
 */

import { ConfigError } from "./errors.ts";
import type { DayStats } from "./stats.ts";

/** Every state a job can be in, in the order a listing across states visits them. */
export const JOB_STATES = [
  "waiting",
  "delayed",
  "blocked",
  "active",
  "succeeded",
  "failed",
  "canceled",
  "expired",
] as const;

/** Where a job is in its life. */
export type JobState = (typeof JOB_STATES)[number];

/** States a job does not leave by itself (retention removes it, an operator may retry or move it). */
export type FinishedState = "succeeded" | "failed" | "canceled" | "expired";

/** States a job can be canceled from. */
export const PENDING_STATES: ReadonlyArray<JobState> = ["waiting", "delayed", "blocked", "active"];

/**
 * Outcome of a lease-bound call, per lock. Races are values, never exceptions. A job moved
 * to another lane while held answers "lost": its holder learns of the move from the
 * `put` event (AdapterEvent) and aborts with it.
 */
export type LockStatus = "ok" | "lost" | "canceled";

/**
 * Why a job ended in the dead letter set: "error" (the handler threw and no attempts
 * remain), "unrecoverable" (it threw UnrecoverableError), "timeout" (the last attempt ran
 * past timeLimitMs), "stalled" (the lease expired more than maxStalls times), "malformed"
 * (the stored job or payload could not be decoded), "unknown_task" (no worker knows the
 * job's task), "invalid_payload" (the payload failed its schema when the worker decoded
 * it), "payload_too_large" (payload + appData found over the client's maxPayloadBytes,
 * left unparsed), "invalid_result" (the handler's return value failed its result schema,
 * could not be encoded, or was over maxResultBytes), "dependency_failed" (capability
 * `flows`: a job it waited for with onFailure "fail" ended without succeeding; it never ran).
 */
export const FAIL_REASONS = [
  "error",
  "unrecoverable",
  "timeout",
  "stalled",
  "malformed",
  "unknown_task",
  "invalid_payload",
  "payload_too_large",
  "invalid_result",
  "dependency_failed",
] as const;
export type FailReason = (typeof FAIL_REASONS)[number];

/** A serialisable error, as stored with a failed job. */
export interface JobError {
  name: string;
  message: string;
  stack?: string;
  reason: FailReason;
}

/** The longest `NewJob.traceContext` core stores; a longer one from an instrumentation is dropped. */
export const MAX_TRACE_CONTEXT_LENGTH = 4_096;

/** A job as core hands it to `put`. Payload and appData are already-encoded JSON text. */
export interface NewJob {
  /** Unique within the lane. A second put with the same id is a "duplicate" and a no-op. */
  id: string;
  /**
   * True when the client generated `id` itself (a random version 4 UUID: 122 random bits
   * from the CSPRNG) rather than taking the caller's `jobId`. No job can have such an id
   * yet, so an adapter may skip its duplicate check for the job (the Redis adapter then
   * saves a hash lookup per job). Set only by the client, never for a caller's id: an
   * adapter that skips the check trusts it. Default false.
   */
  freshId?: boolean;
  /** Task name, used by the worker to find the handler. */
  task: string;
  /** Encoded JSON payload (opaque to the adapter). */
  payload: string;
  /** Encoded JSON application data (Kale's app_data), if any. */
  appData?: string;
  /** Job-level priority inside the lane: higher first, FIFO among equals. Default 0. */
  priority: number;
  /** Epoch ms when the job becomes due. Absent or in the past: due now. */
  runAt?: number;
  /** Epoch ms the client published it (informational). */
  publishedAt: number;
  /** SQS FIFO message group, ignored by adapters without groups. */
  groupId?: string;
  /**
   * Fair group (capability `groups`), in a lane opened with `groups`: the lane serves its
   * groups round-robin, and runs at most `groups.concurrency` jobs of one group at once.
   * Core sends 1-128 characters; absent: the lane's ungrouped jobs, one group of their own.
   */
  group?: string;
  /**
   * Trace context from the client's instrumentation (`@tasklane/opentelemetry` writes a
   * W3C `traceparent`), opaque to the adapter: stored with the job and handed back
   * unchanged with every delivery (`ReservedJob.traceContext`), retries and stalls
   * included. Absent unless an instrumentation set it; at most 4,096 characters of
   * well-formed text (`MAX_TRACE_CONTEXT_LENGTH`).
   */
  traceContext?: string;
  /**
   * Labels to find the job by (capability `tags`): `list({ tag })`, `count({ tag })`.
   * Core sends 1-16 distinct non-empty strings of at most 128 characters; absent: none.
   */
  tags?: string[];
  /**
   * Debounce or throttle by key (capability `debounce`; docs/adapter-contract.md,
   * "debounce"): while the lane holds a job of the same task and key that has never been
   * handed out and whose window has not ended, this job is not stored; with keep "last"
   * its payload and appData replace that job's. Core computes `until` (and, for "last",
   * the job's `runAt`: the window's end).
   */
  debounce?: JobDebounce;
  /**
   * Epoch ms after which the job is never handed out (capability `expiry`): a job still
   * waiting or delayed then (its first run or a retry) ends in the terminal state
   * `expired`. Core makes sure it is after `runAt` and after the publish time.
   */
  expiresAt?: number;
  /**
   * The jobs this one waits for (capability `flows`; only `Adapter.putFlow` reads it):
   * the job is stored `blocked` and becomes waiting (or delayed, until its runAt) once
   * they have ended as their `onFailure` says; see JobDependency. 1-1,000 entries.
   */
  dependsOn?: JobDependency[];
}

/**
 * What a dependency's failure does to the job waiting for it (capability `flows`). A
 * dependency "fails" when it ends in any state but succeeded: failed (dead letter set),
 * canceled, expired, or deleted while pending.
 * - "fail": the waiting job fails at once (dead letter set, reason "dependency_failed",
 *   the error naming the dependency), never run; its other dependencies go on.
 * - "ignore": the failure counts as an end like a success; the job still waits for the
 *   rest of its dependencies and then runs.
 * - "continue": the failure makes the job due at once, without waiting for the rest of
 *   its dependencies (they go on; their ends are still recorded in its view).
 * A success always counts as an end.
 */
export const DEPENDENCY_POLICIES = ["fail", "ignore", "continue"] as const;
export type DependencyPolicy = (typeof DEPENDENCY_POLICIES)[number];

/** One job a job waits for (capability `flows`). */
export interface JobDependency {
  /** The dependency's lane (full name), a lane of the same adapter. */
  lane: string;
  id: string;
  onFailure: DependencyPolicy;
}

/**
 * One dependency as the waiting job records it (`JobInfo.dependencies`): its end and
 * result are copied into the waiting job when it ends, so retention of the dependency
 * (or its later retry) never changes what the waiting job sees.
 */
export interface DependencyView extends JobDependency {
  /** Its task, when known (the adapter read it when it recorded the dependency). */
  task?: string;
  /** How it ended; absent while it has not. "deleted": removed before it ended. */
  state?: FinishedState | "deleted";
  /** Its result (capability `results`), when it succeeded with one. */
  result?: string;
}

/** One job of `putFlow`: a lane of the adapter and the job to put there. */
export interface FlowItem {
  lane: LaneStore;
  job: NewJob;
}

/**
 * `putFlow`'s answer. "created": every job is stored. "duplicate": a job with one of the
 * ids exists in its lane (named here); nothing was written. "missing": a dependency
 * names a job that is neither stored in its lane nor an earlier item of the call;
 * nothing was written.
 */
export type FlowPutResult =
  | { status: "created" }
  | { status: "duplicate"; lane: string; id: string }
  | { status: "missing"; lane: string; id: string };

/** A job's debounce key and window, as core hands it to `put`. */
export interface JobDebounce {
  /** 1-128 characters; one key space per task in a lane. */
  key: string;
  /** Epoch ms the window ends (the put's time + `ms`). */
  until: number;
  /** "last": a later put inside the window replaces the payload; "first": it is dropped. */
  keep: "last" | "first";
}

/**
 * `created`: stored. `duplicate`: a job with this id exists; nothing changed.
 * `debounced` (capability `debounce`): not stored; `id` names the waiting job of the same
 * debounce key that will run instead (its payload replaced when keep is "last").
 */
export interface PutResult {
  id: string;
  status: "created" | "duplicate" | "debounced";
}

/** A lease on one active job. */
export interface Lock {
  jobId: string;
  /** Fencing token of this reservation (opaque; SQS uses the receipt handle). */
  token: string;
  /** Epoch ms (backend clock) when the lease ends unless extended. */
  expiresAt: number;
}

/** A job handed to a worker by `reserve`. */
export interface ReservedJob {
  id: string;
  task: string;
  payload: string;
  appData?: string;
  priority: number;
  /** 1 on the first delivery; +1 on every later delivery (retries and stalls). */
  attempt: number;
  publishedAt: number;
  /** Epoch ms when it became due (for wait-time stats). */
  readyAt: number;
  lock: Lock;
  /** `NewJob.traceContext` as it was put, when it was set. */
  traceContext?: string;
  /**
   * True when the job's lease ran out on an earlier delivery (capability `suspects`): it
   * may be what ended its last worker. The worker runs a suspect alone, so that if it
   * crashes its process again it takes no other job with it. A suspect's delivery counts
   * as started whatever `ReserveOptions.startNow` says. Absent otherwise.
   */
  suspect?: true;
  /**
   * Set by the adapter when the stored job could not be decoded (corrupted by a foreign
   * writer, a message tasklane did not write). Core dead-letters it with reason
   * "malformed" and this text, and never runs it.
   */
  malformed?: string;
}

export interface ReserveOptions {
  /** Take at most this many jobs (>= 1, <= capabilities.maxBatch). */
  limit: number;
  /** Lease length for every job taken. */
  leaseMs: number;
  /** When no job is due, wait up to this long for one (long poll). 0 = return at once. */
  waitMs: number;
  /** Ends a long poll at once (returning what was taken, usually nothing). */
  signal?: AbortSignal;
  /**
   * How many of the jobs taken (the first ones, in reply order) the worker starts at once
   * (capability `startNow`); the rest wait in its prefetch buffer. A prefetched delivery
   * whose lease runs out is handed back like a release: its attempt is not spent and it
   * is not a stall, but it is marked (the job becomes a suspect), because the backend
   * cannot tell it from a job the worker started from its buffer just before it died.
   * The next lease of such a job that runs out counts that delivery too (two stalls), so
   * a job that ends its worker still goes dead after at most maxStalls + 1 runs
   * (maxStalls ≥ 1). Absent: every job taken starts at once.
   */
  startNow?: number;
}

export interface ReserveResult {
  jobs: ReservedJob[];
  /**
   * Jobs still due in this lane after this reserve, when the backend knows it cheaply
   * (exact or approximate per `capabilities.exactCounts`). Selectors use it instead of
   * probing. Undefined when unknown.
   */
  ready?: number;
  /**
   * When `ready` is 0: the epoch ms (in the adapter's clock: the injected one, or the
   * system clock) at which a job of this lane may become takeable, a delayed job or retry
   * falling due, a lease running out or the rate limit's window letting a waiting job
   * start (capability `rateLimit`), when the backend knows it cheaply. Early rather
   * than late (a bound); undefined when nothing is scheduled or unknown. A worker serving
   * several lanes ends a long poll on another lane at that time. A time already passed
   * means "look again now" (a job may have become takeable after this reserve looked:
   * see docs/adapter-contract.md); the next reserve looks again, and must not answer so
   * for the same time, or the worker would spin.
   */
  nextDueAt?: number;
}

/**
 * What a running job reported and the worker has not sent yet (capability `reports`):
 * its latest progress and the log lines since its last report. It rides on `report`
 * while the job runs and on the job's ack, nack or release, so the last report of a job
 * is stored with its outcome in the same atomic step and is never lost.
 */
export interface JobReport {
  /** Latest progress, encoded JSON (core bounds it: MAX_PROGRESS_BYTES). Replaces the stored one. */
  progress?: string;
  /** New log lines, oldest first, appended to the stored log (which keeps the last `logLimit`). */
  logs?: JobLogLine[];
  /** Lines the worker dropped (oldest first) before sending, added to `JobInfo.logsDropped`. */
  logsDropped?: number;
}

/** One line of a job's log. */
export interface JobLogLine {
  /** Epoch ms (the worker's clock) when the handler logged it. */
  at: number;
  /** The delivery that logged it (JobInfo.attempt at the time). */
  attempt: number;
  /** At most MAX_LOG_LINE_LENGTH characters; a longer line is cut and marked by core. */
  message: string;
}

/**
 * One item of `ack`: the lock itself, with what the job leaves behind. Extends `Lock`, so
 * an adapter without `results` or `reports` may read it as a plain lock, and an ack with
 * nothing to store costs no extra object.
 */
export interface AckItem extends Lock {
  /** The handler's return value, encoded JSON (capability `results`); absent: none. */
  result?: string;
  /** The job's last unsent report (capability `reports`). */
  report?: JobReport;
}

export type NackItem =
  | { lock: Lock; runAt: number; error: JobError; report?: JobReport }
  | { lock: Lock; dead: true; error: JobError; report?: JobReport };

/** A nack with no delay, used to hand a job back untouched (shutdown, time budget). */
export interface ReleaseItem {
  lock: Lock;
  /** When true the delivery does not count as an attempt. */
  uncounted: true;
  /**
   * Epoch ms the job is due again (capability `retryAfter`): it waits delayed until then,
   * its due time becomes this. Absent: due again at once, at its place.
   */
  runAt?: number;
  /** The job's last unsent report (capability `reports`): a handler stopped at shutdown may have logged. */
  report?: JobReport;
}

/** One item of `report`: a running job's progress and log lines, fenced by its lock. */
export interface ReportItem extends JobReport {
  lock: Lock;
}

export interface LaneCounts {
  waiting: number;
  delayed: number;
  /** Jobs waiting for their dependencies; present where the adapter has capability `flows`. */
  blocked?: number;
  active: number;
  failed: number;
  succeeded: number;
  canceled: number;
  /** Jobs that expired unstarted; present where the adapter has capability `expiry`. */
  expired?: number;
}

/**
 * What a history entry records: the lifecycle, plus "expired" (never handed out after its
 * expiresAt), "promoted" (a delayed job made due now by hand), "prioritized" (its priority
 * changed by hand; detail: the new priority), "moved" (put into this lane from another;
 * detail: the source lane) and "unblocked" (its dependencies ended: blocked → waiting or
 * delayed; capability `flows`).
 */
export const JOB_EVENT_TYPES = [
  "published",
  "reserved",
  "succeeded",
  "retrying",
  "failed",
  "stalled",
  "canceled",
  "released",
  "retried",
  "expired",
  "promoted",
  "prioritized",
  "moved",
  "unblocked",
] as const;
export type JobEventType = (typeof JOB_EVENT_TYPES)[number];

/** A history entry kept per job (bounded). */
export interface JobEvent {
  at: number;
  event: JobEventType;
  detail?: string;
}

/**
 * A job without its bulky parts: what `listPage` returns with `fields: "summary"`. The
 * error keeps its name, message and reason, not its stack.
 */
export interface JobSummary {
  id: string;
  lane: string;
  task: string;
  priority: number;
  state: JobState;
  /** Deliveries so far. */
  attempt: number;
  publishedAt: number;
  runAt: number;
  /**
   * Epoch ms when the job entered its current state (capability `search`; the time that
   * `since` and `until` compare). Absent where the adapter does not keep it.
   */
  changedAt?: number;
  finishedAt?: number;
  error?: JobError;
  /** Capability `tags`. */
  tags?: string[];
  /** Capability `groups`: its fair group (NewJob.group). */
  group?: string;
  /** Capability `expiry`: when an unstarted job expires. */
  expiresAt?: number;
}

/** What `get` and `list` return. */
export interface JobInfo extends JobSummary {
  payload: string;
  appData?: string;
  history: JobEvent[];
  /** The handler's return value of the attempt that succeeded, encoded JSON (capability `results`). */
  result?: string;
  /** Latest progress reported, encoded JSON (capability `reports`); kept across attempts. */
  progress?: string;
  /** The jobs it waits (or waited) for, in the order given, with their ends (capability `flows`). */
  dependencies?: DependencyView[];
  /** The jobs waiting for it, as they were put (capability `flows`). */
  dependents?: JobRef[];
  /** The last `logLimit` log lines, oldest first, across attempts (capability `reports`). */
  logs?: JobLogLine[];
  /** Log lines dropped so far to keep the log bounded (capability `reports`). */
  logsDropped?: number;
}

export interface ListOptions {
  state: JobState;
  /** How many jobs the adapter fetches per round trip. Default adapter-specific. */
  pageSize?: number;
}

/**
 * Which jobs a search means (capability `search`). Every given condition must hold;
 * an empty filter matches every job of the lane.
 */
export interface JobFilter {
  /** Only jobs in this state. Absent: every state (in the order of JOB_STATES). */
  state?: JobState;
  /** Only jobs of this task. */
  task?: string;
  /** Only jobs carrying this tag (capability `tags`). */
  tag?: string;
  /** Only jobs whose last error has this name (a failure group, see `failures`). */
  errorName?: string;
  /** Only jobs that entered their current state at or after this epoch ms (`changedAt`). */
  since?: number;
  /** Only jobs that entered their current state before this epoch ms (`changedAt`). */
  until?: number;
}

/** A search, page by page (`listPage`). */
export interface ListFilter extends JobFilter {
  /** "summary": jobs without payload, appData, result, progress, logs, history or stack. Default "full". */
  fields?: "full" | "summary";
  /** Most jobs per page. Default 100; the adapter may cap it (memory 10,000, Redis 1,000). */
  pageSize?: number;
}

/**
 * One page of a search. `cursor` is opaque; pass it back for the next page. Undefined:
 * the listing is complete. A page may hold fewer than `pageSize` jobs, even none, while
 * a cursor is returned (an adapter bounds the work per call).
 */
export interface JobPage<J extends JobSummary = JobInfo> {
  jobs: J[];
  cursor?: string;
}

/** Failed jobs of one error name (qless's failure kinds), as `failures` returns them. */
export interface FailureGroup {
  /** The lane (its full name on the backend at adapter level; its config name from the client). */
  lane: string;
  /** The error name shared by the group's jobs, e.g. "TypeError", "StalledError". */
  group: string;
  /** Failed jobs in the group now. */
  count: number;
  /** The group's most recent failure. */
  sample: { jobId: string; task: string; message: string; stack?: string; failedAt: number };
}

/** Per id, what `setPriority` and `promote` did. */
export type ChangeResult =
  | "ok" // changed (or, for promote, a waiting job that was already due)
  | "not_found"
  | "wrong_state"; // setPriority: not waiting or delayed; promote: not delayed or waiting

/** Per id, what `move` did. */
export type MoveResult =
  | "moved" // in the target lane now, gone from the source
  | "not_found"
  | "finished" // succeeded, canceled or expired: not moved
  | "duplicate" // the target lane already holds a different job with this id: not moved
  | "blocked"; // waiting for its dependencies (capability `flows`): not moved

/** A job named by lane (full name) and id, for `watch`. */
export interface JobRef {
  lane: string;
  jobId: string;
}

/**
 * What `watch` reports: a watched job reached a finished state, or left the lane (moved,
 * deleted). Read the job to learn its outcome: the event may be lost (delivery is at
 * most once), and the read is what a waiter trusts.
 */
export interface JobFinishedEvent {
  lane: string;
  jobId: string;
  state: FinishedState | "moved" | "deleted";
}

/** A running worker as it registers itself (capability `workers`). */
export interface WorkerRegistration {
  /** Unique per worker (a random id chosen at creation). */
  id: string;
  host: string;
  pid: number;
  /** The lanes it serves, full names. */
  lanes: string[];
  concurrency: number;
  /** Jobs whose lease it holds now (running and prefetched). */
  held: number;
  /** Jobs whose handler runs now. */
  running: number;
  /** Up to 100 of the jobs it holds (`held` is the true count). */
  jobs: JobRef[];
  /** Epoch ms the worker started. */
  startedAt: number;
  /** The tasklane version it runs. */
  version: string;
}

/** A registered worker, as `workers` lists it. */
export interface WorkerInfo extends WorkerRegistration {
  /** Epoch ms (the backend's clock) of its last registration. */
  lastHeartbeatAt: number;
  /** Epoch ms (the backend's clock) when the entry lapses unless renewed. */
  expiresAt: number;
}

export type CancelResult = "canceled" | "not_found" | "finished";

/**
 * A job's lifecycle as an adapter with capability `lifecycleEvents` reports it to every
 * subscriber, in any process: `published` (stored; not for a duplicate), `started` (handed
 * to a worker), `succeeded`, `retrying` (an attempt failed and the job is due again),
 * `failed` (dead letter set), `stalled` (its lease expired and the adapter took it back;
 * `failed` follows when that was one stall too many), `released` (its worker handed it
 * back unrun, e.g. at shutdown: waiting again), `retried` (`retryFailed` took it out of
 * the dead letter set: waiting again), `deleted` (`delete` removed it). With the operator
 * capabilities also: `expired` (capability `expiry`), `moved` (capability `move`; named by
 * the target lane, the job's new home) and `progress` (capability `reports`: a report
 * stored new progress or log lines; read the job for them). Cancellations are `canceled`
 * events. Every event but `deleted` and `progress` matches an entry of the job's history.
 */
export const LIFECYCLE_EVENT_TYPES = [
  "published",
  "started",
  "succeeded",
  "retrying",
  "failed",
  "stalled",
  "released",
  "retried",
  "deleted",
  "expired",
  "moved",
  "progress",
] as const;
export type LifecycleEventType = (typeof LIFECYCLE_EVENT_TYPES)[number];

/**
 * Cross-process events an adapter can carry (capability `subscribe`): `canceled` (every
 * cancel of an active job; with `lifecycleEvents`, every cancel) and `put` stop a running
 * job's handler; lifecycle events (capability `lifecycleEvents`) only report. Delivery is
 * at most once (pub/sub): a worker also learns of a cancel from its next heartbeat.
 */
export type AdapterEvent =
  | { type: "canceled"; lane: string; jobId: string }
  | {
      type: "put";
      lane: string;
      jobId: string;
      /** Set when the job was moved out of `lane` into this lane (full name): its holder aborts. */
      toLane?: string;
    }
  | { type: LifecycleEventType; lane: string; jobId: string };

/** Whether an event only reports (a lifecycle event) rather than stopping a handler. */
export function isLifecycleEvent(
  event: AdapterEvent,
): event is Extract<AdapterEvent, { type: LifecycleEventType }> {
  return event.type !== "canceled" && event.type !== "put";
}

export interface SubscribeOptions {
  /**
   * Also deliver lifecycle events (capability `lifecycleEvents`) and cancels of jobs
   * nobody holds. A worker, which needs only the events that stop its handlers, passes
   * false so an adapter need not hand it the rest. Default true.
   */
  lifecycle?: boolean;
}

/** Retention for finished jobs. Unset limits mean "no limit of that kind". */
export interface RetentionPolicy {
  succeeded?: { maxAgeMs?: number; maxCount?: number };
  failed?: { maxAgeMs?: number; maxCount?: number };
  canceled?: { maxAgeMs?: number; maxCount?: number };
  /** Capability `expiry`. */
  expired?: { maxAgeMs?: number; maxCount?: number };
}

/** A lane's rate limit: at most `max` starts in any window of `durationMs`. */
export interface RateLimit {
  /** Integer >= 1. */
  max: number;
  /** Integer >= 1, ms. */
  durationMs: number;
}

/** Options core passes when opening a lane. */
export interface LaneStoreOptions {
  /** Max jobs active across all workers (capability `maxConcurrency`). */
  maxConcurrency?: number;
  /**
   * At most `max` jobs handed out by `reserve` in any window of `durationMs`, across all
   * workers (capability `rateLimit`; docs/adapter-contract.md, "rateLimit").
   */
  rateLimit?: RateLimit;
  /** Lease expiries tolerated before the job goes dead with reason "stalled". */
  maxStalls: number;
  retention?: RetentionPolicy;
  /** Max history entries kept per job. */
  historyLimit: number;
  /** Max log lines kept per job (capability `reports`); older ones are dropped and counted. Default 100. */
  logLimit?: number;
  /**
   * Fair groups (capability `groups`): reserve takes the lane's jobs one group at a time,
   * round-robin (by `NewJob.group`; jobs without one are a group of their own), each
   * group's jobs in the lane's order; with `concurrency`, at most that many jobs of one
   * group are active at once, across every worker; with `rateLimit` (capability
   * `groupRateLimit`), at most `max` jobs of one group handed out in any window of
   * `durationMs`, each group its own window, across every worker. Absent: the lane
   * ignores groups.
   */
  groups?: { concurrency?: number; rateLimit?: RateLimit };
}

/**
 * What an adapter can do. Core checks requests against it and throws UnsupportedError
 * naming the adapter and the feature; the conformance suite skips only through it.
 */
export interface Capabilities {
  /** Max items in one put/reserve/ack/nack/extend call (core chunks larger batches). */
  maxBatch: number;
  /** Longest delay (runAt − now) the backend can hold. */
  maxDelayMs: number;
  /** Longest lease. */
  maxLeaseMs: number;
  /** Longest long poll in one reserve call. */
  maxWaitMs: number;
  /** Smallest time step the backend honours (1 for ms, 1000 for SQS). */
  timeResolutionMs: number;
  /** Counts and `ReserveResult.ready` are exact. */
  exactCounts: boolean;
  /**
   * Reserve takes due jobs in exactly the contract's order: higher priority first, then
   * earlier due time, then put order (docs/adapter-contract.md says what a job's due time
   * is after a retry, a release or a lease that ran out). False where the backend cannot
   * (SQS standard queues): order is then only approximate, and with `priorities` only the
   * extremes are promised (a job of priority 1000 before one of 0 before one of −1000).
   */
  ordered: boolean;
  /** Job-level priority inside one lane. */
  priorities: boolean;
  /** A second put with the same id is refused as "duplicate". */
  dedup: boolean;
  /** Fencing: a stale lock's ack/extend returns "lost" (SQS: a stale receipt handle). */
  fencing: boolean;
  get: boolean;
  list: boolean;
  count: boolean;
  cancel: boolean;
  /** Cancel reaches a job that is already active (and its worker learns it). */
  cancelActive: boolean;
  retryFailed: boolean;
  delete: boolean;
  pause: boolean;
  subscribe: boolean;
  /** `subscribe` also carries lifecycle events (see LifecycleEventType). */
  lifecycleEvents: boolean;
  stats: boolean;
  history: boolean;
  retention: boolean;
  maxConcurrency: boolean;

  // Operator features (issue 24). Optional: an adapter that does not declare one lacks it.

  /** `ack` stores `AckItem.result`; `get` and `listPage` return it. */
  results?: boolean;
  /** `watch`: finished events of watched jobs, from any process (what `waitFor` needs, with `get`). */
  waitFor?: boolean;
  /** `report`, and reports riding on ack, nack and release, stored; `get` returns progress and logs. */
  reports?: boolean;
  /** `NewJob.tags` stored and searchable (`tag` in filters; needs `search` to search). */
  tags?: boolean;
  /** `listPage` and `count` with every JobFilter condition; `changedAt` kept. */
  search?: boolean;
  /** `failures()`: failed jobs grouped by error name. */
  failureGroups?: boolean;
  /** `registerWorker`, `deregisterWorker`, `workers`. */
  workers?: boolean;
  /** `setPriority`. */
  changePriority?: boolean;
  /** `promote`. */
  promote?: boolean;
  /** `move`: to another lane of the same adapter, also while held (its holder gets a `put` event). */
  move?: boolean;
  /** `NewJob.expiresAt` honoured: the terminal state `expired`. */
  expiry?: boolean;
  /**
   * Recurring schedules stored in the lane (`putSchedule`, `getSchedule`, `listSchedules`,
   * `removeSchedule`, `dueSchedules`, `nextScheduleAt`, `fireSchedule`): fireSchedule's
   * compare-and-set and its put are one atomic step (docs/adapter-contract.md, "schedules").
   */
  schedules?: boolean;
  /** `ReleaseItem.runAt` honoured: a job handed back uncounted waits until then (`ctx.retryAfter`). */
  retryAfter?: boolean;
  /** `LaneStoreOptions.groups` and `NewJob.group`: fair groups, round-robin, per-group concurrency. */
  groups?: boolean;

  // Poison isolation (issue 19). Optional: an adapter that does not declare one lacks it.

  /**
   * `ReserveOptions.startNow` honoured: a prefetched delivery whose lease runs out costs
   * no attempt and is no stall (docs/adapter-contract.md, "Prefetched and suspect jobs").
   */
  startNow?: boolean;
  /** `ReservedJob.suspect` set on every delivery of a job whose lease ran out before. */
  suspects?: boolean;

  // Time and order (issue 22). Optional: an adapter that does not declare one lacks it.

  /**
   * `LaneStoreOptions.rateLimit` enforced atomically by `reserve` across all processes;
   * a reserve that finds the window full answers `ready: 0` and, as `nextDueAt`, when
   * the next start is allowed.
   */
  rateLimit?: boolean;
  /**
   * `LaneStoreOptions.groups.rateLimit`: each group's own window, enforced atomically by
   * `reserve` as `rateLimit` is for the lane; a group whose window is full is passed over
   * and its jobs are not counted in `ready`; with nothing else to take, `nextDueAt` says
   * when the first such window lets a start happen.
   */
  groupRateLimit?: boolean;
  /** `NewJob.debounce` honoured by `put`, atomically (see JobDebounce). */
  debounce?: boolean;
  /**
   * `NewJob.group` handed to the backend as its own message group, served by the
   * backend's rules rather than the round-robin and per-group concurrency of `groups`:
   * SQS's MessageGroupId (FIFO queues: each group in order, no second receive of a group
   * while one of its messages is in flight; standard queues: SQS fair queues, which keep a
   * noisy group from delaying the others). A lane needs `groups` without `concurrency`.
   */
  messageGroups?: boolean;

  // Dependencies (issue 22). Optional: an adapter that does not declare it lacks it.

  /**
   * `Adapter.putFlow` and `NewJob.dependsOn`: the state `blocked`, dependencies across
   * lanes, each end counted once, `JobInfo.dependencies` (docs/adapter-contract.md, "flows").
   */
  flows?: boolean;
}

/** The operator capabilities (issue 24), each one optional in Capabilities. */
export const OPERATOR_CAPABILITIES = [
  "results",
  "waitFor",
  "reports",
  "tags",
  "search",
  "failureGroups",
  "workers",
  "changePriority",
  "promote",
  "move",
  "expiry",
  "schedules",
  "retryAfter",
  "groups",
] as const satisfies ReadonlyArray<keyof Capabilities>;
export type OperatorCapability = (typeof OPERATOR_CAPABILITIES)[number];

/** Every operator capability false: for adapters to spread over fullCapabilities() until they have them. */
export const NO_OPERATOR_CAPABILITIES: Readonly<Record<OperatorCapability, false>> = Object.freeze(
  Object.fromEntries(OPERATOR_CAPABILITIES.map((c) => [c, false])) as Record<
    OperatorCapability,
    false
  >,
);

/** The limits every adapter declares; the rest of Capabilities says what it can do. */
export type CapabilityLimits = Pick<
  Capabilities,
  "maxBatch" | "maxDelayMs" | "maxLeaseMs" | "maxWaitMs" | "timeResolutionMs"
>;

/** Capabilities of an adapter that does everything the contract describes, exactly. */
export function fullCapabilities(limits: CapabilityLimits): Readonly<Capabilities> {
  return Object.freeze({
    ...limits,
    exactCounts: true,
    ordered: true,
    priorities: true,
    dedup: true,
    fencing: true,
    get: true,
    list: true,
    count: true,
    cancel: true,
    cancelActive: true,
    retryFailed: true,
    delete: true,
    pause: true,
    subscribe: true,
    lifecycleEvents: true,
    stats: true,
    history: true,
    retention: true,
    maxConcurrency: true,
    results: true,
    waitFor: true,
    reports: true,
    tags: true,
    search: true,
    failureGroups: true,
    workers: true,
    changePriority: true,
    promote: true,
    move: true,
    expiry: true,
    schedules: true,
    retryAfter: true,
    groups: true,
    startNow: true,
    suspects: true,
    rateLimit: true,
    groupRateLimit: true,
    debounce: true,
    flows: true,
  });
}

/** One lane on one backend. */
export interface LaneStore {
  readonly name: string;
  put(jobs: NewJob[]): Promise<PutResult[]>;
  reserve(options: ReserveOptions): Promise<ReserveResult>;
  /** Each item is a lock, with the job's result and last report where the adapter stores them. */
  ack(items: AckItem[]): Promise<LockStatus[]>;
  nack(items: NackItem[]): Promise<LockStatus[]>;
  /** Hand jobs back, due now, without counting the delivery as an attempt. */
  release(items: ReleaseItem[]): Promise<LockStatus[]>;
  extend(locks: Lock[], leaseMs: number): Promise<LockStatus[]>;
  /** Cheap: how many jobs are due now (approximate allowed). */
  probe(): Promise<number>;
  counts(): Promise<LaneCounts>;

  // Optional, by capability. Core throws UnsupportedError when absent.
  get?(id: string): Promise<JobInfo | undefined>;
  list?(options: ListOptions): AsyncIterable<JobInfo>;
  cancel?(ids: string[]): Promise<CancelResult[]>;
  /** Move failed jobs back to waiting (all of them when ids is absent); returns how many. */
  retryFailed?(ids?: string[]): Promise<number>;
  /** Remove jobs in any non-active state; returns how many were removed. */
  delete?(ids: string[]): Promise<number>;
  pause?(): Promise<void>;
  resume?(): Promise<void>;
  isPaused?(): Promise<boolean>;
  /** Daily wait/run stats, `day` as "YYYY-MM-DD" (UTC). */
  stats?(day: string): Promise<DayStats | undefined>;

  // Operator features, by capability (docs/adapter-contract.md has the rules).

  /** Store running jobs' progress and log lines (capability `reports`). Fenced like `extend`. */
  report?(items: ReportItem[]): Promise<LockStatus[]>;
  /** One page of a search (capability `search`), from `cursor` (absent: the first page). */
  listPage?(filter: ListFilter, cursor?: string): Promise<JobPage<JobSummary>>;
  /** How many jobs match (capability `search`): exact where `exactCounts`. */
  count?(filter: JobFilter): Promise<number>;
  /** Failed jobs grouped by error name, largest group first (capability `failureGroups`). */
  failures?(): Promise<FailureGroup[]>;
  /** Change waiting and delayed jobs' priority (capability `changePriority`). */
  setPriority?(ids: string[], priority: number): Promise<ChangeResult[]>;
  /** Make delayed jobs due now (capability `promote`). */
  promote?(ids: string[]): Promise<ChangeResult[]>;
  /**
   * Move jobs (waiting, delayed, active or failed) to `to`, another lane of the same
   * adapter, keeping their ids (capability `move`).
   */
  move?(ids: string[], to: LaneStore): Promise<MoveResult[]>;

  // Recurring schedules (capability `schedules`; docs/adapter-contract.md, "schedules").
  // The adapter stores opaque records ordered by `nextAt`; core owns every rule.

  /**
   * Write a schedule. `expectRevision` absent: unconditionally; 0: only if no schedule has
   * the id; n: only if its revision is still n. A write bumps the revision.
   */
  putSchedule?(record: ScheduleWrite, expectRevision?: number): Promise<ScheduleWriteResult>;
  getSchedule?(id: string): Promise<ScheduleRecord | undefined>;
  /** One page of the lane's schedules, in no promised order, from `cursor`. */
  listSchedules?(cursor?: string): Promise<SchedulePage>;
  /** Remove a schedule; false when there was none. Jobs it already put stay. */
  removeSchedule?(id: string): Promise<boolean>;
  /** Up to `limit` schedules with `nextAt <= now`, earliest first. */
  dueSchedules?(now: number, limit: number): Promise<ScheduleRecord[]>;
  /** The earliest `nextAt` of the lane's schedules; undefined when none has one. */
  nextScheduleAt?(): Promise<number | undefined>;
  /**
   * In one atomic step: if the schedule's revision is still `expectRevision`, write
   * `record` (bumping the revision) and put `jobs` (ids de-duplicated as by `put`);
   * otherwise change nothing and answer "stale".
   */
  fireSchedule?(
    record: ScheduleWrite,
    expectRevision: number,
    jobs: NewJob[],
  ): Promise<ScheduleFireResult>;
}

/** A schedule as core writes it: `data` is core's encoding, opaque to the adapter. */
export interface ScheduleWrite {
  /** 1-128 characters. */
  id: string;
  data: string;
  /** Epoch ms of the next slot; null when none is pending (paused, ended). */
  nextAt: number | null;
}

/** A stored schedule: what was written, and its revision (1 after the first write). */
export interface ScheduleRecord extends ScheduleWrite {
  revision: number;
}

export type ScheduleWriteResult = { status: "ok"; revision: number } | { status: "stale" };

export type ScheduleFireResult =
  | { status: "ok"; revision: number; results: PutResult[] }
  | { status: "stale" };

export interface SchedulePage {
  records: ScheduleRecord[];
  /** Absent on the last page. */
  cursor?: string;
}

/** The LaneStore methods of the operator capabilities, for `Required<Omit<LaneStore, …>>`. */
export type OperatorLaneMethod =
  | "report"
  | "listPage"
  | "count"
  | "failures"
  | "setPriority"
  | "promote"
  | "move"
  | "putSchedule"
  | "getSchedule"
  | "listSchedules"
  | "removeSchedule"
  | "dueSchedules"
  | "nextScheduleAt"
  | "fireSchedule";

export interface Adapter {
  /** Short name used in errors ("memory", "redis", "sqs"). */
  readonly name: string;
  readonly capabilities: Capabilities;
  /** Open (creating if needed) a lane. Calling twice with one name returns one lane. */
  lane(name: string, options: LaneStoreOptions): Promise<LaneStore>;
  /** Cross-process events (capability `subscribe`). Returns an unsubscribe function. */
  subscribe?(
    listener: (event: AdapterEvent) => void,
    options?: SubscribeOptions,
  ): Promise<() => Promise<void>>;
  /**
   * Report every finished event of these jobs to `listener` (capability `waitFor`).
   * Resolves once watching: a job that finishes after that is reported (at most once), so
   * a waiter watches first and reads the job second. Returns the function that stops.
   */
  watch?(jobs: JobRef[], listener: (event: JobFinishedEvent) => void): Promise<() => Promise<void>>;
  /**
   * Register or renew a running worker for `ttlMs` (capability `workers`): the entry
   * lapses unless renewed within that time.
   */
  registerWorker?(worker: WorkerRegistration, ttlMs: number): Promise<void>;
  /** Remove a worker's entry at once (a stopping worker). */
  deregisterWorker?(id: string): Promise<void>;
  /** The registered workers whose entry has not lapsed, in order of `startedAt`. */
  workers?(): Promise<WorkerInfo[]>;
  /**
   * Put jobs into lanes of this adapter, some waiting for others (capability `flows`;
   * docs/adapter-contract.md, "flows"): all of them or, answering "duplicate" or
   * "missing", none. A job with `dependsOn` is stored blocked; each dependency is an
   * earlier item of the call or a job stored in its lane, and learns of the job waiting
   * for it, so that its end (whenever it comes, from any lane) is counted once in that
   * job. A dependency that has already ended counts at once. Ids are checked for
   * duplicates as by `put` (`freshId` included); `debounce` is not honoured here.
   */
  putFlow?(items: FlowItem[]): Promise<FlowPutResult>;
  /** Idempotent. Later calls on the adapter or its lanes throw ClosedError. */
  close(): Promise<void>;
}

/**
 * Check the options core (or a third-party caller) passes to `Adapter.lane`; throws
 * ConfigError naming the field. Adapters call it so bad options fail the same way everywhere.
 */
export function validateLaneStoreOptions(options: LaneStoreOptions): void {
  if (typeof options !== "object" || options === null) {
    throw new ConfigError("options", options, "must be an object");
  }
  if (!Number.isInteger(options.maxStalls) || options.maxStalls < 0) {
    throw new ConfigError("maxStalls", options.maxStalls, "must be an integer >= 0");
  }
  if (!Number.isInteger(options.historyLimit) || options.historyLimit < 0) {
    throw new ConfigError("historyLimit", options.historyLimit, "must be an integer >= 0");
  }
  const logLimit = options.logLimit;
  if (logLimit !== undefined && (!Number.isInteger(logLimit) || logLimit < 0)) {
    throw new ConfigError("logLimit", logLimit, "must be an integer >= 0");
  }
  const mc = options.maxConcurrency;
  if (mc !== undefined && (!Number.isInteger(mc) || mc < 1)) {
    throw new ConfigError("maxConcurrency", mc, "must be a positive integer");
  }
  const groups = options.groups;
  if (groups !== undefined) {
    if (typeof groups !== "object" || groups === null) {
      throw new ConfigError("groups", groups, "must be an object");
    }
    const gc = groups.concurrency;
    if (gc !== undefined && (!Number.isInteger(gc) || gc < 1)) {
      throw new ConfigError("groups.concurrency", gc, "must be a positive integer");
    }
    checkRateLimit("groups.rateLimit", groups.rateLimit);
  }
  checkRateLimit("rateLimit", options.rateLimit);
  const retention = options.retention;
  if (retention === undefined) return;
  for (const state of ["succeeded", "failed", "canceled", "expired"] as const) {
    const p = retention[state];
    if (p === undefined) continue;
    if (p.maxAgeMs !== undefined && !(p.maxAgeMs >= 0)) {
      throw new ConfigError(`retention.${state}.maxAgeMs`, p.maxAgeMs, "must be a number >= 0");
    }
    if (p.maxCount !== undefined && (!Number.isInteger(p.maxCount) || p.maxCount < 0)) {
      throw new ConfigError(`retention.${state}.maxCount`, p.maxCount, "must be an integer >= 0");
    }
  }
}

/** A rate limit's fields, named from `field` ("rateLimit", "groups.rateLimit"). */
function checkRateLimit(field: string, rl: RateLimit | undefined): void {
  if (rl === undefined) return;
  if (typeof rl !== "object" || rl === null) {
    throw new ConfigError(field, rl, "must be an object { max, durationMs }");
  }
  if (!Number.isInteger(rl.max) || rl.max < 1) {
    throw new ConfigError(`${field}.max`, rl.max, "must be a positive integer");
  }
  if (!Number.isInteger(rl.durationMs) || rl.durationMs < 1) {
    throw new ConfigError(`${field}.durationMs`, rl.durationMs, "must be a positive integer");
  }
}
