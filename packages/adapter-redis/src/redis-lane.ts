import { randomBytes } from "node:crypto";
import {
  type AckItem,
  type CancelResult,
  type ChangeResult,
  ConfigError,
  type DayStats,
  type DependencyPolicy,
  type DependencyView,
  emptyDayStats,
  type FailureGroup,
  HISTOGRAM_SIZE,
  type JobError,
  type JobEvent,
  type JobFilter,
  type JobInfo,
  type JobLogLine,
  type JobPage,
  type JobReport,
  type JobState,
  type JobSummary,
  type LaneCounts,
  type LaneStore,
  type LaneStoreOptions,
  type ListFilter,
  type ListOptions,
  type Lock,
  type LockStatus,
  type MoveResult,
  type NackItem,
  type NewJob,
  type OperatorLaneMethod,
  onlyState,
  type PutResult,
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
  type Summary,
} from "@tasklane/core/adapter";
import { Cluster } from "ioredis";
import { type AdapterShared, type FollowUp, MAX_BATCH } from "./adapter-shared.ts";
import { awaitReplicas } from "./durability.ts";
import { mapRedisError, RedisReplicationError, RedisUnavailableError } from "./errors.ts";
import { decodeId, encodeId } from "./id-codec.ts";
import { encodeJobText, parseJobText } from "./job-text.ts";
import { type LaneKeys, laneKeys } from "./keys.ts";
import { MAX_BY_REF_JOBS, newCallRef, packJobs } from "./put-batch.ts";
import { runCall, SCRIPTS, ScriptCall, type ScriptName } from "./scripts.ts";

const STATE_CODES: Partial<Record<JobState, number>> = {
  waiting: 1,
  delayed: 2,
  active: 3,
  succeeded: 4,
  failed: 5,
  canceled: 6,
  expired: 7,
  blocked: 9,
};
const LOCK_STATUS: readonly LockStatus[] = ["lost", "ok", "canceled"];
const CANCEL_RESULT: readonly CancelResult[] = ["not_found", "canceled", "finished"];
const CHANGE_RESULT: readonly ChangeResult[] = ["not_found", "ok", "wrong_state"];
/** move-out's answers (1, marked, becomes move-in's). */
const MOVE_OUT: readonly MoveResult[] = ["not_found", "moved", "finished", "duplicate", "blocked"];
/**
 * The last element of an ending script's reply (ack, nack, cancel, delete; the flow
 * scripts' replies) when it queued ends in the lane's outbox (FLOWS in lua/_common.lua):
 * the call delivers them before it resolves.
 */
const FLOWS_QUEUED = "flows";
/** Whether an ending script's reply says it queued ends (FLOWS_QUEUED, its last element). */
const flowsQueued = (reply: unknown): reply is unknown[] =>
  Array.isArray(reply) && reply[reply.length - 1] === FLOWS_QUEUED;
/** How often a lane's reserve drains its outbox (what a process that died left there). */
const DRAIN_EVERY_MS = 1_000;
const DEFAULT_PAGE_SIZE = 100;
/** LaneStoreOptions.logLimit's default, and the most lines the scripts keep per job. */
const DEFAULT_LOG_LIMIT = 100;
const MAX_LOG_LIMIT = 10_000;
const MAX_PAGE_SIZE = 1_000;
const DAY_MS = 86_400_000;
/** How long "the lane was left empty" is trusted by the next long poll, ms. */
const IDLE_HINT_MS = 1_000;
/** How long the least offset seen between redis-server's clock and ours is kept, ms. */
const CLOCK_WINDOW_MS = 10_000;
/** Fields per job in a reserve reply, and before the first job (see lua/reserve.lua). */
const RESERVE_FIELDS = 7;
const RESERVE_HEAD = 4;

interface QueuedPut {
  jobs: NewJob[];
  done: (results: PutResult[]) => void;
  fail: (error: unknown) => void;
}

/** The reason a job whose stored text does not parse is handed out as malformed. */
const MALFORMED_TEXT = "the stored job text is not one tasklane wrote (unparsable)";

