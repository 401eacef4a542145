/**
 * One tasklane lane on SQS: one SQS queue per priority band (one band unless
 * `priorityLanes` is set), plus a dead-letter queue `<name>-dlq` created on demand.
 *
 * Leases are visibility timeouts; the lock token is the receipt handle. Fencing is local
 * and conservative: a lock's `expiresAt` is computed from the time *before* the receive or
 * extend request left, so SQS's own timer always ends later, and an ack/extend/nack whose
 * lease has passed by our clock is "lost" without touching SQS. A stale receipt handle
 * reported by SQS is "lost" too.
 *
 * Attempts: attempt = `base` (carried in the `tl` attribute) + ApproximateReceiveCount. On standard
 * queues every deliberate hand-back (nack with a delay, uncounted release, re-delay of a
 * job received before its runAt) sends a fresh copy of the message with `base` and the
 * stall count carried, and deletes the original; so inside one copy, every receive but the
 * current one was a lease that expired: stalls = stl + ApproximateReceiveCount − 1. That
 * keeps attempts and `maxStalls` exact. FIFO queues keep message order instead: they hand
 * back with ChangeMessageVisibility, so there a release and an early receive count as an
 * attempt and stalls are not told apart from retries (see README).
 *
 * Receives land in a small buffer that reserve takes from: a long poll that outlives its
 * reserve (aborted, or `waitMs` under one second) is not thrown away (SQS would hide
 * whatever it brought for a whole lease), and a busy lane is read ahead (`prefetch`).
 */
import { createHash, randomUUID } from "node:crypto";
import {
  GetQueueAttributesCommand,
  type Message,
  ReceiveMessageCommand,
  type SQSClient,
} from "@aws-sdk/client-sqs";
import {
  AdapterError,
  ClosedError,
  type JobError,
  type LaneCounts,
  type LaneStore,
  type Lock,
  type LockStatus,
  type NackItem,
  type NewJob,
  PayloadTooLargeError,
  type PutResult,
  type ReleaseItem,
  type ReservedJob,
  type ReserveOptions,
  type ReserveResult,
} from "@tasklane/core/adapter";
import {
  ATTR,
  type Attributes,
  type DecodedJob,
  decodeJob,
  type Escaper,
  encodeJob,
  type JobFields,
  type JobMeta,
  messageBytes,
  type OutgoingMessage,
  SQS_MAX_MESSAGE_BYTES,
} from "./codec.ts";
import {
  createUrlIO,
  describe,
  type EntryResult,
  LOST_CODES,
  type SendEntry,
  type UrlIO,
} from "./sqs-io.ts";

/** One SQS queue serving a priority range of a lane. Index 0 is drained first. */
export interface LaneBand {
  index: number;
  name: string;
  url: string;
  /** Jobs with priority >= this (and below the band above) go here. */
  minPriority: number;
}

export interface SqsLaneInit {
  name: string;
  client: SQSClient;
  fifo: boolean;
  bands: LaneBand[];
  dlqName: string;
  dlqUrl(create: boolean): Promise<string | undefined>;
  maxStalls: number;
  probeCacheMs: number;
  bufferHoldMs: number;
  entryRetries: number;
  prefetch: number;
  escaper: Escaper;
  onError: (error: Error) => void;
}

/** A message we hold a lease on (buffered or handed out). */
interface Held {
  band: BandState;
  handle: string;
  messageId: string;
  rawBody: string;
  rawAttributes: Attributes;
  job: DecodedJob;
  groupId?: string;
  /** Attempt number of this delivery. */
  attempt: number;
  /** Stalls so far, this delivery's predecessors included. */
  stalls: number;
  sentAt: number;
  receivedAt: number;
  expiresAt: number;
}

interface BandState extends LaneBand {
  io: UrlIO;
  /** When a receive last came back short (the band looked empty), epoch ms. */
  emptyAt?: number | undefined;
  probe?: { value: number; at: number; pending?: Promise<number> } | undefined;
  /** The long poll in flight on this band, if any. */
  poll?: { done: Promise<void>; controller: AbortController } | undefined;
  /** Messages asked for by read-ahead receives in flight. */
  prefetching: number;
  /** Why the last long poll failed, for the reserve waiting on it. */
  pollError?: Error | undefined;
  /** The last receive came back full (the band is busy). */
  lastFull?: boolean;
  /** Parallel receives the next busy reserve may make (see #receiveFan). */
  fan: number;
  /**
   * Times by which messages this lane sent with a delay are visible, those still to come,
   * ascending and distinct (rounded up to DUE_GRANULE_MS, so a lane that sends many keeps
   * few): see #noteDue.
   */
  due: number[];
  /** The latest of those times that has passed (0: none yet). */
  dueSeenAt: number;
  /** When the latest receive that answered was sent: it saw what was visible then. */
  readAt: number;
}

/** The step #noteDue rounds visibility times up to (bounds the list a band keeps). */
const DUE_GRANULE_MS = 100;
/**
 * A reserve this soon after the previous one answered means a fast-draining worker (see
 * prefetch). Measured from the answer, not the call: a slow receive or a long poll is
 * SQS's time, not the worker's.
 */
const FAST_RESERVE_GAP_MS = 100;
/** SQS DelaySeconds ceiling: 15 minutes. */
const MAX_DELAY_SECONDS = 900;
/** SQS VisibilityTimeout ceiling: 12 hours. */
const MAX_VISIBILITY_SECONDS = 43_200;
/** Most messages one ReceiveMessage returns (SQS's MaxNumberOfMessages ceiling). */
const RECEIVE_MAX = 10;
/**
 * A buffered message goes back to SQS (a fresh copy, then the original deleted) only with
 * at least this much of its lease left by our clock: past its lease SQS may have handed
 * the original out again, and the copy would be a second live message of the job.
 */
