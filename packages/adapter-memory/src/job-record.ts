import type { JobError, JobState, NewJob } from "@tasklane/core/adapter";

/**
 * A node of an intrusive, circular, doubly linked list. Job records are nodes; so are each
 * list's root sentinel and the cursors that `list()` parks inside a list while it pages.
 */
export class ListNode {
  prev: ListNode;
  next: ListNode;
  /** Value of the lane's entry counter when this node entered its list (0 for sentinels). */
  entrySeq = 0;
  /** False for root sentinels and cursors. */
  readonly isJob: boolean;

  constructor(isJob: boolean) {
    this.prev = this;
    this.next = this;
    this.isJob = isJob;
  }
}

/** Everything the memory adapter stores about one job. Mutated in place on every transition. */
export class JobRecord extends ListNode {
  readonly id: string;
  readonly task: string;
  /** Replaced only while the job has never been handed out (a debounced put, keep "last"). */
  payload: string;
  appData: string | undefined;
  /** The instrumentation's trace context (NewJob.traceContext), handed back with every delivery. */
  traceContext: string | undefined;
  /** Its fair group (NewJob.group), used by a lane opened with `groups`. */
  readonly group: string | undefined;
  /** Changed in place only while delayed (not a key of the delayed heap); see setPriority. */
  priority: number;
  readonly publishedAt: number;
  /** Put order inside the lane: the last ordering key. */
  readonly seq: number;
  state: JobState;
  /** When the job is (or became) due: runAt, put time, expiry of a stalled lease, … */
  dueAt: number;
  /** Deliveries so far (incremented by reserve, decremented by an uncounted release). */
  attempt = 0;
  /** Lease expiries so far (a skipped delivery is added at the next one: see stall()). */
  stalls = 0;
  /**
   * The current delivery is prefetched (ReserveOptions.startNow): if its lease runs out
   * it is skipped, not stalled. Meaningful while active.
   */
  prefetched = false;
  /**
   * A prefetched delivery of the job had its lease run out (the job is a suspect); cleared
   * when the next stall counts it.
   */
  skipped = false;
  /** Fencing token of the current (or last) reservation; "" before the first one. */
  token = "";
  /** Lease end of the current reservation (meaningful while active). */
  expiresAt = 0;
  /**
   * Start of the current reservation while active (run-time stats); while delayed or
   * blocked, when it entered the state (its `changedAt`): it has no reservation to time.
   */
  reservedAt = 0;
  finishedAt: number | undefined = undefined;
  /** True when the job was canceled while active: its holder gets "canceled", not "lost". */
  canceledWhileActive = false;
  error: JobError | undefined = undefined;
  /** Last `historyLimit` events as flat (at, event, detail) triples, oldest first. */
  history: (number | string | undefined)[] | undefined = undefined;
  /**
   * Position in the lease index's heap; IN_LEASE_LIST in its list; IN_LAZY_HEAP in the
   * ready or delayed heap; NOT_IN_HEAP (-1) otherwise.
   */
  heapIndex = -1;
  /** Neighbours in the lease index's list (while active there). */
  leasePrev: JobRecord | undefined = undefined;
  leaseNext: JobRecord | undefined = undefined;

  constructor(job: NewJob, seq: number, state: JobState, dueAt: number) {
    super(true);
    this.id = job.id;
    this.task = job.task;
    this.payload = job.payload;
    this.appData = job.appData;
    this.traceContext = job.traceContext;
    this.group = job.group;
    this.priority =
      typeof job.priority === "number" && Number.isFinite(job.priority) ? job.priority : 0;
    this.publishedAt = job.publishedAt;
    this.seq = seq;
    this.state = state;
    this.dueAt = dueAt;
  }

  /**
   * A new record of the same job, in `state`: what a re-keyed waiting job (new priority,
   * promoted) or a moved job becomes. The old record is dead from then on, which keeps the
   * lazy heaps' rule that a stale entry never comes back to life (heap.ts). Its extras
   * (extras.ts) move with it by the lane's hand.
   */
  static copy(rec: JobRecord, seq: number, state: JobState, dueAt: number): JobRecord {
    const job: NewJob = {
      id: rec.id,
      task: rec.task,
      payload: rec.payload,
      priority: rec.priority,
      publishedAt: rec.publishedAt,
    };
    if (rec.appData !== undefined) job.appData = rec.appData;
    if (rec.traceContext !== undefined) job.traceContext = rec.traceContext;
    if (rec.group !== undefined) job.group = rec.group;
    const c = new JobRecord(job, seq, state, dueAt);
    c.attempt = rec.attempt;
    c.stalls = rec.stalls;
    c.skipped = rec.skipped;
    c.token = rec.token;
    c.expiresAt = rec.expiresAt;
    c.reservedAt = rec.reservedAt;
    c.finishedAt = rec.finishedAt;
    c.error = rec.error;
    c.history = rec.history;
    return c;
  }
}