/** A Redis lane: every method of the contract, optional ones included. */
export class RedisLane
  implements
    Required<Omit<LaneStore, OperatorLaneMethod>>,
    Required<
      Pick<
        LaneStore,
        "setPriority" | "promote" | "report" | "move" | "listPage" | "count" | "failures"
      >
    >
{
  readonly name: string;
  readonly shared: AdapterShared;
  readonly keys: LaneKeys;
  /** ARGV[1..6] of every script (see lua/_common.lua). */
  private common: string[] = [];
  /** The options the lane was opened with (a move's target may need them: see move). */
  options: LaneStoreOptions;
  /** Log lines kept per job (LaneStoreOptions.logLimit), sent with every report. */
  private logLimit = DEFAULT_LOG_LIMIT;
  /** Each script's calls with this lane's keys and common arguments (see ScriptCall). */
  private calls = new Map<ScriptName, ScriptCall>();
  /**
   * Set when this lane's last reserve left nothing takeable: a long poll that follows soon
   * after blocks on the wake-up key at once instead of running an empty reserve first.
   * Safe because every change that makes a job takeable in an empty lane (a put, a
   * resume, a freed slot, an earlier delayed job) pushes a wake-up marker, and a worker
   * that takes jobs and leaves some passes the wake-up on.
   */
  private idle: { at: number; nextAt: number } | undefined = undefined;
  /**
   * redis-server's clock in this process's: the least `reply received − the script's
   * TIME` seen in the last CLOCK_WINDOW_MS. A due time a reserve reports (server time)
   * becomes a time here without the delay of the reply that carried it, which on a busy
   * machine reached 50–125 ms, and a timer set from it would start the job that late.
   */
  private serverClock = { offsetMs: Number.NaN, at: 0 };

  constructor(name: string, options: LaneStoreOptions, shared: AdapterShared) {
    this.name = name;
    this.shared = shared;
    this.keys = laneKeys(shared.prefix, name);
    this.options = options;
    this.configure(options);
  }

  /** Apply (validated) lane options; they travel with every script call. */
  configure(options: LaneStoreOptions): void {
    this.options = options;
    this.logLimit = Math.min(options.logLimit ?? DEFAULT_LOG_LIMIT, MAX_LOG_LIMIT);
    this.common = [
      this.name,
      String(options.maxStalls),
      String(options.historyLimit),
      // a lane opened with groups: "g" and the groups' concurrency follow, then
      // "r<max>/<durationMs>" with each group's own rate limit (FAIR GROUPS and GROUP
      // WINDOWS in lua/_common.lua)
      String(options.maxConcurrency ?? 0) + groupsArg(options.groups),
      retentionSpec(options.retention),
      // "\nlifecycle" after the channel turns lifecycle events on (see lua/_common.lua)
      this.shared.lifecycleEvents ? `${this.shared.channel}\nlifecycle` : this.shared.channel,
    ];
    this.calls = new Map();
    this.debouncePut = undefined;
  }

  private call(script: ScriptName): ScriptCall {
    let call = this.calls.get(script);
    if (call === undefined) {
      // A rate-limited lane's reserve and probe also get its log of starts (see
      // lua/reserve.lua).
      const keys =
        (script === "reserve" || script === "probe") && this.options.rateLimit !== undefined
          ? [...this.keys.all, this.keys.rateLimit]
          : this.keys.all;
      call = new ScriptCall(SCRIPTS[script], keys, this.common);
      this.calls.set(script, call);
    }
    return call;
  }

  /** Run one of this lane's scripts (a move runs its target's too). */
  async run(script: ScriptName, args: Array<string | number | Buffer>): Promise<unknown> {
    if (script !== "reserve" && script !== "ack" && script !== "extend") this.idle = undefined;
    this.shared.check(`redis lane "${this.name}"`);
    return this.send(script, args);
  }

  /** Run a script now, tracked for close(), without the closed check (run() makes it). */
  private send(
    script: ScriptName,
    args: Array<string | number | Buffer>,
    prepared: ScriptCall = this.call(script),
  ): Promise<unknown> {
    const call = runCall(
      this.shared.client,
      prepared,
      args,
      `${script} on lane "${this.name}"`,
      this.shared.scripting,
    );
    this.shared.track(call);
    return call;
  }

  /** put's call with the debounce keys (KEYS[19], KEYS[20]: see lua/put.lua), made when first needed. */
  private debouncePut: ScriptCall | undefined = undefined;

  /** put's call: with the debounce keys when a job of the call has a debounce key. */
  private putCall(debounce: boolean): ScriptCall {
    if (!debounce) return this.call("put");
    if (this.debouncePut === undefined) {
      const keys = [...this.keys.all, this.keys.debounce, this.keys.debounceUntil];
      this.debouncePut = new ScriptCall(SCRIPTS.put, keys, this.common);
    }
    return this.debouncePut;
  }

  // ── put ──────────────────────────────────────────────────────────────────────────────

  /**
   * Puts asked for during this turn of the event loop: sent together once it ends
   * (process.nextTick), as few script calls as fit whole puts into MAX_BATCH jobs each.
   * Concurrent single publishes (a web service publishing per request) then share one
   * call, its fixed cost (the script's prelude, TIME, the meta hash, a round trip) paid
   * once for all of them; a put alone waits for nothing but the end of the current tick.
   * Merging is invisible to callers: the jobs keep their order, the first of an id wins
   * as within one batch, each put gets its own results, and a failed call fails each
   * put it carried (an atomic call: none of their jobs was written).
   */
  private queuedPuts: QueuedPut[] = [];

  put(jobs: NewJob[]): Promise<PutResult[]> {
    try {
      this.shared.check(`redis lane "${this.name}"`);
    } catch (error) {
      return Promise.reject(error);
    }
    if (jobs.length === 0) return Promise.resolve([]);
    return new Promise((done, fail) => {
      if (this.queuedPuts.length === 0) process.nextTick(() => this.sendQueuedPuts());
      this.queuedPuts.push({ jobs, done, fail });
    });
  }

  /** Send the queued puts now (at the end of the tick, or when the adapter closes). */
  sendQueuedPuts(): void {
    const queued = this.queuedPuts;
    this.queuedPuts = [];
    for (let i = 0; i < queued.length; ) {
      let count = (queued[i] as QueuedPut).jobs.length;
      let end = i + 1;
      while (end < queued.length && count + (queued[end] as QueuedPut).jobs.length <= MAX_BATCH) {
        count += (queued[end] as QueuedPut).jobs.length;
        end++;
      }
      const group = queued.slice(i, end);
      const jobs = group.length === 1 ? (group[0] as QueuedPut).jobs : group.flatMap((p) => p.jobs);
      this.putNow(jobs).then(
        (results) => {
          let at = 0;
          for (const p of group) {
            p.done(group.length === 1 ? results : results.slice(at, at + p.jobs.length));
            at += p.jobs.length;
          }
        },
        (error) => {
          for (const p of group) p.fail(error);
        },
      );
      i = end;
    }
  }

  private async putNow(jobs: NewJob[]): Promise<PutResult[]> {
    // Flags (see lua/put.lua): "e" put events; "f" every id fresh (NewJob.freshId), so the
    // script looks none up. One caller's id in the call and every id is checked.
    const shape = jobsShape(jobs);
    const extras = shape & HAS_EXTRAS ? extrasArg(jobs) : undefined;
    const args: Array<string | number | Buffer> = [
      (this.shared.putEvents ? "e" : "") +
        (shape & ALL_FRESH ? "f" : "") +
        (extras !== undefined ? "x" : ""),
    ];
    const first = jobs[0] as NewJob;
    const priority = priorityArg(first);
    const runAt = runAtArg(first);
    const publishedAt = publishedAtArg(first);
    // publishMany's jobs usually share priority, runAt and publishedAt: then those go once
    // and the jobs in one packed argument (layout "p", see put-batch.ts); otherwise, and
    // for a single job (nothing to gain), five arguments per job (layout "5"). When the
    // ids are fresh too and no runAt is given (the usual publishMany), each job goes as the
    // record redis-server stores (layout "r": by ref, see JOB RECORDS in lua/_common.lua).
    if (jobs.length > 1 && shape & SHARED_FIELDS) {
      if (shape & ALL_FRESH && runAt === "" && jobs.length <= MAX_BY_REF_JOBS) {
        const ref = newCallRef();
        args.push("r", priority, runAt, publishedAt, ref, packJobs(jobs, ref));
      } else {
        args.push("p", priority, runAt, publishedAt, packJobs(jobs));
      }
    } else {
      args.push("5");
      for (const job of jobs) pushJobFields(args, job);
    }
    if (extras !== undefined) args.push(extras);
    // The job count when every job was created (no per-job array to build and parse),
    // else 1 created / 0 duplicate per job.
    const call = this.putCall((shape & HAS_DEBOUNCE) !== 0);
    let replied: Promise<unknown>;
    if (this.shared.durable) replied = this.putDurably(args, call);
    else {
      this.idle = undefined;
      this.shared.check(`redis lane "${this.name}"`);
      replied = this.send("put", args, call);
    }
    // The usual reply's results, built while Redis runs the script rather than after it
    // (on a ready connection ioredis wrote the call above, synchronously): off the
    // publisher's critical path.
    const created = jobs.map((job): PutResult => ({ id: job.id, status: "created" }));
    const reply = (await replied) as number | Array<number | string>;
    if (typeof reply === "number") return created;
    return jobs.map((job, i): PutResult => {
      const r = reply[i];
      if (typeof r === "string") return { id: decodeId(r), status: "debounced" };
      return { id: job.id, status: r === 1 ? "created" : "duplicate" };
    });
  }

  /** The lane's slot, on a Cluster (asked once: durable puts route their WAIT by it). */
  private slot: number | undefined;

  /**
   * A put on the durable connection, then WAIT (or WAITAOF) for its replicas on that same
   * connection and node (see durability.ts). Throws RedisReplicationError when too few
   * answered: the put itself was carried out.
   */
  private putDurably(
    args: Array<string | number | Buffer>,
    prepared: ScriptCall = this.call("put"),
  ): Promise<unknown> {
    const { client, durability } = this.shared.durable as NonNullable<AdapterShared["durable"]>;
    this.idle = undefined;
    this.shared.check(`redis lane "${this.name}"`);
    const what = `put on lane "${this.name}"`;
    const call = (async () => {
      if (client instanceof Cluster && this.slot === undefined) {
        this.slot = Number(await client.call("CLUSTER", "KEYSLOT", this.keys.meta));
      }
      const reply = await runCall(client, prepared, args, what, this.shared.scripting);
      try {
        await awaitReplicas(client, this.slot, durability, what);
      } catch (error) {
        if (error instanceof RedisReplicationError) throw error;
        throw mapRedisError(`${what}, waiting for its replicas (the put was carried out)`, error);
      }
      return reply;
    })();
    this.shared.track(call);
    return call;
  }

  // ── flows (flows.ts runs putFlow's steps; FLOWS in lua/_common.lua) ─────────────────

  /**
   * Store this lane's jobs of a putFlow in one call (lua/flow.lua): each of `blocked`
   * (indexes into `jobs`) blocked with its entries, the rest as put stores them (debounce
   * is not honoured), and `links` (4 each: a job's encoded id, a job waiting for it: its
   * lane, encoded id and entry index) added to the jobs' flow links. Answers, per job,
   * whether it was created.
   */
  async putFlowJobs(
    jobs: readonly NewJob[],
    blocked: ReadonlyArray<{ index: number; entries: StoredDependency[] }>,
    links: ReadonlyArray<string | number>,
  ): Promise<boolean[]> {
    const entriesOf = new Map(blocked.map((b) => [b.index, b.entries]));
    const extras =
      jobsShape(jobs) & HAS_EXTRAS ? extrasArg(jobs.map(({ debounce: _, ...job }) => job)) : "[]";
    const args: Array<string | number | Buffer> = [
      this.shared.putEvents ? "e" : "",
      JSON.stringify(links),
      extras,
    ];
    jobs.forEach((job, i) => {
      const entries = entriesOf.get(i);
      pushJobFields(args, job);
      args.push(entries === undefined ? "" : JSON.stringify({ d: entries, n: entries.length }));
    });
    const reply = (await this.run("flow", args)) as [number[], string];
    return jobs.map((_, i) => Number(reply[0][i]) === 1);
  }

  /**
   * Tell this lane's dependencies of the jobs waiting for them (lua/link.lua): 4 per link
   * (the dependency's encoded id, the waiting job's lane, encoded id, entry index).
   * Answers whether ends were queued (dependencies that had ended already).
   */
  async linkDependents(links: Array<string | number>): Promise<boolean> {
    return (await this.run("link", links)) === FLOWS_QUEUED;
  }

  /**
   * Apply ends to this lane's waiting jobs (lua/deliver.lua): 4 per end (encoded id, entry
   * index, state, result or ""). Answers whether that queued ends in turn.
   */
  async deliverEnds(ends: string[]): Promise<boolean> {
    return (await this.run("deliver", ends)) === FLOWS_QUEUED;
  }

  // ── recurring schedules ──────────────────────────────────────────────────────────────
  // Stored in the lane's slot (keys.schedules, keys.scheduleIndex), so a firing's
  // compare-and-set and the put of its jobs are one script (lua/fire.lua) on Cluster too.

  private scheduleCalls = new Map<ScriptName, ScriptCall>();

  private runScheduleScript(
    script: "schedule" | "fire",
    args: Array<string | number | Buffer>,
  ): Promise<unknown> {
    this.shared.check(`redis lane "${this.name}"`);
    this.idle = undefined;
    let call = this.scheduleCalls.get(script);
    if (call === undefined || call.fixed !== this.common) {
      const keys = [...this.keys.all, this.keys.schedules, this.keys.scheduleIndex];
      call = new ScriptCall(SCRIPTS[script], keys, this.common);
      this.scheduleCalls.set(script, call);
    }
    const pending = runCall(
      this.shared.client,
      call,
      args,
      `${script} on lane "${this.name}"`,
      this.shared.scripting,
    );
    this.shared.track(pending);
    return pending;
  }

  async putSchedule(record: ScheduleWrite, expectRevision?: number): Promise<ScheduleWriteResult> {
    checkScheduleWrite(record);
    const reply = Number(
      await this.runScheduleScript("schedule", [
        "put",
        record.id,
        expectRevision === undefined ? "" : String(expectRevision),
        record.nextAt === null ? "" : String(record.nextAt),
        record.data,
      ]),
    );
    return reply < 0 ? { status: "stale" } : { status: "ok", revision: reply };
  }

  async getSchedule(id: string): Promise<ScheduleRecord | undefined> {
    this.shared.check(`redis lane "${this.name}"`);
    const text = await this.shared.client.hget(this.keys.schedules, id);
    return text === null ? undefined : scheduleRecord(id, text);
  }

  async listSchedules(cursor?: string): Promise<SchedulePage> {
    this.shared.check(`redis lane "${this.name}"`);
    const [next, flat] = await this.shared.client.hscan(
      this.keys.schedules,
      cursor ?? "0",
      "COUNT",
      DEFAULT_PAGE_SIZE,
    );
    const records: ScheduleRecord[] = [];
    for (let i = 0; i + 1 < flat.length; i += 2) {
      const record = scheduleRecord(flat[i] as string, flat[i + 1] as string);
      if (record) records.push(record);
    }
    return next === "0" ? { records } : { records, cursor: next };
  }

  async removeSchedule(id: string): Promise<boolean> {
    return Number(await this.runScheduleScript("schedule", ["del", id])) === 1;
  }

  async dueSchedules(now: number, limit: number): Promise<ScheduleRecord[]> {
    const flat = (await this.runScheduleScript("schedule", [
      "due",
      String(now),
      String(Math.max(1, Math.floor(limit))),
    ])) as string[];
    const records: ScheduleRecord[] = [];
    for (let i = 0; i + 1 < flat.length; i += 2) {
      const record = scheduleRecord(flat[i] as string, flat[i + 1] as string);
      if (record) records.push(record);
    }
    return records;
  }

  async nextScheduleAt(): Promise<number | undefined> {
    this.shared.check(`redis lane "${this.name}"`);
    const reply = await this.shared.client.zrange(this.keys.scheduleIndex, 0, 0, "WITHSCORES");
    return reply.length < 2 ? undefined : Number(reply[1]);
  }

  async fireSchedule(
    record: ScheduleWrite,
    expectRevision: number,
    jobs: NewJob[],
  ): Promise<ScheduleFireResult> {
    checkScheduleWrite(record);
    // put's arguments as putNow's layout "5" (lua/put.lua), after the schedule's own.
    const args: Array<string | number | Buffer> = [
      record.id,
      String(expectRevision),
      record.nextAt === null ? "" : String(record.nextAt),
      record.data,
      (this.shared.putEvents ? "e" : "") + (jobsShape(jobs) & HAS_EXTRAS ? "x" : ""),
      "5",
    ];
    for (const job of jobs) pushJobFields(args, job);
    // the runs' tags and expiries, as put's (flag "x")
    if ((args[4] as string).includes("x")) args.push(extrasArg(jobs));
    const reply = (await this.runScheduleScript("fire", args)) as string | number | number[];
    if (reply === "stale") return { status: "stale" };
    const results = jobs.map(
      (job, i): PutResult => ({
        id: job.id,
        status: typeof reply === "number" || reply[i] === 1 ? "created" : "duplicate",
      }),
    );
    return { status: "ok", revision: expectRevision + 1, results };
  }

  // ── reserve ──────────────────────────────────────────────────────────────────────────

  async reserve(options: ReserveOptions): Promise<ReserveResult> {
    this.shared.check(`redis lane "${this.name}"`);
    const limit = Math.min(Math.floor(options.limit), MAX_BATCH);
    const leaseMs = options.leaseMs;
    if (typeof leaseMs !== "number" || !Number.isFinite(leaseMs) || leaseMs < 0) {
      throw new ConfigError("leaseMs", leaseMs, "must be a finite number of ms >= 0");
    }
    if (!(limit > 0)) return { jobs: [], ready: await this.probe() };
    const waitMs = Number.isFinite(options.waitMs) ? Math.max(0, options.waitMs) : 0;
    const signal = options.signal;
    const deadline = Date.now() + waitMs;
    this.drainNowAndThen(Date.now());
    const args = [limit, Math.ceil(leaseMs)];
    // Sent only when some job taken may be prefetched (ARGV[9], see lua/reserve.lua), or
    // before the rate limit (ARGV[10], ARGV[11]; its key is the call's KEYS[19]).
    const startNow = options.startNow;
    const rate = this.options.rateLimit;
    if (startNow !== undefined && startNow < limit) args.push(Math.max(0, Math.floor(startNow)));
    else if (rate !== undefined) args.push(limit);
    if (rate !== undefined) args.push(rate.max, rate.durationMs);
    /** A reserve's reply that came with the end of a block (see FollowUp), if any. */
    let ready: unknown;
    const idle = this.idle;
    if (waitMs > 0 && idle !== undefined && Date.now() - idle.at < IDLE_HINT_MS) {
      this.idle = undefined;
      const dueInMs = Math.max(0, idle.nextAt - Date.now());
      const blockMs = Math.min(waitMs, this.shared.maxBlockMs, dueInMs + 1);
      ready = await this.shared.waitForWake(
        this.keys.wake,
        blockMs,
        signal,
        this.reserveBehindBlock(args),
        dueInMs,
      );
      if (ready === undefined && (signal?.aborted || this.shared.closed)) {
        return { jobs: [], ready: 0 };
      }
    }
    for (;;) {
      const reply = (ready ?? (await this.run("reserve", args))) as Array<string | number | null>;
      ready = undefined;
      const result = this.reserveResult(reply, Date.now(), args[1] as number);
      const nextAt = result.nextDueAt ?? Number.POSITIVE_INFINITY;
      this.idle = result.ready === 0 ? { at: Date.now(), nextAt } : undefined;
      if (result.jobs.length > 0 || waitMs <= 0 || signal?.aborted || this.shared.closed) {
        return result;
      }
      const left = deadline - Date.now();
      if (left <= 0) return result;
      // Block on the wake-up key: a put into the empty lane, a resume or a freed slot
      // pushes a marker; a delayed job falling due or a lease expiring ends the block, on
      // time (waitForWake ends it from here).
      const dueInMs = Math.max(0, nextAt - Date.now());
      const blockMs = Math.min(left, this.shared.maxBlockMs, dueInMs + 1);
      ready = await this.shared.waitForWake(
        this.keys.wake,
        blockMs,
        signal,
        this.reserveBehindBlock(args),
        dueInMs,
      );
      if (ready === undefined && (signal?.aborted || this.shared.closed)) {
        return { jobs: [], ready: result.ready ?? 0 };
      }
    }
  }

  /**
   * A reserve's reply, with its due time (server time, see lua/reserve.lua) as a time of
   * this process (`serverClock`).
   */
  private reserveResult(
    reply: Array<string | number | null>,
    receivedAt: number,
    leaseMs: number,
  ): ReserveResult {
    const result = parseReserve(reply);
    // the script's TIME: every lease the call hands out ends leaseMs after it
    const serverNow = Number(reply[3]) - leaseMs;
    const clock = this.serverClock;
    const offsetMs = receivedAt - serverNow;
    if (!(offsetMs >= clock.offsetMs) || receivedAt - clock.at > CLOCK_WINDOW_MS) {
      clock.offsetMs = offsetMs;
      clock.at = receivedAt;
    }
    const nextAt = Number(reply[1]);
    if (result.ready === 0 && nextAt >= 0) {
      let local = nextAt + clock.offsetMs;
      if (local <= receivedAt && nextAt > serverNow) {
        // Due by the estimate, not yet by the server: the clocks moved apart since the
        // least offset was seen (a wake-up this early would repeat): trust this reply.
        clock.offsetMs = offsetMs;
        clock.at = receivedAt;
        local = nextAt + offsetMs;
      }
      result.nextDueAt = local;
    }
    return result;
  }

  /**
   * The reserve a long poll sends behind its block (see FollowUp in redis-adapter.ts). Its
   * reply after an abort went to nobody: its jobs are handed back at once (release: due
   * now, the delivery not counted), also while the adapter closes.
   */
  private reserveBehindBlock(args: Array<string | number>): FollowUp {
    const call = this.call("reserve");
    const mode = this.shared.scripting;
    return {
      send: (conn) => call.send(conn, mode, args),
      orphan: async (reply) => {
        const jobs = Array.isArray(reply) ? parseReserve(reply).jobs : [];
        if (jobs.length === 0) return;
        // send(), not release(): this also runs while the adapter closes
        await this.send("release", ["", ...lockArgs(jobs.map((job) => job.lock))]).catch(() => {
          // Not handed back (the server is gone): the leases expire and the jobs come
          // back then, as after a crash.
        });
      },
    };
  }

  // ── ack, nack, release, extend ───────────────────────────────────────────────────────

  async ack(items: AckItem[]): Promise<LockStatus[]> {
    this.shared.check(`redis lane "${this.name}"`);
    if (items.length === 0) return [];
    const closes = this.shared.closes;
    const reply = await this.run("ack", ackArgs(items, this.logLimit));
    if (flowsQueued(reply)) await this.deliverQueued(reply);
    return this.settled("ack", closes, reply);
  }

  /**
   * After a script that may have ended jobs others wait for (FLOWS in lua/_common.lua):
   * when its reply says ends were queued in the outbox (FLOWS_QUEUED, taken off the
   * reply), deliver them before the call resolves. A failure here loses nothing: the
   * outbox keeps them for the next drain.
   */
  async deliverQueued(reply: unknown): Promise<void> {
    if (!flowsQueued(reply)) return;
    reply.pop();
    try {
      await this.shared.drainOutbox(this.name);
    } catch {
      // left in the outbox: a later drain (a reserve's, any process's) delivers them
    }
  }

  /** When the lane's outbox was last drained by a reserve here (drainNowAndThen). */
  private drainedAt = 0;

  /**
   * Deliver what the lane's outbox holds, at most once every DRAIN_EVERY_MS, in the
   * background: ends a process queued and did not deliver (it died) reach their jobs.
   * One HSCAN of an empty hash on a lane without flows.
   */
  private drainNowAndThen(now: number): void {
    if (now - this.drainedAt < DRAIN_EVERY_MS) return;
    this.drainedAt = now;
    this.shared.drainOutbox(this.name).catch(() => {
      // the next one tries again
    });
  }

  /**
   * The statuses of a settling call (ack, nack, release), unless the connection closed
   * while it was in flight and one of them is "lost": ioredis sends the commands awaiting
   * a reply again after it reconnects, so the call may have run twice, and a second run
   * answers "lost" for a job the first one settled. Whether that job's lease was lost or
   * settled by this very call is then unknown, which is an infrastructure failure, not a
   * race: it throws, and the caller's retry (core retries settling calls that throw) is
   * what reports it. A call whose every lock is "ok" or "canceled" is certain either way.
   */
  private settled(script: ScriptName, closesBefore: number, reply: unknown): LockStatus[] {
    const out = statuses(reply);
    if (this.shared.closes !== closesBefore && out.includes("lost")) {
      throw new RedisUnavailableError(
        `${script} on lane "${this.name}"`,
        "the connection closed while the call was in flight and it may have run twice; its outcome is unknown",
      );
    }
    return out;
  }

  async nack(items: NackItem[]): Promise<LockStatus[]> {
    this.shared.check(`redis lane "${this.name}"`);
    if (items.length === 0) return [];
    const args: Array<string | number> = [];
    for (const item of items) {
      const dead = "dead" in item && item.dead === true;
      const runAt = "runAt" in item && Number.isFinite(item.runAt) ? Math.ceil(item.runAt) : 0;
      args.push(
        encodeId(item.lock.jobId),
        item.lock.token,
        dead ? "" : runAt,
        JSON.stringify(errorOf(item.error)),
        dead ? item.error.reason : item.error.message,
      );
    }
    if (items.some((item) => item.report !== undefined)) {
      args.push(this.logLimit, JSON.stringify(items.map((item) => reportArg(item.report))));
    }
    const closes = this.shared.closes;
    const reply = await this.run("nack", args);
    if (flowsQueued(reply)) await this.deliverQueued(reply);
    return this.settled("nack", closes, reply);
  }

  async release(items: ReleaseItem[]): Promise<LockStatus[]> {
    this.shared.check(`redis lane "${this.name}"`);
    if (items.length === 0) return [];
    const closes = this.shared.closes;
    // One ">d" runAt per lock when any item has one (ctx.retryAfter; 0: due at once).
    let runAts: string | Buffer = "";
    if (items.some((item) => item.runAt !== undefined)) {
      const packed = Buffer.alloc(8 * items.length);
      items.forEach((item, i) => {
        const at = item.runAt;
        packed.writeDoubleBE(at !== undefined && Number.isFinite(at) ? Math.ceil(at) : 0, 8 * i);
      });
      runAts = packed;
    }
    const locks = lockArgs(items.map((item) => item.lock));
    const args = items.some((item) => item.report !== undefined)
      ? [runAts, "", this.logLimit, ...items.map((item) => reportArg(item.report)), ...locks]
      : [runAts, ...locks];
    const reply = await this.run("release", args);
    return this.settled("release", closes, reply);
  }

  async report(items: ReportItem[]): Promise<LockStatus[]> {
    this.shared.check(`redis lane "${this.name}"`);
    if (items.length === 0) return [];
    const args = [
      this.logLimit,
      ...items.map((item) => reportArg(item)),
      ...lockArgs(items.map((item) => item.lock)),
    ];
    return statuses(await this.run("report", args));
  }

  async extend(locks: Lock[], leaseMs: number): Promise<LockStatus[]> {
    this.shared.check(`redis lane "${this.name}"`);
    if (typeof leaseMs !== "number" || !Number.isFinite(leaseMs) || leaseMs < 0) {
      throw new ConfigError("leaseMs", leaseMs, "must be a finite number of ms >= 0");
    }
    if (locks.length === 0) return [];
    return statuses(await this.run("extend", [Math.ceil(leaseMs), ...lockArgs(locks)]));
  }

  // ── counts and probes ────────────────────────────────────────────────────────────────

  async probe(): Promise<number> {
    const rate = this.options.rateLimit;
    return Number(await this.run("probe", rate === undefined ? [] : [rate.max, rate.durationMs]));
  }

  async counts(): Promise<LaneCounts> {
    const r = (await this.run("counts", [])) as number[];
    return {
      waiting: Number(r[0]),
      delayed: Number(r[1]),
      active: Number(r[2]),
      succeeded: Number(r[3]),
      failed: Number(r[4]),
      canceled: Number(r[5]),
      expired: Number(r[7]),
      blocked: Number(r[8] ?? 0),
    };
  }

  // ── optional parts ───────────────────────────────────────────────────────────────────

  async get(id: string): Promise<JobInfo | undefined> {
    const reply = await this.run("get", [encodeId(id)]);
    return typeof reply === "string" ? this.info(reply) : undefined;
  }

  /** Every job in one state, page by page: lua/search.lua with the state alone. */
  async *list(options: ListOptions): AsyncGenerator<JobInfo, void, undefined> {
    if (STATE_CODES[options.state] === undefined) return;
    const pageSize = Math.max(
      1,
      Math.min(MAX_PAGE_SIZE, Math.floor(options.pageSize ?? DEFAULT_PAGE_SIZE) || 1),
    );
    const args = searchArgs({ state: options.state }, "l", pageSize, undefined);
    for (;;) {
      const reply = (await this.run("search", args)) as string[];
      for (let i = 1; i < reply.length; i++) yield this.info(reply[i] as string);
      const cursor = reply[0] ?? "";
      if (cursor === "") return;
      args[args.length - 1] = cursor;
    }
  }

  /**
   * One page of a search (lua/search.lua): by the tag index when a tag is given, by the
   * failure index for failed jobs of one error name, else state by state. The script
   * examines a bounded number of entries per call, so a page may be short (even empty)
   * while a cursor is returned.
   */
  async listPage(filter: ListFilter, cursor?: string): Promise<JobPage<JobSummary>> {
    const pageSize = Math.max(
      1,
      Math.min(MAX_PAGE_SIZE, Math.floor(filter.pageSize ?? DEFAULT_PAGE_SIZE) || 1),
    );
    const summary = filter.fields === "summary";
    const args = searchArgs(filter, "l", pageSize, cursor);
    if (summary) args.push("s");
    const reply = (await this.run("search", args)) as string[];
    const jobs = reply.slice(1).map((json) => (summary ? this.summary(json) : this.info(json)));
    const next = reply[0] ?? "";
    return next === "" ? { jobs } : { jobs, cursor: next };
  }

  /**
   * How many jobs match: the per-state counts for a filter of a state alone, else search
   * calls counting up to SEARCH_COUNT_STEP entries each (exact when the lane holds still).
   */
  async count(filter: JobFilter): Promise<number> {
    const args = searchArgs(filter, "c", SEARCH_COUNT_STEP, undefined);
    if (onlyState(filter)) {
      const counts = await this.counts();
      if (filter.state !== undefined) return counts[filter.state] ?? 0;
      return Object.values(counts).reduce((a: number, b: number | undefined) => a + (b ?? 0), 0);
    }
    let n = 0;
    for (;;) {
      const reply = (await this.run("search", args)) as Array<string | number>;
      n += Number(reply[1]);
      const next = String(reply[0] ?? "");
      if (next === "") return n;
      args[args.length - 1] = next;
    }
  }

  async failures(): Promise<FailureGroup[]> {
    const reply = (await this.run("failures", [MAX_FAILURE_GROUPS])) as Array<string | number>;
    const groups: FailureGroup[] = [];
    for (let i = 0; i + 5 < reply.length; i += 6) {
      const parts = parseJobText(String(reply[i + 3]));
      const error = parseError(String(reply[i + 4]));
      const sample: FailureGroup["sample"] = {
        jobId: decodeId(String(reply[i + 2])),
        task: parts?.task ?? "",
        message: error?.message ?? "",
        failedAt: Number(reply[i + 5]),
      };
      if (error?.stack !== undefined) sample.stack = error.stack;
      groups.push({
        lane: this.name,
        group: String(reply[i]),
        count: Number(reply[i + 1]),
        sample,
      });
    }
    return groups.sort((a, b) => b.count - a.count || (a.group < b.group ? -1 : 1));
  }

  async cancel(ids: string[]): Promise<CancelResult[]> {
    if (ids.length === 0) {
      this.shared.check(`redis lane "${this.name}"`);
      return [];
    }
    const reply = (await this.run("cancel", ids.map(encodeId))) as number[];
    await this.deliverQueued(reply);
    return reply.map((code) => CANCEL_RESULT[code] ?? "not_found");
  }

  async retryFailed(ids?: string[]): Promise<number> {
    if (ids !== undefined) {
      if (ids.length === 0) return 0;
      const reply = (await this.run("retry-failed", ["ids", ...ids.map(encodeId)])) as number[];
      return Number(reply[0]);
    }
    // Every failed job, in bounded steps (each call moves at most 1,000).
    let moved = 0;
    for (;;) {
      const reply = (await this.run("retry-failed", ["*"])) as number[];
      moved += Number(reply[0]);
      if (Number(reply[1]) !== 1) return moved;
    }
  }

  async delete(ids: string[]): Promise<number> {
    if (ids.length === 0) return 0;
    const reply = await this.run("delete", ids.map(encodeId));
    // { removed, "flows" } when ends were queued (FLOWS in lua/_common.lua)
    if (!Array.isArray(reply)) return Number(reply);
    await this.deliverQueued(reply);
    return Number(reply[0]);
  }

  /**
   * Have every finish of this lane's jobs published for `ttlMs` from now (server time),
   * lifecycle events on or off (lua/watch.lua): what a watcher renews while it watches.
   */
  async watchFor(ttlMs: number): Promise<void> {
    await this.run("watch", [Math.ceil(ttlMs)]);
  }

  async setPriority(ids: string[], priority: number): Promise<ChangeResult[]> {
    if (!Number.isInteger(priority) || priority < -32_768 || priority > 32_767) {
      throw new ConfigError("priority", priority, "must be an integer (-32768..32767)");
    }
    if (ids.length === 0) {
      this.shared.check(`redis lane "${this.name}"`);
      return [];
    }
    const reply = (await this.run("set-priority", [priority, ...ids.map(encodeId)])) as number[];
    return reply.map((code) => CHANGE_RESULT[code] ?? "not_found");
  }

  async promote(ids: string[]): Promise<ChangeResult[]> {
    if (ids.length === 0) {
      this.shared.check(`redis lane "${this.name}"`);
      return [];
    }
    const reply = (await this.run("promote", ids.map(encodeId))) as number[];
    return reply.map((code) => CHANGE_RESULT[code] ?? "not_found");
  }

  /**
   * Move jobs to `to` (capability move) in the contract's crash-safe steps, each one
   * script call (docs/adapter-contract.md, "move"): the ids the target already holds are
   * duplicates; the rest are marked moving here (lua/move-out.lua; holders get a put
   * event), put into the target by id (move-in.lua), then removed here (move-done.lua). A
   * job an interrupted move left marked goes on to that move's target.
   */
  async move(ids: string[], to: LaneStore): Promise<MoveResult[]> {
    this.shared.check(`redis lane "${this.name}"`);
    if (!(to instanceof RedisLane) || to.shared !== this.shared || to.name === this.name) {
      throw new ConfigError(
        "to",
        (to as { name?: unknown } | undefined)?.name,
        "must be another lane of the same Redis adapter",
      );
    }
    if (ids.length === 0) return [];
    const encoded = ids.map(encodeId);
    let held: Array<string | null>;
    try {
      held = await this.shared.client.hmget(to.keys.all[1] as string, ...encoded);
    } catch (error) {
      throw mapRedisError(`move from lane "${this.name}"`, error);
    }
    const token = randomBytes(8).toString("hex");
    const args: string[] = [to.name, token];
    for (let i = 0; i < encoded.length; i++) {
      args.push(encoded[i] as string, held[i] !== null ? "1" : "");
    }
    const marked = (await this.run("move-out", args)) as Array<number | string>;
    const results: MoveResult[] = ids.map((_, i) => MOVE_OUT[Number(marked[2 * i])] ?? "not_found");
    // Marked jobs, by target (an interrupted move's may differ from `to`).
    const byTarget = new Map<string, Array<{ i: number; json: string; token: string }>>();
    ids.forEach((_, i) => {
      if (Number(marked[2 * i]) !== 1) return;
      const json = String(marked[2 * i + 1]);
      const { t, k } = JSON.parse(json) as { t: string; k: string };
      const list = byTarget.get(t) ?? [];
      byTarget.set(t, list);
      list.push({ i, json, token: k });
    });
    const done: string[] = [];
    for (const [target, jobs] of byTarget) {
      const lane = target === to.name ? to : this.shared.openLane(target, to.options);
      const inArgs: string[] = [this.name];
      for (const job of jobs) inArgs.push(encoded[job.i] as string, job.json);
      const put = (await lane.run("move-in", inArgs)) as number[];
      jobs.forEach((job, k) => {
        const ok = Number(put[k]) === 1;
        results[job.i] = ok ? "moved" : "duplicate";
        done.push(encoded[job.i] as string, job.token, ok ? "1" : "0");
      });
    }
    if (done.length > 0) await this.run("move-done", done);
    // Interrupted moves completed to their first target move on to `to`, as asked.
    for (const [target, jobs] of byTarget) {
      if (target === to.name) continue;
      const onward = jobs.filter((job) => results[job.i] === "moved");
      if (onward.length === 0) continue;
      const first = this.shared.openLane(target, to.options) as RedisLane;
      const again = await first.move(
        onward.map((job) => ids[job.i] as string),
        to,
      );
      onward.forEach((job, k) => {
        results[job.i] = again[k] ?? "not_found";
      });
    }
    return results;
  }

  async pause(): Promise<void> {
    await this.run("pause", ["1"]);
  }

  async resume(): Promise<void> {
    await this.run("pause", ["0"]);
  }

  async isPaused(): Promise<boolean> {
    this.shared.check(`redis lane "${this.name}"`);
    try {
      return (await this.shared.client.hget(this.keys.meta, "paused")) === "1";
    } catch (error) {
      throw mapRedisError(`isPaused on lane "${this.name}"`, error);
    }
  }

  async stats(day: string): Promise<DayStats | undefined> {
    this.shared.check(`redis lane "${this.name}"`);
    const match = /^(\d{4})-(\d{2})-(\d{2})$/.exec(day);
    if (!match) throw new ConfigError("day", day, 'must be "YYYY-MM-DD"');
    const n = Date.UTC(Number(match[1]), Number(match[2]) - 1, Number(match[3])) / DAY_MS;
    let values: Array<Buffer | null>;
    try {
      values = await this.shared.client.hmgetBuffer(
        this.keys.stats,
        `${n}:ws`,
        `${n}:rs`,
        `${n}:f`,
        `${n}:r`,
      );
    } catch (error) {
      throw mapRedisError(`stats on lane "${this.name}"`, error);
    }
    if (values.every((v) => v === null)) return undefined;
    const stats = emptyDayStats(day);
    stats.wait = parseSummary(values[0] ?? null);
    stats.run = parseSummary(values[1] ?? null);
    stats.failures = Number(values[2]?.toString() ?? 0);
    stats.retries = Number(values[3]?.toString() ?? 0);
    return stats;
  }

  /** A summary as lua/search.lua writes it (the task, no text; the error without its stack). */
  private summary(json: string): JobSummary {
    const raw = JSON.parse(json) as Omit<JobSummary, "lane" | "error" | "tags"> & {
      error?: string;
      tags?: unknown[] | object;
    };
    const s: JobSummary = {
      id: decodeId(raw.id),
      lane: this.name,
      task: raw.task,
      priority: raw.priority,
      state: raw.state,
      attempt: raw.attempt,
      publishedAt: raw.publishedAt,
      runAt: raw.runAt,
    };
    if (raw.changedAt !== undefined) s.changedAt = raw.changedAt;
    if (raw.finishedAt !== undefined) s.finishedAt = raw.finishedAt;
    const error = raw.error === undefined ? undefined : parseError(raw.error);
    if (error !== undefined)
      s.error = { name: error.name, message: error.message, reason: error.reason };
    // cjson writes an empty table as {}: only an array is a job's tags
    if (Array.isArray(raw.tags)) s.tags = raw.tags.map(String);
    if (raw.expiresAt !== undefined) s.expiresAt = raw.expiresAt;
    return s;
  }

  private info(json: string): JobInfo {
    const raw = JSON.parse(json) as {
      id: string;
      state: JobState;
      text: string;
      priority: number;
      attempt: number;
      publishedAt: number;
      runAt: number;
      finishedAt?: number;
      error?: string;
      result?: string;
      progress?: string;
      logs?: Array<[number, number, string]> | object;
      logsDropped?: number;
      expiresAt?: number;
      changedAt?: number;
      tags?: unknown[] | object;
      group?: string;
      history: Array<{ at: number; event: JobEvent["event"]; detail?: string }> | object;
      flow?: string;
    };
    // A record or text tasklane did not write shows its raw bytes as the payload.
    const parts = parseJobText(raw.text);
    const info: JobInfo = {
      id: decodeId(raw.id),
      lane: this.name,
      task: parts?.task ?? "",
      payload: parts?.payload ?? raw.text,
      priority: raw.priority,
      state: raw.state,
      attempt: raw.attempt,
      publishedAt: raw.publishedAt,
      runAt: raw.runAt,
      history: Array.isArray(raw.history)
        ? raw.history.map((e) => {
            const event: JobEvent = { at: e.at, event: e.event };
            if (e.detail !== undefined) event.detail = e.detail;
            return event;
          })
        : [],
    };
    if (parts?.appData !== undefined) info.appData = parts.appData;
    if (raw.finishedAt !== undefined) info.finishedAt = raw.finishedAt;
    if (raw.result !== undefined) info.result = raw.result;
    if (raw.progress !== undefined) info.progress = raw.progress;
    if (Array.isArray(raw.logs)) {
      info.logs = raw.logs.map(
        ([at, attempt, message]): JobLogLine => ({ at, attempt, message: String(message) }),
      );
    }
    if (raw.logsDropped !== undefined) info.logsDropped = raw.logsDropped;
    if (raw.expiresAt !== undefined) info.expiresAt = raw.expiresAt;
    if (raw.changedAt !== undefined) info.changedAt = raw.changedAt;
    // cjson writes an empty table as {}: only an array is a job's tags
    if (Array.isArray(raw.tags)) info.tags = raw.tags.map(String);
    if (raw.group !== undefined) info.group = raw.group;
    const error = raw.error === undefined ? undefined : parseError(raw.error);
    if (error !== undefined) info.error = error;
    if (raw.flow !== undefined) flowView(info, raw.flow);
    return info;
  }
}