const HAND_BACK_MARGIN_MS = 500;
const DEDUP_ID_RE = /^[A-Za-z0-9!"#$%&'()*+,\-./:;<=>?@[\\\]^_`{|}~]{1,128}$/;
/** Room kept for the error attributes of a dead letter besides the stack. */
const ERROR_MESSAGE_MAX = 16_384;

const secondsFor = (ms: number) => Math.max(0, Math.ceil(ms / 1000));

function dedupIdFor(text: string): string {
  return DEDUP_ID_RE.test(text) ? text : createHash("sha256").update(text).digest("hex");
}

/** A copy's meta: what the job keeps across copies (priority, publishedAt, group). */
function copyMeta(h: Held): JobMeta {
  const meta: JobMeta = { v: 1, p: h.job.meta.p, pub: h.job.meta.pub };
  if (h.job.meta.g !== undefined) meta.g = h.job.meta.g;
  return meta;
}

function copyAttributes(attrs: Attributes): Attributes {
  const out: Attributes = {};
  for (const [name, a] of Object.entries(attrs)) {
    if (a.StringValue !== undefined)
      out[name] = { DataType: a.DataType ?? "String", StringValue: a.StringValue };
    else if (a.BinaryValue !== undefined)
      out[name] = { DataType: a.DataType ?? "Binary", BinaryValue: a.BinaryValue };
  }
  return out;
}

export class SqsLane implements LaneStore {
  readonly name: string;
  readonly fifo: boolean;
  /** The SQS queues behind this lane, highest band first. */
  readonly bands: ReadonlyArray<LaneBand>;
  readonly #init: SqsLaneInit;
  readonly #bands: BandState[];
  readonly #held = new Map<string, Held>();
  #buffer: Held[] = [];
  readonly #waiters = new Set<() => void>();
  #holdTimer: ReturnType<typeof setTimeout> | undefined;
  #dlqIO: Promise<UrlIO> | undefined;
  #closed = false;
  #sweepAt = 0;
  /** When the last reserve answered: the gap to the next call is the worker's turnaround. */
  #lastAnsweredAt = 0;
  readonly #background = new Set<Promise<unknown>>();

  constructor(init: SqsLaneInit) {
    this.#init = init;
    this.name = init.name;
    this.fifo = init.fifo;
    this.#bands = init.bands.map((b) => ({
      ...b,
      io: createUrlIO({ client: init.client, url: b.url, entryRetries: init.entryRetries }),
      prefetching: 0,
      fan: 1,
      due: [],
      dueSeenAt: 0,
      readAt: 0,
    }));
    this.bands = init.bands;
  }

  // ── put ─────────────────────────────────────────────────────────────────────────────

  async put(jobs: NewJob[]): Promise<PutResult[]> {
    this.#assertOpen();
    const now = Date.now();
    const seen = new Set<string>();
    const prepared: Array<{ band: BandState; entry: SendEntry } | undefined> = [];
    // Encode and size-check every job before anything is sent.
    for (const [i, job] of jobs.entries()) {
      if (this.fifo && seen.has(job.id)) {
        prepared.push(undefined);
        continue;
      }
      seen.add(job.id);
      const meta: JobMeta = { v: 1, p: job.priority, pub: job.publishedAt };
      if (job.group !== undefined) meta.g = job.group;
      const delayMs = job.runAt === undefined ? 0 : job.runAt - now;
      if (delayMs > 0 && job.runAt !== undefined) meta.run = job.runAt;
      const fields: JobFields = { id: job.id, task: job.task, payload: job.payload, meta };
      if (job.appData !== undefined) fields.appData = job.appData;
      if (job.traceContext !== undefined) fields.traceContext = job.traceContext;
      const msg = encodeJob(this.#init.escaper, fields);
      if (msg.bytes > SQS_MAX_MESSAGE_BYTES) {
        throw new PayloadTooLargeError(
          `SQS message for job "${job.id}" (item ${i}, payload + attributes)`,
          msg.bytes,
          SQS_MAX_MESSAGE_BYTES,
        );
      }
      const entry: SendEntry = { ...msg };
      if (this.fifo) {
        entry.groupId = dedupIdFor(job.group ?? job.groupId ?? job.id);
        entry.dedupId = dedupIdFor(job.id);
      } else {
        // A standard queue's message group is its fair-queue tenant (SQS fair queues).
        if (job.group !== undefined) entry.groupId = dedupIdFor(job.group);
        if (delayMs > 0) entry.delaySeconds = Math.min(MAX_DELAY_SECONDS, secondsFor(delayMs));
      }
      prepared.push({ band: this.#bandFor(job.priority), entry });
    }
    const results = await Promise.allSettled(
      prepared.map((p) => (p ? p.band.io.send(p.entry) : Promise.resolve("duplicate" as const))),
    );
    const answeredAt = Date.now();
    const failures: string[] = [];
    const out: PutResult[] = jobs.map((job, i) => {
      const r = results[i] as PromiseSettledResult<EntryResult | "duplicate">;
      if (r.status === "rejected") failures.push(`${job.id}: ${describe(r.reason)}`);
      else if (r.value !== "ok" && r.value !== "duplicate") {
        failures.push(`${job.id}: ${r.value.code} ${r.value.message}`);
      } else if (r.value === "ok") {
        const { band, entry } = prepared[i] as { band: BandState; entry: SendEntry };
        this.#noteDue(band, entry.delaySeconds ?? 0, answeredAt);
        band.emptyAt = undefined;
        if (band.probe && !band.probe.pending) band.probe.value++;
      }
      return {
        id: job.id,
        status: r.status === "fulfilled" && r.value === "duplicate" ? "duplicate" : "created",
      };
    });
    if (failures.length > 0) {
      throw new SqsPutError(failures, jobs.length);
    }
    return out;
  }

  #bandFor(priority: number): BandState {
    for (const b of this.#bands) if (priority >= b.minPriority) return b;
    return this.#bands[this.#bands.length - 1] as BandState;
  }

  // ── reserve ─────────────────────────────────────────────────────────────────────────

  async reserve(options: ReserveOptions): Promise<ReserveResult> {
    this.#assertOpen();
    const { limit, leaseMs, waitMs, signal } = options;
    const seconds = Math.min(MAX_VISIBILITY_SECONDS, secondsFor(leaseMs));
    // Read ahead only for a worker that comes back quickly (its jobs finish fast): one with
    // slow jobs would leave prefetched messages holding leases in the buffer.
    const fast = Date.now() - this.#lastAnsweredAt < FAST_RESERVE_GAP_MS;
    this.#sweep();
    let jobs = this.#take(limit);
    if (jobs.length === 0 && !signal?.aborted) {
      // Busy path: short receives, higher bands first, skipping bands known to be empty.
      const single = this.#bands.length === 1;
      const skipped: BandState[] = [];
      for (const band of this.#bands) {
        if (jobs.length >= limit) break;
        // One band and allowed to wait: long poll below, unless the band is busy (its last
        // receive came back full): then short receives first, fanned out, as below. A long
        // poll is one receive of at most 10; on a busy band it would cap the worker at one
        // request in flight. Waiting long polls only once the band comes back short.
        if (waitMs > 0 && single && band.lastFull !== true) break;
        if (!single && this.#knownEmpty(band)) {
          skipped.push(band);
          continue;
        }
        const before = jobs.length;
        // A fast worker asking for fewer than 10 (few free slots) on a busy band gets a
        // full receive; the rest waits in the buffer for its next reserve (see prefetch).
        const need = limit - jobs.length;
        const surplus = fast && this.#init.prefetch > 0 && band.lastFull === true;
        await this.#receiveFan(band, surplus ? Math.max(need, RECEIVE_MAX) : need, seconds);
        jobs = jobs.concat(this.#take(limit - jobs.length));
        if (this.#closed) break;
        // Serving a lower band while higher ones look empty: watch those with a long poll
        // (one receive per 20 s each), so a new high job reaches the buffer at once instead
        // of waiting out probeCacheMs behind this band's work.
        if (jobs.length > before) {
          for (const higher of skipped) {
            if (!higher.poll) this.#startPoll(higher, RECEIVE_MAX, seconds, 20_000);
          }
        }
      }
      if (jobs.length === 0 && waitMs > 0 && !this.#closed) {
        jobs = await this.#longPoll(limit, seconds, waitMs, signal);
      }
    }
    // Its worker runs a suspect alone and reserves nothing until it has run: no read-ahead
    // to wait in the buffer meanwhile (a crash of the suspect would stall it).
    if (fast && !jobs.some((j) => j.suspect === true)) this.#maybePrefetch(limit, seconds);
    const result: ReserveResult = { jobs };
    const ready = this.#buffer.length + this.#busyGuess();
    if (ready > 0) result.ready = ready;
    else if (jobs.length < limit) {
      // The lane looks empty. A message this lane sent with a delay may not be visible yet
      // although its runAt has passed (see #noteDue), or may have become visible after the
      // receive that found nothing was sent: a worker that looked too early is told when to
      // look again (maybe now), or it would take this answer as the end of the wait.
      const at = this.#nextDue(Date.now());
      if (at !== undefined) {
        result.ready = 0;
        result.nextDueAt = at;
      }
    }
    this.#lastAnsweredAt = Date.now();
    return result;
  }

  /**
   * Messages a busy band probably still holds: a band whose last receive came back full
   * likely has at least another full receive. An approximate `ready` (exactCounts is
   * false) that keeps the worker on a busy lane instead of reading a batch shorter than
   * its limit as "empty" and long-polling (one receive in flight) for the next one.
   */
  #busyGuess(): number {
    let n = 0;
    // (A long poll that just came back full counts too, though its `poll` is cleared a few
    // microtasks after the reserve it woke has resumed.)
    for (const band of this.#bands) if (band.lastFull === true) n += RECEIVE_MAX;
    return n;
  }

  #knownEmpty(band: BandState): boolean {
    // A long poll in flight returns as soon as a message arrives: the band is empty.
    if (band.poll) return true;
    const now = Date.now();
    // A message this lane sent with a delay became visible after the band was last read:
    // that read (and a probe, whose count may lag or, on fauxqs, leave it out until a
    // receive) said nothing of it.
    if (this.#shownSinceRead(band, now)) return false;
    if (band.emptyAt !== undefined && now - band.emptyAt < this.#init.probeCacheMs) return true;
    return (
      band.probe !== undefined &&
      band.probe.value === 0 &&
      now - band.probe.at < this.#init.probeCacheMs
    );
  }

  /**
   * A message this lane sent to `band` with a delay of `seconds` (a delayed put, a retry,
   * a re-delay; on FIFO a visibility change) is visible by `answeredAt` (when SQS answered
   * the request) plus the delay. SQS counts the delay from when it gets the request, not
   * from when runAt − now was computed, and the delay is rounded up to whole seconds: so a
   * job is visible from between its runAt and runAt + 1 s + the request's latency. A
   * worker looks at runAt's second's end (it knows the retries it scheduled); on a loaded
   * machine the request may have taken longer than that, and the look finds nothing.
   * Kept so that the reserve can say when to look again (nextDueAt) and the band is not
   * skipped as known empty once the message is visible.
   */
  #noteDue(band: BandState, seconds: number, answeredAt: number) {
    if (seconds <= 0) return;
    const at = Math.ceil((answeredAt + seconds * 1000) / DUE_GRANULE_MS) * DUE_GRANULE_MS;
    // Drop the times that have passed first: a lane that only publishes (never reserves)
    // keeps at most one entry per DUE_GRANULE_MS of SQS's 15-minute delay window.
    this.#shownSinceRead(band, answeredAt);
    const due = band.due;
    // Mostly an append: retries with the same back-off are sent in the order they fall due.
    let i = due.length;
    while (i > 0 && (due[i - 1] as number) > at) i--;
    if (due[i - 1] !== at) due.splice(i, 0, at);
  }

  /** Whether a message noted by #noteDue became visible after the band's latest read. */
  #shownSinceRead(band: BandState, now: number): boolean {
    const due = band.due;
    let n = 0;
    while (n < due.length && (due[n] as number) <= now) n++;
    if (n > 0) {
      band.dueSeenAt = due[n - 1] as number;
      due.splice(0, n);
    }
    return band.dueSeenAt > band.readAt;
  }

  /**
   * When a worker whose reserve found the lane empty should look again: the earliest time
   * by which a message noted by #noteDue is visible that the band's latest read has not
   * seen. One still to come; or one that passed after that read was sent, reported as it
   * is (a time passed: look again now). SQS answers a receive with what is visible when it
   * gets the request, so a receive in flight while a retry became visible (its answer read
   * late: a loaded machine) said nothing of the retry, though the time kept for it has
   * passed by the time the reserve returns. A band watched by a long poll in flight is
   * left to that poll (it gets what becomes visible while it waits); reporting its passed
   * time would have the worker come back at once, again and again, to a band the reserve
   * skips while the poll waits.
   */
  #nextDue(now: number): number | undefined {
    let next: number | undefined;
    for (const band of this.#bands) {
      const missed = this.#shownSinceRead(band, now) && band.poll === undefined;
      const at = missed ? band.dueSeenAt : band.due[0];
      if (at !== undefined && (next === undefined || at < next)) next = at;
    }
    return next;
  }

  /** Long poll every band at once (joining polls already in flight) until a job comes. */
  async #longPoll(
    limit: number,
    seconds: number,
    waitMs: number,
    signal?: AbortSignal,
  ): Promise<ReservedJob[]> {
    const deadline = Date.now() + waitMs;
    let first = true;
    for (;;) {
      if (this.#closed || signal?.aborted) return [];
      const left = deadline - Date.now();
      if (left <= 0) return [];
      // A poll that ended early (another consumer took what woke it) is restarted, but
      // not for a sliver of time left: the idle cost stays one receive per band per wait.
      for (const band of this.#bands) {
        if (!band.poll && (first || left >= 100)) this.#startPoll(band, limit, seconds, left);
      }
      first = false;
      await new Promise<void>((resolve) => {
        const done = () => {
          clearTimeout(timer);
          signal?.removeEventListener("abort", done);
          this.#waiters.delete(done);
          resolve();
        };
        const timer = setTimeout(done, left);
        signal?.addEventListener("abort", done, { once: true });
        this.#waiters.add(done);
        // A poll that ends empty also wakes us, so we can start the next one.
        for (const band of this.#bands) void band.poll?.done.then(done);
      });
      const jobs = this.#take(limit);
      if (jobs.length > 0) return jobs;
      for (const band of this.#bands) {
        const error = band.pollError;
        if (error) {
          band.pollError = undefined;
          throw error;
        }
      }
    }
  }

  #startPoll(band: BandState, limit: number, seconds: number, waitMs: number) {
    const controller = new AbortController();
    const waitSeconds = Math.min(20, Math.max(1, secondsFor(waitMs)));
    const done = this.#receive(band, limit, waitSeconds, seconds, controller.signal)
      .catch((error: unknown) => {
        if (this.#closed) return;
        // A reserve waiting on this poll rethrows it (the worker backs off); with nobody
        // waiting it is reported.
        if (this.#waiters.size > 0) band.pollError = asError(error);
        else this.#init.onError(asError(error));
      })
      .then(() => {})
      .finally(() => {
        band.poll = undefined;
      });
    band.poll = { done, controller };
  }

  /** Read ahead on a busy band so the next reserve is served from memory. */
  #maybePrefetch(limit: number, seconds: number) {
    const { prefetch } = this.#init;
    if (prefetch === 0 || this.#closed || limit < RECEIVE_MAX) return;
    for (const band of this.#bands) {
      // Busy: the last receive came back full, and we have not read far enough ahead.
      if (band.emptyAt !== undefined || band.poll) continue;
      const ahead = this.#buffer.filter((h) => h.band === band).length + band.prefetching;
      if (ahead >= prefetch || band.lastFull !== true) continue;
      band.prefetching += RECEIVE_MAX;
      const p = this.#receive(band, RECEIVE_MAX, 0, seconds, undefined)
        .catch((error: unknown) => {
          if (!this.#closed) this.#init.onError(asError(error));
        })
        .finally(() => {
          band.prefetching -= RECEIVE_MAX;
        });
      this.#track(p);
      return;
    }
  }

  /** One ReceiveMessage; what it brings goes to the buffer (waking waiting reserves). */
  async #receive(
    band: BandState,
    max: number,
    waitSeconds: number,
    seconds: number,
    signal: AbortSignal | undefined,
  ): Promise<number> {
    const before = Date.now();
    let messages: Message[];
    try {
      const command = new ReceiveMessageCommand({
        QueueUrl: band.url,
        MaxNumberOfMessages: Math.max(1, Math.min(RECEIVE_MAX, max)),
        WaitTimeSeconds: waitSeconds,
        VisibilityTimeout: seconds,
        MessageSystemAttributeNames: this.fifo
          ? ["ApproximateReceiveCount", "SentTimestamp", "MessageGroupId"]
          : ["ApproximateReceiveCount", "SentTimestamp"],
        MessageAttributeNames: ["All"],
      });
      // No options object unless needed: the SDK caches resolved middleware (with
      // `cacheMiddleware: true`) only for sends without options.
      const out = await (signal
        ? this.#init.client.send(command, { abortSignal: signal })
        : this.#init.client.send(command));
      messages = out.Messages ?? [];
    } catch (error) {
      if (signal?.aborted) return 0;
      throw new AdapterError("sqs", `ReceiveMessage on ${band.name}: ${describe(error)}`, {
        cause: error,
      });
    }
    const now = Date.now();
    // Whatever was visible when the request left, this receive has seen (or another
    // consumer has taken it).
    if (before > band.readAt) band.readAt = before;
    band.lastFull = messages.length >= Math.min(RECEIVE_MAX, max);
    if (messages.length < Math.min(RECEIVE_MAX, max)) band.emptyAt = now;
    else band.emptyAt = undefined;
    const expiresAt = before + seconds * 1000;
    const fresh: Held[] = [];
    for (const m of messages) {
      const h = this.#decode(band, m, now, expiresAt);
      if (!h) continue;
      if (h.job.malformed === undefined) {
        if (!this.fifo && h.stalls > this.#init.maxStalls) {
          this.#later(
            this.#deadLetter(h, {
              name: "StalledError",
              message: `The lease on job ${h.job.id} expired ${h.stalls} times (maxStalls ${this.#init.maxStalls})`,
              reason: "stalled",
            }),
          );
          continue;
        }
        const run = h.job.meta.run;
        if (run !== undefined && run - now >= 1000) {
          this.#later(this.#redelay(h, run));
          continue;
        }
      }
      fresh.push(h);
    }
    if (fresh.length > 0) {
      if (this.#closed) {
        // Brought in by a poll that outlived close(): hand straight back.
        for (const h of fresh) this.#later(this.#handBack(h, h.attempt - 1));
      } else {
        this.#buffer.push(...fresh);
        for (const wake of [...this.#waiters]) wake();
        this.#armHoldTimer();
      }
    }
    return messages.length;
  }

  /**
   * Receive up to `need` messages from a band, in parallel requests of 10 when the band is
   * busy. The fan-out grows (1, 2, 4 … 10 requests) while every request comes back full
   * and drops to 1 as soon as one comes back short, so a draining lane wastes at most one
   * round of empty receives.
   */
  async #receiveFan(band: BandState, need: number, seconds: number): Promise<void> {
    const n = Math.max(1, Math.min(Math.ceil(need / RECEIVE_MAX), band.fan));
    const sizes = Array.from({ length: n }, (_, i) =>
      Math.min(RECEIVE_MAX, need - i * RECEIVE_MAX),
    );
    const got = await Promise.all(
      sizes.map((size) => this.#receive(band, size, 0, seconds, undefined)),
    );
    const full = got.every((count, i) => count >= (sizes[i] as number));
    band.fan = full ? Math.min(10, band.fan * 2) : 1;
    // One short answer among full ones does not make the band empty.
    if (full) band.emptyAt = undefined;
    band.lastFull = full;
  }

  #decode(band: BandState, m: Message, now: number, expiresAt: number): Held | undefined {
    if (!m.ReceiptHandle) return undefined;
    const count = Number(m.Attributes?.ApproximateReceiveCount ?? "1") || 1;
    const sentAt = Number(m.Attributes?.SentTimestamp ?? now) || now;
    const rawAttributes = (m.MessageAttributes ?? {}) as Attributes;
    const job = decodeJob(m.MessageId ?? m.ReceiptHandle, m.Body, rawAttributes, sentAt);
    const meta = job.meta;
    const h: Held = {
      band,
      handle: m.ReceiptHandle,
      messageId: m.MessageId ?? "",
      rawBody: m.Body ?? "",
      rawAttributes,
      job,
      attempt: (meta.base ?? 0) + count,
      stalls: (meta.stl ?? 0) + (this.fifo ? 0 : count - 1),
      sentAt,
      receivedAt: now,
      expiresAt,
    };
    const group = m.Attributes?.MessageGroupId;
    if (group !== undefined) h.groupId = group;
    return h;
  }

  /** Take up to `limit` buffered messages (higher band first) and hand them out. */
  #take(limit: number): ReservedJob[] {
    if (this.#buffer.length === 0) return [];
    const now = Date.now();
    // A message whose lease ran out while buffered is not ours any more.
    this.#buffer = this.#buffer.filter((h) => h.expiresAt > now);
    if (this.#bands.length > 1) this.#buffer.sort((a, b) => a.band.index - b.band.index);
    // At most one suspect per reserve: its worker runs it alone and reserves nothing
    // meanwhile, and handing others back would cost a copy and a delete each (a kill
    // between the two leaves two live messages). They wait here for the next reserve.
    const taken: Held[] = [];
    const kept: Held[] = [];
    let suspects = 0;
    for (const h of this.#buffer) {
      if (taken.length >= limit || (this.#suspect(h) && suspects++ > 0)) kept.push(h);
      else taken.push(h);
    }
    this.#buffer = kept;
    return taken.map((h) => {
      this.#held.set(h.handle, h);
      const job: ReservedJob = {
        id: h.job.id,
        task: h.job.task,
        payload: h.job.payload,
        priority: h.job.meta.p,
        attempt: h.attempt,
        publishedAt: h.job.meta.pub,
        readyAt: h.job.meta.run ?? h.sentAt,
        lock: { jobId: h.job.id, token: h.handle, expiresAt: h.expiresAt },
      };
      if (h.job.appData !== undefined) job.appData = h.job.appData;
      if (h.job.traceContext !== undefined) job.traceContext = h.job.traceContext;
      if (h.job.malformed !== undefined) job.malformed = h.job.malformed;
      if (this.#suspect(h)) job.suspect = true;
      return job;
    });
  }

  /**
   * When a buffered message nobody reserved goes back: after bufferHoldMs, and no later
   * than half its lease, so that the hand-back is done while the lease is still ours.
   */
  #holdDeadline(h: Held): number {
    return h.receivedAt + Math.min(this.#init.bufferHoldMs, (h.expiresAt - h.receivedAt) / 2);
  }

  /**
   * Standard queues know the stalls exactly; FIFO queues cannot tell a stall from a
   * retry, so there every delivery after the first is a suspect (the safe side).
   */
  #suspect(h: Held): boolean {
    return this.fifo ? h.attempt > 1 : h.stalls > 0;
  }

  /** Buffered messages nobody reserved in time go back to SQS. */
  #armHoldTimer() {
    if (this.#holdTimer || this.#buffer.length === 0) return;
    let first = Number.POSITIVE_INFINITY;
    for (const h of this.#buffer) first = Math.min(first, this.#holdDeadline(h));
    this.#holdTimer = setTimeout(
      () => {
        this.#holdTimer = undefined;
        const now = Date.now();
        const stale = this.#buffer.filter((h) => this.#holdDeadline(h) <= now);
        if (stale.length > 0) {
          this.#buffer = this.#buffer.filter((h) => this.#holdDeadline(h) > now);
          this.#handBackBuffered(stale);
        }
        this.#armHoldTimer();
      },
      Math.max(0, first - Date.now()),
    );
    this.#holdTimer.unref?.();
  }

  /**
   * Hand never-reserved messages back, uncounted, while their lease is ours (see
   * HAND_BACK_MARGIN_MS); one whose lease is (nearly) over is left to come back by itself.
   */
  #handBackBuffered(list: Held[]) {
    const now = Date.now();
    for (const h of list) {
      if (h.expiresAt - now > HAND_BACK_MARGIN_MS) this.#later(this.#handBack(h, h.attempt - 1));
    }
  }

  /** Forget held messages whose lease ended long ago (a caller that never settled them). */
  #sweep() {
    const now = Date.now();
    if (now < this.#sweepAt) return;
    this.#sweepAt = now + 60_000;
    for (const [handle, h] of this.#held) if (h.expiresAt + 60_000 < now) this.#held.delete(handle);
  }

  // ── settling ────────────────────────────────────────────────────────────────────────

  /**
   * The held message of a lock, if its lease is still ours by our clock. A lock naming
   * another job than the message its receipt handle points to is no lock of that job
   * (it would settle the other one).
   */
  #live(lock: Lock): Held | undefined {
    const h = this.#held.get(lock.token);
    if (!h || h.job.id !== lock.jobId) return undefined;
    if (Date.now() >= h.expiresAt) {
      this.#held.delete(lock.token);
      return undefined;
    }
    return h;
  }

  async ack(locks: Lock[]): Promise<LockStatus[]> {
    this.#assertOpen();
    const once = firstUses();
    return Promise.all(
      locks.map(async (lock): Promise<LockStatus> => {
        const h = once(lock) ? this.#live(lock) : undefined;
        if (!h) return "lost";
        const r = await h.band.io.delete(h.handle);
        this.#held.delete(lock.token);
        if (r === "ok") return "ok";
        if (!LOST_CODES.has(r.code))
          this.#init.onError(
            new AdapterError("sqs", `DeleteMessage for job ${h.job.id}: ${r.code} ${r.message}`),
          );
        return "lost";
      }),
    );
  }

  async extend(locks: Lock[], leaseMs: number): Promise<LockStatus[]> {
    this.#assertOpen();
    const seconds = Math.min(MAX_VISIBILITY_SECONDS, secondsFor(leaseMs));
    const before = Date.now();
    const once = firstUses();
    return Promise.all(
      locks.map(async (lock): Promise<LockStatus> => {
        const h = once(lock) ? this.#live(lock) : undefined;
        if (!h) return "lost";
        const r = await h.band.io.changeVisibility(h.handle, seconds);
        if (r === "ok") {
          h.expiresAt = before + seconds * 1000;
          return "ok";
        }
        this.#held.delete(lock.token);
        if (!LOST_CODES.has(r.code))
          this.#init.onError(
            new AdapterError(
              "sqs",
              `ChangeMessageVisibility for job ${h.job.id}: ${r.code} ${r.message}`,
            ),
          );
        return "lost";
      }),
    );
  }

  async nack(items: NackItem[]): Promise<LockStatus[]> {
    this.#assertOpen();
    return Promise.all(
      items.map(async (item): Promise<LockStatus> => {
        const h = this.#live(item.lock);
        if (!h) return "lost";
        this.#held.delete(item.lock.token);
        try {
          if ("dead" in item) return await this.#deadLetter(h, item.error);
          return await this.#handBack(h, h.attempt, item.runAt);
        } catch (error) {
          // Whether it took effect is unknown: the lease stays ours, so a retry of this
          // nack (core retries settling calls that throw) is carried out, not "lost".
          this.#held.set(item.lock.token, h);
          throw error;
        }
      }),
    );
  }

  async release(items: ReleaseItem[]): Promise<LockStatus[]> {
    this.#assertOpen();
    return Promise.all(
      items.map(async (item): Promise<LockStatus> => {
        const h = this.#live(item.lock);
        if (!h) return "lost";
        this.#held.delete(item.lock.token);
        try {
          return await this.#handBack(h, h.attempt - 1);
        } catch (error) {
          this.#held.set(item.lock.token, h); // as in nack: a retry may settle it
          throw error;
        }
      }),
    );
  }

  /**
   * Hand a message back to SQS, due at `runAt` (or now), with `attemptsDone` attempts
   * counted. Standard queues: a fresh copy (exact attempts and stalls), then the original
   * is deleted. FIFO queues and messages we cannot re-encode: a visibility change.
   */
  async #handBack(h: Held, attemptsDone: number, runAt?: number): Promise<LockStatus> {
    const now = Date.now();
    const delayMs = runAt === undefined ? 0 : runAt - now;
    if (this.fifo || h.job.malformed !== undefined) {
      const seconds = Math.min(MAX_VISIBILITY_SECONDS, secondsFor(delayMs));
      const r = await h.band.io.changeVisibility(h.handle, seconds);
      if (r === "ok") {
        this.#noteDue(h.band, seconds, Date.now());
        return "ok";
      }
      if (!LOST_CODES.has(r.code))
        this.#init.onError(
          new AdapterError(
            "sqs",
            `ChangeMessageVisibility for job ${h.job.id}: ${r.code} ${r.message}`,
          ),
        );
      return "lost";
    }
    const meta = copyMeta(h);
    if (delayMs > 0 && runAt !== undefined) meta.run = runAt;
    if (attemptsDone > 0) meta.base = attemptsDone;
    if (h.stalls > 0) meta.stl = h.stalls;
    const msg = this.#reencode(h, meta);
    const entry: SendEntry = { ...msg };
    if (delayMs > 0) entry.delaySeconds = Math.min(MAX_DELAY_SECONDS, secondsFor(delayMs));
    if (h.job.meta.g !== undefined) entry.groupId = dedupIdFor(h.job.meta.g);
    const sent = await h.band.io.send(entry);
    if (sent !== "ok") {
      throw new AdapterError(
        "sqs",
        `SendMessage (hand-back) for job ${h.job.id}: ${sent.code} ${sent.message}`,
      );
    }
    this.#noteDue(h.band, entry.delaySeconds ?? 0, Date.now());
    await this.#deleteOriginal(h);
    return "ok";
  }

  /** A job received before its runAt goes back until it is due. */
  async #redelay(h: Held, runAt: number): Promise<void> {
    await this.#handBack(h, h.attempt - 1, runAt);
  }

  #reencode(h: Held, meta: JobMeta, extra?: Attributes): OutgoingMessage {
    const fields: JobFields = { id: h.job.id, task: h.job.task, payload: h.job.payload, meta };
    if (h.job.appData !== undefined) fields.appData = h.job.appData;
    if (h.job.traceContext !== undefined) fields.traceContext = h.job.traceContext;
    return encodeJob(this.#init.escaper, fields, extra);
  }

  async #deleteOriginal(h: Held): Promise<void> {
    const r = await h.band.io.delete(h.handle);
    if (r !== "ok" && !LOST_CODES.has(r.code)) {
      this.#init.onError(
        new AdapterError(
          "sqs",
          `DeleteMessage for job ${h.job.id}: ${r.code} ${r.message} (it may run again)`,
        ),
      );
    }
  }

  #dlq(): Promise<UrlIO> {
    if (!this.#dlqIO) {
      const p = this.#init.dlqUrl(true).then((url) => {
        if (url === undefined)
          throw new AdapterError(
            "sqs",
            `dead-letter queue ${this.#init.dlqName} does not exist and createQueues is false`,
          );
        return createUrlIO({
          client: this.#init.client,
          url,
          entryRetries: this.#init.entryRetries,
        });
      });
      p.catch(() => {
        this.#dlqIO = undefined;
      });
      this.#dlqIO = p;
    }
    return this.#dlqIO;
  }

  /** Move a message to the dead-letter queue with its error, then delete the original. */
  async #deadLetter(h: Held, error: JobError): Promise<LockStatus> {
    const dlq = await this.#dlq();
    const msg = this.#deadMessage(h, error);
    const entry: SendEntry = { ...msg };
    if (this.fifo) {
      entry.groupId = h.groupId ?? dedupIdFor(h.job.id);
      entry.dedupId = dedupIdFor(`${h.job.id}:dead:${randomUUID()}`);
    } else if (h.job.meta.g !== undefined) entry.groupId = dedupIdFor(h.job.meta.g);
    const sent = await dlq.send(entry);
    if (sent !== "ok") {
      throw new AdapterError(
        "sqs",
        `SendMessage to ${this.#init.dlqName} for job ${h.job.id}: ${sent.code} ${sent.message}`,
      );
    }
    await this.#deleteOriginal(h);
    return "ok";
  }

  /** The dead letter: the job, plus its error trimmed so the message fits in 1 MiB. */
  #deadMessage(h: Held, error: JobError): OutgoingMessage {
    let message =
      error.message.length > ERROR_MESSAGE_MAX
        ? `${error.message.slice(0, ERROR_MESSAGE_MAX)}…`
        : error.message;
    let stack = error.stack ?? "";
    const build = (): OutgoingMessage => {
      const extra: Attributes = {
        [ATTR.errorName]: { DataType: "String", StringValue: error.name || "Error" },
        [ATTR.errorMessage]: { DataType: "String", StringValue: message || "-" },
        [ATTR.errorReason]: { DataType: "String", StringValue: error.reason },
      };
      if (stack) extra[ATTR.errorStack] = { DataType: "String", StringValue: stack };
      if (h.job.malformed === undefined) {
        const meta = copyMeta(h);
        if (h.attempt > 0) meta.base = h.attempt;
        return this.#reencode(h, meta, extra);
      }
      // Not ours: keep the body and (when they fit in SQS's 10) its attributes, as received.
      const attributes: Attributes =
        Object.keys(h.rawAttributes).length <= 5 ? copyAttributes(h.rawAttributes) : {};
      for (const [name, v] of Object.entries(extra)) {
        const value = v.StringValue ?? "";
        const escaped = this.#init.escaper.escape(value);
        attributes[name] = { DataType: "String", StringValue: escaped ?? value };
      }
      return { body: h.rawBody, attributes, bytes: messageBytes(h.rawBody, attributes) };
    };
    let msg = build();
    if (msg.bytes > SQS_MAX_MESSAGE_BYTES) {
      const over = msg.bytes - SQS_MAX_MESSAGE_BYTES;
      // Escaping can grow text up to 6x per code unit: trim generously, then recheck.
      stack = stack.slice(0, Math.max(0, stack.length - over - 64));
      msg = build();
      if (msg.bytes > SQS_MAX_MESSAGE_BYTES) {
        stack = "";
        message = message.slice(0, 256);
        msg = build();
      }
    }
    return msg;
  }

  // ── counts, probe, dead letters ─────────────────────────────────────────────────────

  async probe(): Promise<number> {
    this.#assertOpen();
    const counts = await Promise.all(this.#bands.map((b) => this.#probeBand(b)));
    return counts.reduce((a, b) => a + b, 0) + this.#buffer.length;
  }

  #probeBand(band: BandState): Promise<number> {
    const now = Date.now();
    const p = band.probe;
    if (p?.pending) return p.pending;
    if (p && now - p.at < this.#init.probeCacheMs) return Promise.resolve(p.value);
    const pending = this.#attributes(band.url, ["ApproximateNumberOfMessages"]).then(
      (a) => {
        const value = Number(a.ApproximateNumberOfMessages ?? 0);
        band.probe = { value, at: Date.now() };
        if (value > 0) band.emptyAt = undefined;
        return value;
      },
      (error: unknown) => {
        band.probe = undefined;
        throw error;
      },
    );
    band.probe = { value: p?.value ?? 0, at: p?.at ?? 0, pending };
    return pending;
  }

  async #attributes(url: string, names: string[]): Promise<Record<string, string>> {
    try {
      const out = await this.#init.client.send(
        // biome-ignore lint/suspicious/noExplicitAny: QueueAttributeName is a string union
        new GetQueueAttributesCommand({ QueueUrl: url, AttributeNames: names as any }),
      );
      return out.Attributes ?? {};
    } catch (error) {
      throw new AdapterError("sqs", `GetQueueAttributes: ${describe(error)}`, { cause: error });
    }
  }

  async counts(): Promise<LaneCounts> {
    this.#assertOpen();
    const names = [
      "ApproximateNumberOfMessages",
      "ApproximateNumberOfMessagesNotVisible",
      "ApproximateNumberOfMessagesDelayed",
    ];
    const [bands, dlqUrl] = await Promise.all([
      Promise.all(this.#bands.map((b) => this.#attributes(b.url, names))),
      this.#init.dlqUrl(false),
    ]);
    const dlq = dlqUrl ? await this.#attributes(dlqUrl, names) : {};
    const sum = (key: string) => bands.reduce((a, b) => a + Number(b[key] ?? 0), 0);
    return {
      waiting: sum("ApproximateNumberOfMessages"),
      delayed: sum("ApproximateNumberOfMessagesDelayed"),
      active: sum("ApproximateNumberOfMessagesNotVisible"),
      failed:
        Number(dlq.ApproximateNumberOfMessages ?? 0) +
        Number(dlq.ApproximateNumberOfMessagesNotVisible ?? 0),
      succeeded: 0,
      canceled: 0,
    };
  }

  /**
   * Move dead letters back to their lane, due now, attempt reset. Reads the dead-letter
   * queue in batches of 10; letters not asked for stay hidden during the scan and are made
   * visible again at the end. Returns how many were moved.
   */
  async retryFailed(ids?: string[]): Promise<number> {
    this.#assertOpen();
    const url = await this.#init.dlqUrl(false);
    if (!url) return 0;
    const dlq = await this.#dlq();
    const want = ids ? new Set(ids) : undefined;
    if (want && want.size === 0) return 0;
    const skipped: string[] = [];
    let moved = 0;
    const scanSeconds = 60;
    for (let round = 0; round < 100_000; round++) {
      let messages: Message[];
      try {
        const out = await this.#init.client.send(
          new ReceiveMessageCommand({
            QueueUrl: url,
            MaxNumberOfMessages: RECEIVE_MAX,
            WaitTimeSeconds: 0,
            VisibilityTimeout: scanSeconds,
            MessageSystemAttributeNames: [
              "ApproximateReceiveCount",
              "SentTimestamp",
              "MessageGroupId",
            ],
            MessageAttributeNames: ["All"],
          }),
        );
        messages = out.Messages ?? [];
      } catch (error) {
        throw new AdapterError(
          "sqs",
          `ReceiveMessage on ${this.#init.dlqName}: ${describe(error)}`,
          { cause: error },
        );
      }
      if (messages.length === 0) break;
      const now = Date.now();
      await Promise.all(
        messages.map(async (m) => {
          if (!m.ReceiptHandle) return;
          const h = this.#decode(this.#bands[0] as BandState, m, now, now + scanSeconds * 1000);
          if (!h) return;
          if (want && !want.has(h.job.id)) {
            skipped.push(h.handle);
            return;
          }
          const band = this.#bandFor(h.job.meta.p);
          let entry: SendEntry;
          if (h.job.malformed === undefined) {
            entry = { ...this.#reencode(h, copyMeta(h)) };
          } else {
            const attributes = copyAttributes(h.rawAttributes);
            for (const k of [ATTR.errorName, ATTR.errorMessage, ATTR.errorStack, ATTR.errorReason])
              delete attributes[k];
            entry = { body: h.rawBody, attributes, bytes: messageBytes(h.rawBody, attributes) };
          }
          if (this.fifo) {
            entry.groupId = h.groupId ?? dedupIdFor(h.job.id);
            entry.dedupId = dedupIdFor(`${h.job.id}:retry:${randomUUID()}`);
          } else if (h.job.meta.g !== undefined) entry.groupId = dedupIdFor(h.job.meta.g);
          const sent = await band.io.send(entry);
          if (sent !== "ok")
            throw new AdapterError(
              "sqs",
              `SendMessage (retry) for job ${h.job.id}: ${sent.code} ${sent.message}`,
            );
          band.emptyAt = undefined;
          const r = await dlq.delete(h.handle);
          if (r !== "ok")
            this.#init.onError(
              new AdapterError(
                "sqs",
                `DeleteMessage on ${this.#init.dlqName}: ${r.code} ${r.message}`,
              ),
            );
          moved++;
          want?.delete(h.job.id);
        }),
      );
      if (want && want.size === 0) break;
    }
    await Promise.all(skipped.map((handle) => dlq.changeVisibility(handle, 0)));
    return moved;
  }

  // ── lifecycle ───────────────────────────────────────────────────────────────────────

  #assertOpen() {
    if (this.#closed) throw new ClosedError(`sqs lane "${this.name}"`);
  }

  /** Run background work, reporting (never throwing) its failure. */
  #later(p: Promise<unknown>) {
    this.#track(
      p.catch((error: unknown) => {
        this.#init.onError(asError(error));
      }),
    );
  }

  #track(p: Promise<unknown>) {
    this.#background.add(p);
    void p.finally(() => this.#background.delete(p));
  }

  /**
   * Idempotent. Ends long polls at once, hands buffered (never reserved) messages back,
   * and waits for every batch in flight. Leases handed out stay with their holders.
   */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    if (this.#holdTimer) clearTimeout(this.#holdTimer);
    this.#holdTimer = undefined;
    for (const band of this.#bands) band.poll?.controller.abort();
    for (const wake of [...this.#waiters]) wake();
    const buffered = this.#buffer;
    this.#buffer = [];
    this.#handBackBuffered(buffered);
    while (this.#background.size > 0) await Promise.allSettled([...this.#background]);
    await Promise.all(this.#bands.map((b) => b.io.drain()));
    if (this.#dlqIO) await (await this.#dlqIO.catch(() => undefined))?.drain();
  }
}

/** A put where some jobs could not be written; the others were. */
export class SqsPutError extends AdapterError {
  readonly failures: string[];
  constructor(failures: string[], total: number) {
    super(
      "sqs",
      `${failures.length} of ${total} jobs were not written: ${failures.slice(0, 5).join("; ")}`,
    );
    this.failures = failures;
  }
}

/**
 * A lock named again in one call is lost after its first use (the contract). nack and
 * release forget the held message before their first await, so a repeat finds nothing;
 * ack and extend keep it until SQS answers, so they ask this first (synchronously, in item
 * order, before any item awaits).
 */
function firstUses(): (lock: Lock) => boolean {
  const seen = new Set<string>();
  return (lock) => {
    if (seen.has(lock.token)) return false;
    seen.add(lock.token);
    return true;
  };
}

function asError(error: unknown): Error {
  return error instanceof Error ? error : new Error(String(error));
}
