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
 *   put ──► waiting ──reserve──► active ──ack──► succeeded ──retention──► gone
 *    │         ▲                   │
 *    └runAt──► delayed ──due───────┤◄── nack{runAt}  (core computed the backoff)
 *                                  ├─── nack{dead}   ──► failed (dead letter)
 *                                  ├─── lease expired ──► waiting, attempt counted on the
 *                                  │      next reserve; stalls > maxStalls ──► failed("stalled")
 *   any pending state ──cancel──► canceled        failed ──retryFailed──► waiting
 *
 * Pending = waiting | delayed | active. Delivery is at least once.
 *
 * Fencing: each reservation gets a fresh `token`. `ack`, `nack` and `extend` with a token
 * that is no longer the job's current one return "lost" and change nothing, so a worker
 * whose lease expired can never complete a job that another worker now owns.
 */

import { ConfigError } from "./errors.ts";
import type { DayStats } from "./stats.ts";

/** Where a job is in its life. */
export type JobState = "waiting" | "delayed" | "active" | "succeeded" | "failed" | "canceled";

/** States a job can be canceled from. */
export const PENDING_STATES: ReadonlyArray<JobState> = ["waiting", "delayed", "active"];

/** Outcome of a lease-bound call, per lock. Races are values, never exceptions. */
export type LockStatus = "ok" | "lost" | "canceled";

/** Why a job ended in the dead letter set. */
export type FailReason =
  | "error" // the handler threw and no attempts remain
  | "unrecoverable" // the handler threw UnrecoverableError
  | "timeout" // the last attempt ran past timeLimitMs
  | "stalled" // the lease expired more than maxStalls times
  | "malformed" // the stored job or payload could not be decoded
  | "unknown_task" // no worker knows the job's task
  | "invalid_payload"; // the payload failed its schema when the worker decoded it

/** A serialisable error, as stored with a failed job. */
export interface JobError {
  name: string;
  message: string;
  stack?: string;
  reason: FailReason;
}

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
}

export interface PutResult {
  id: string;
  status: "created" | "duplicate";
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
}

export interface ReserveResult {
  jobs: ReservedJob[];
  /**
   * Jobs still due in this lane after this reserve, when the backend knows it cheaply
   * (exact or approximate per `capabilities.exactCounts`). Selectors use it instead of
   * probing. Undefined when unknown.
   */
  ready?: number;
}

export type NackItem =
  | { lock: Lock; runAt: number; error: JobError }
  | { lock: Lock; dead: true; error: JobError };

/** A nack with no delay, used to hand a job back untouched (shutdown, time budget). */
export interface ReleaseItem {
  lock: Lock;
  /** When true the delivery does not count as an attempt. */
  uncounted: true;
}

export interface LaneCounts {
  waiting: number;
  delayed: number;
  active: number;
  failed: number;
  succeeded: number;
  canceled: number;
}

/** A history entry kept per job (bounded). */
export interface JobEvent {
  at: number;
  event:
    | "published"
    | "reserved"
    | "succeeded"
    | "retrying"
    | "failed"
    | "stalled"
    | "canceled"
    | "released"
    | "retried";
  detail?: string;
}

/** What `get` and `list` return. */
export interface JobInfo {
  id: string;
  lane: string;
  task: string;
  payload: string;
  appData?: string;
  priority: number;
  state: JobState;
  /** Deliveries so far. */
  attempt: number;
  publishedAt: number;
  runAt: number;
  finishedAt?: number;
  error?: JobError;
  history: JobEvent[];
}

export interface ListOptions {
  state: JobState;
  /** How many jobs the adapter fetches per round trip. Default adapter-specific. */
  pageSize?: number;
}

export type CancelResult = "canceled" | "not_found" | "finished";

/**
 * A job's lifecycle as an adapter with capability `lifecycleEvents` reports it to every
 * subscriber, in any process: `published` (stored; not for a duplicate), `started` (handed
 * to a worker), `succeeded`, `retrying` (an attempt failed and the job is due again),
 * `failed` (dead letter set), `stalled` (its lease expired and the adapter took it back;
 * `failed` follows when that was one stall too many), `released` (its worker handed it
 * back unrun, e.g. at shutdown: waiting again), `retried` (`retryFailed` took it out of
 * the dead letter set: waiting again), `deleted` (`delete` removed it). Cancellations are
 * `canceled` events. Every event but `deleted` matches an entry of the job's history.
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
  | { type: "put"; lane: string; jobId: string }
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
}

/** Options core passes when opening a lane. */
export interface LaneStoreOptions {
  /** Max jobs active across all workers (capability `maxConcurrency`). */
  maxConcurrency?: number;
  /** Lease expiries tolerated before the job goes dead with reason "stalled". */
  maxStalls: number;
  retention?: RetentionPolicy;
  /** Max history entries kept per job. */
  historyLimit: number;
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
  /** Job-level priority inside one lane. */
  priorities: boolean;
  /**
   * Reserve hands out due jobs in the contract's exact order: higher priority first, then
   * earlier due time, then put order. False where the backend cannot (SQS standard
   * queues): order is then only approximate, and with `priorities` only the extremes are
   * promised (a job of priority 1000 before one of 0 before one of −1000).
   */
  strictOrder: boolean;
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
}

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
    priorities: true,
    strictOrder: true,
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
  });
}

/** One lane on one backend. */
export interface LaneStore {
  readonly name: string;
  put(jobs: NewJob[]): Promise<PutResult[]>;
  reserve(options: ReserveOptions): Promise<ReserveResult>;
  ack(locks: Lock[]): Promise<LockStatus[]>;
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
}

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
  const mc = options.maxConcurrency;
  if (mc !== undefined && (!Number.isInteger(mc) || mc < 1)) {
    throw new ConfigError("maxConcurrency", mc, "must be a positive integer");
  }
  const retention = options.retention;
  if (retention === undefined) return;
  for (const state of ["succeeded", "failed", "canceled"] as const) {
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