/** A dependency as lua/flow.lua stores it (FLOWS in lua/_common.lua). */
export interface StoredDependency {
  /** lane, id (as given), onFailure, task; its end and result once it ended */
  l: string;
  i: string;
  o: DependencyPolicy;
  t?: string;
  s?: DependencyView["state"];
  r?: string;
}

/** A job's stored flow links (FLOWS in lua/_common.lua) as JobInfo shows them. */
function flowView(info: JobInfo, text: string): void {
  let links: { d?: unknown; p?: unknown };
  try {
    links = JSON.parse(text) as { d?: unknown; p?: unknown };
  } catch {
    return;
  }
  if (Array.isArray(links.d) && links.d.length > 0) {
    info.dependencies = (links.d as StoredDependency[]).map((e) => {
      const view: DependencyView = { lane: e.l, id: e.i, onFailure: e.o };
      if (e.t !== undefined) view.task = e.t;
      if (e.s !== undefined) view.state = e.s;
      if (e.r !== undefined) view.result = e.r;
      return view;
    });
  }
  if (Array.isArray(links.p) && links.p.length > 0) {
    info.dependents = (links.p as Array<{ l: string; i: string }>).map((d) => ({
      lane: d.l,
      jobId: decodeId(d.i),
    }));
  }
}

/** A stored error (JSON of core's JobError); one that does not parse is shown as text. */
function parseError(text: string): JobError | undefined {
  if (text === "") return undefined;
  try {
    return JSON.parse(text) as JobError;
  } catch {
    return { name: "Error", message: text, reason: "malformed" };
  }
}

/** Entries a counting search examines per call (lua/search.lua). */
const SEARCH_COUNT_STEP = 5_000;
/** Most failure groups `failures` returns (lua/failures.lua). */
const MAX_FAILURE_GROUPS = 1_000;

/**
 * lua/search.lua's arguments: mode, state, task, tag, error name, since, until, page size,
 * cursor. A bad state or a cursor that is not one of this search's is a
 * ConfigError before anything is sent.
 */
function searchArgs(
  filter: JobFilter,
  mode: "l" | "c",
  size: number,
  cursor: string | undefined,
): string[] {
  if (typeof filter !== "object" || filter === null) {
    throw new ConfigError("filter", filter, "must be an object");
  }
  let state = "";
  if (filter.state !== undefined) {
    const code = STATE_CODES[filter.state];
    if (code === undefined) {
      throw new ConfigError(
        "filter.state",
        filter.state,
        `must be one of ${Object.keys(STATE_CODES).join(", ")}`,
      );
    }
    state = String(code);
  }
  if (cursor !== undefined && !cursorFits(filter, cursor)) {
    throw new ConfigError("cursor", cursor, "is not a cursor of this lane's listPage");
  }
  const time = (at: number | undefined) => (at === undefined ? "" : String(at));
  return [
    mode,
    state,
    filter.task ?? "",
    filter.tag ?? "",
    filter.errorName ?? "",
    time(filter.since),
    time(filter.until),
    String(size),
    cursor ?? "",
  ];
}

/** Whether a cursor is one search.lua returns for this filter's walk (see there). */
function cursorFits(filter: JobFilter, cursor: string): boolean {
  if (typeof cursor !== "string") return false;
  if (filter.tag !== undefined) return cursor.startsWith("g|");
  if (filter.errorName !== undefined && filter.state === "failed") return cursor.startsWith("h|");
  const match = /^s\|([1-79])\|/.exec(cursor);
  if (match === null) return false;
  const code = filter.state === undefined ? 1 : (STATE_CODES[filter.state] ?? 0);
  return filter.state === undefined ? Number(match[1]) >= code : Number(match[1]) === code;
}

/** A reserve's reply (see lua/reserve.lua), without its due time (see reserveResult). */
function parseReserve(reply: Array<string | number | null>): ReserveResult {
  const jobs: ReservedJob[] = [];
  let token = Number(reply[2]);
  const expiresAt = Number(reply[3]);
  for (let i = RESERVE_HEAD; i + RESERVE_FIELDS <= reply.length; i += RESERVE_FIELDS) {
    const stored = String(reply[i]);
    const id = decodeId(stored);
    const text = String(reply[i + 1] ?? "");
    let malformed = String(reply[i + 6] ?? "");
    const parts = malformed === "" ? parseJobText(text) : undefined;
    if (parts === undefined && malformed === "") malformed = MALFORMED_TEXT;
    const job: ReservedJob = {
      id,
      task: parts?.task ?? "",
      payload: parts?.payload ?? text,
      priority: Number(reply[i + 2]),
      attempt: Number(reply[i + 3]),
      publishedAt: Number(reply[i + 4]),
      readyAt: Number(reply[i + 5]),
      // the k-th job of a reply holds the call's first token + k (see lua/reserve.lua)
      lock: { jobId: id, token: String(token++), expiresAt },
    };
    if (parts?.appData !== undefined) job.appData = parts.appData;
    if (parts?.traceContext !== undefined) job.traceContext = parts.traceContext;
    if (malformed !== "") job.malformed = malformed;
    // A negative attempt marks a suspect (see lua/reserve.lua).
    if (job.attempt < 0) {
      job.attempt = -job.attempt;
      job.suspect = true;
    }
    jobs.push(job);
  }
  return { jobs, ready: Number(reply[0]) };
}

/** Bytes of a stored summary (see lua/_common.lua, Stats): ">ddd" then 6-byte buckets. */
const SUMMARY_LEN = 24;
const BUCKET_BYTES = 6;

export function parseSummary(raw: Buffer | null): Summary {
  if (raw === null || raw.length !== SUMMARY_LEN + BUCKET_BYTES * HISTOGRAM_SIZE) {
    return { count: 0, mean: 0, m2: 0, histogram: {} };
  }
  const histogram: Record<number, number> = {};
  for (let b = 0; b < HISTOGRAM_SIZE; b++) {
    const v = raw.readUIntBE(SUMMARY_LEN + BUCKET_BYTES * b, BUCKET_BYTES);
    if (v !== 0) histogram[b] = v;
  }
  return {
    count: raw.readDoubleBE(0),
    mean: raw.readDoubleBE(8),
    m2: raw.readDoubleBE(16),
    histogram,
  };
}

function statuses(reply: unknown): LockStatus[] {
  return (reply as number[]).map((code) => LOCK_STATUS[code] ?? "lost");
}

function errorOf(error: JobError): JobError {
  const out: JobError = { name: error.name, message: error.message, reason: error.reason };
  if (error.stack !== undefined) out.stack = error.stack;
  return out;
}

/** "sAge,sCount,fAge,fCount,cAge,cCount,eAge,eCount", -1 for "no limit of that kind". */
function retentionSpec(policy: RetentionPolicy | undefined): string {
  const parts: number[] = [];
  for (const state of ["succeeded", "failed", "canceled", "expired"] as const) {
    const p = policy?.[state];
    parts.push(p?.maxAgeMs ?? -1, p?.maxCount ?? -1);
  }
  return parts.join(",");
}

/**
 * Locks as script arguments (ack, release, extend): their ids, then their tokens packed in
 * one argument, 8 bytes (a big-endian double) each: scripts read a token with one
 * struct.unpack instead of parsing its text (see lockIds in lua/_common.lua). A token that
 * is not a number packs as NaN, which matches no lock: "lost", as before.
 */
function lockArgs(locks: readonly Lock[]): Array<string | Buffer> {
  const args: Array<string | Buffer> = [];
  const tokens = Buffer.allocUnsafe(8 * locks.length);
  for (let i = 0; i < locks.length; i++) {
    const lock = locks[i] as Lock;
    args.push(encodeId(lock.jobId));
    tokens.writeDoubleBE(Number(lock.token), 8 * i);
  }
  args.push(tokens);
  return args;
}

/**
 * ack's arguments: the locks (lockArgs), preceded, when any item carries a result, by ""
 * and one result per item ("" for none; see lua/ack.lua). An ack with no results sends
 * exactly what it always did.
 */
function ackArgs(items: readonly AckItem[], logLimit: number): Array<string | number | Buffer> {
  let extras = false;
  for (let i = 0; i < items.length; i++) {
    const item = items[i] as AckItem;
    if (item.result !== undefined || item.report !== undefined) {
      extras = true;
      break;
    }
  }
  const locks = lockArgs(items);
  if (!extras) return locks;
  return [
    "",
    logLimit,
    ...items.map((item) => item.result ?? ""),
    ...items.map((item) => reportArg(item.report)),
    ...locks,
  ];
}

/** A report as the scripts read it (see REPORTS in lua/_common.lua); "" for none. */
function reportArg(report: JobReport | undefined): string {
  if (report === undefined) return "";
  const out: { p?: string; l?: Array<[number, number, string]>; d?: number } = {};
  if (report.progress !== undefined) out.p = report.progress;
  if (report.logs !== undefined && report.logs.length > 0) {
    out.l = report.logs.map((line) => [line.at, line.attempt, line.message]);
  }
  if (report.logsDropped !== undefined && report.logsDropped > 0) out.d = report.logsDropped;
  return JSON.stringify(out);
}

/** put's per-job fields as script arguments ("" = none: now / the script's default). */
const priorityArg = (job: NewJob) => (Number.isFinite(job.priority) ? Math.trunc(job.priority) : 0);
const runAtArg = (job: NewJob) =>
  job.runAt !== undefined && Number.isFinite(job.runAt) ? Math.ceil(job.runAt) : "";
const publishedAtArg = (job: NewJob) =>
  Number.isFinite(job.publishedAt) ? Math.trunc(job.publishedAt) : "";

/**
 * jobsShape's bits: every id is fresh (NewJob.freshId); every job has the first's fields;
 * some job has an expiry.
 */
const ALL_FRESH = 1;
const SHARED_FIELDS = 2;
const HAS_EXTRAS = 4;
/** A job has a debounce key: the call takes layout "5" and the debounce keys. */
const HAS_DEBOUNCE = 8;

/**
 * A job's five arguments in put's layout "5" (lua/put.lua): encoded id, text, priority,
 * runAt, publishedAt. fire.lua takes them as put does; flow.lua takes them plus the job's
 * dependency entries.
 */
function pushJobFields(args: Array<string | number | Buffer>, job: NewJob): void {
  args.push(
    encodeId(job.id),
    encodeJobText(job.task, job.payload, job.appData, job.traceContext),
    priorityArg(job),
    runAtArg(job),
    publishedAtArg(job),
  );
}

/**
 * put's extras argument (flag "x", see lua/put.lua): [index from 1, { e: expiresAt, g:
 * tags, q: fair group, d: [debounce key, until, keep last] }] for each job with any of them.
 */
function extrasArg(jobs: readonly NewJob[]): string {
  type Extra = { e?: number; g?: string[]; q?: string; d?: [string, number, number] };
  const out: Array<[number, Extra]> = [];
  for (let i = 0; i < jobs.length; i++) {
    const job = jobs[i] as NewJob;
    const extra: Extra = {};
    if (job.expiresAt !== undefined && Number.isFinite(job.expiresAt)) {
      extra.e = Math.ceil(job.expiresAt);
    }
    if (job.tags !== undefined && job.tags.length > 0) extra.g = job.tags;
    if (job.group !== undefined) extra.q = job.group;
    const d = job.debounce;
    // one key space per task (see lua/put.lua, DEBOUNCE); keep 1 for "last"
    if (d !== undefined)
      extra.d = [`${job.task}\n${d.key}`, Math.ceil(d.until), d.keep === "last" ? 1 : 0];
    if (
      extra.e !== undefined ||
      extra.g !== undefined ||
      extra.q !== undefined ||
      extra.d !== undefined
    ) {
      out.push([i + 1, extra]);
    }
  }
  return JSON.stringify(out);
}

/**
 * What put needs to know of its jobs, in one indexed pass (no callback per job: a
 * 1,000-job publishMany made 2,000 calls through two `every`s). SHARED_FIELDS: every job
 * has the first's priority, runAt and publishedAt. Nothing follows the loop but the
 * return (see packInto in put-batch.ts for why).
 */
function jobsShape(jobs: readonly NewJob[]): number {
  const first = jobs[0] as NewJob;
  let shape = ALL_FRESH | SHARED_FIELDS;
  for (let i = 0; i < jobs.length; i++) {
    const job = jobs[i] as NewJob;
    if (job.freshId !== true) shape &= ~ALL_FRESH;
    if (job.expiresAt !== undefined || job.tags !== undefined || job.group !== undefined) {
      shape |= HAS_EXTRAS;
    }
    // layout "5" (see lua/put.lua): the general loop, which debounces
    if (job.debounce !== undefined) shape = (shape | HAS_EXTRAS | HAS_DEBOUNCE) & ~SHARED_FIELDS;
    if (
      job.priority !== first.priority ||
      job.runAt !== first.runAt ||
      job.publishedAt !== first.publishedAt
    ) {
      shape &= ~SHARED_FIELDS;
    }
  }
  return shape;
}

/** A stored schedule's text ("<revision>\n<nextAt>\n<data>", lua/_common.lua) as a record. */
function scheduleRecord(id: string, text: string): ScheduleRecord | undefined {
  const a = text.indexOf("\n");
  const b = a < 0 ? -1 : text.indexOf("\n", a + 1);
  if (b < 0) return undefined;
  const nextAt = text.slice(a + 1, b);
  return {
    id,
    revision: Number(text.slice(0, a)),
    nextAt: nextAt === "" ? null : Number(nextAt),
    data: text.slice(b + 1),
  };
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

/** ARGV[4]'s groups part: "" for a lane without groups (see FAIR GROUPS in lua/_common.lua). */
function groupsArg(groups: LaneStoreOptions["groups"]): string {
  if (groups === undefined) return "";
  const rate = groups.rateLimit;
  const window = rate === undefined ? "" : `r${rate.max}/${rate.durationMs}`;
  return `g${groups.concurrency ?? 0}${window}`;
}
