/**
 * The model-based suite: random sequences of LaneStore calls (fast-check `commands`), each
 * answer compared with a reference model of the contract (lane-model.ts), and invariants
 * checked after every command: counts equal the model's and sum to the jobs it knows,
 * every job is listed in exactly one state, no job is handed out while another lock on it
 * is live.
 *
 *   runModelSuite({ name: "memory", createAdapter, advance, now });   // manual clock
 *   runModelSuite({ name: "redis", createAdapter });                  // real time
 *
 * Time. With `advance` (a manual clock) the commands include moving time, and every lease
 * length, delay and due time is exact, so due-time ties, delayed jobs falling due and
 * leases running out mid-sequence are all checked. Without it (a real backend) time cannot
 * be moved, and answers must not depend on when exactly a call lands: leases are either
 * long (an hour: never expire during a run) or tiny (2 ms, and the run waits 10 ms after
 * the call that set one, so it has surely run out before the next command); delays are
 * either in the past (before the run began) or an hour ahead; and consecutive commands
 * are at least a millisecond apart, so due times taken from "now" keep their order.
 * That still covers expiry, stalls and fencing of expired locks, at the cost of delayed
 * jobs falling due mid-run, which only the manual clock exercises.
 *
 * A failure is reported by fast-check with the shrunk command sequence (each command
 * printed with the locks and ids it resolved to), the seed and the replay path:
 * TASKLANE_MODEL_SEED and TASKLANE_MODEL_PATH replay it; TASKLANE_MODEL_RUNS sets the
 * number of runs.
 */
import type {
  Adapter,
  JobInfo,
  JobState,
  LaneStore,
  LaneStoreOptions,
  Lock,
  LockStatus,
  NackItem,
} from "@tasklane/core/adapter";
import * as fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { method, need } from "./harness.ts";
import { LaneModel, type ModelLock } from "./lane-model.ts";

/**
 * Defects of an adapter that are known and being fixed elsewhere. The random runs leave
 * out the command patterns that trigger each one, and its regression case (a fixed
 * command sequence, run for every adapter) is marked as expected to fail.
 */
export type KnownDefect =
  /** A lock given twice in one ack/nack/release batch is applied twice. */
  | "duplicate-lock-in-batch"
  /** cancel, delete and retryFailed act before their call's maintenance (expired leases). */
  | "management-before-maintenance"
  /** Priority-0 jobs are handed out in insertion order instead of due time, then put order. */
  | "priority-0-order"
  /** A job put with a runAt in the past is due from its put time instead of its runAt. */
  | "put-past-run-at"
  /** get reports a job as it was before the call's maintenance (an expired lease: "active"). */
  | "get-before-maintenance";

export interface ModelSuiteOptions {
  /** Title of the describe block, e.g. "redis". */
  name: string;
  createAdapter(): Promise<Adapter>;
  /** Move the adapter's (manual) clock forward; omit for real backends. */
  advance?(ms: number): Promise<void>;
  /** The adapter's clock, epoch ms (with `advance`). Default Date.now. */
  now?(): number;
  /** Random sequences to run. Default 1,000 on a manual clock, 100 in real time. */
  runs?: number;
  /** Most commands in one sequence. Default 30. */
  maxCommands?: number;
  /** See KnownDefect. Default none. */
  knownDefects?: readonly KnownDefect[];
  /** Per test, ms. Default 120_000. */
  timeoutMs?: number;
}

// ── time ─────────────────────────────────────────────────────────────────────────────────

interface Timing {
  manual: boolean;
  now(): number;
  advance(ms: number): Promise<void>;
  /** When the current run began (real time: "past" due times are before it). */
  runStart: number;
  leaseMs(kind: LeaseKind): number;
  runAt(kind: RunAtKind, now: number): number | undefined;
}

type LeaseKind = "short" | "long";
type RunAtKind = "none" | "past" | "now" | "soon" | "later";

const TINY_LEASE_MS = 2;
const TINY_LEASE_WAIT_MS = 10;
const HOUR_MS = 3_600_000;

function timing(options: ModelSuiteOptions): Timing {
  const manual = options.advance !== undefined;
  const t: Timing = {
    manual,
    now: options.now ?? (() => Date.now()),
    advance: async (ms) => {
      await options.advance?.(ms);
    },
    runStart: 0,
    leaseMs: (kind) =>
      manual ? (kind === "short" ? 1_000 : 3_000) : kind === "short" ? TINY_LEASE_MS : HOUR_MS,
    runAt: (kind, now) => {
      if (kind === "none") return undefined;
      if (manual) {
        return now + { past: -1_000, now: 0, soon: 500, later: 2_000 }[kind];
      }
      // Real time: only times no call can land near.
      if (kind === "past") return t.runStart - 1_000;
      return now + HOUR_MS;
    },
  };
  return t;
}

// ── the state a run carries ─────────────────────────────────────────────────────────────

const IDS = ["j0", "j1", "j2", "j3", "j4", "j5"];
const STATES: readonly JobState[] = LaneModel.states;

interface RunState {
  model: LaneModel;
  time: Timing;
  caps: Adapter["capabilities"];
  avoid: ReadonlySet<KnownDefect>;
  /**
   * Time passed a lease's end or a due time since the last call that runs maintenance:
   * the next call meets jobs not yet reclaimed or promoted.
   */
  unmaintained: boolean;
  payloads: number;
  /** What each command of this run did, for the failure report. */
  log: string[];
  config: RunConfig;
}

interface Real {
  lane: LaneStore;
}

type Cmd = fc.AsyncCommand<RunState, Real>;

/** Base of every command: the description printed in a counterexample. */
abstract class Command implements Cmd {
  /** The command as generated (fast-check prints it in the counterexample). */
  protected spec = "";
  /** What it resolved to in this run (locks, ids, answers), for the run's log. */
  protected text = "";
  abstract check(m: Readonly<RunState>): boolean;
  abstract exec(m: RunState, r: Real, now: number): Promise<void>;
  /** Whether the command ends with a lease that runs out before the next one (real time). */
  protected tinyLease = false;
  /** Whether this call runs the adapter's maintenance (every call but management ones). */
  protected maintains = true;

  async run(m: RunState, r: Real): Promise<void> {
    const time = m.time;
    if (!time.manual) await sleep(1); // consecutive commands a millisecond apart at least
    const now = time.now();
    this.tinyLease = false;
    this.text = this.spec;
    m.model.maintain(now);
    try {
      await this.exec(m, r, now);
      m.log.push(this.text);
      if (this.maintains) m.unmaintained = false;
      if (!time.manual && this.tinyLease) {
        // Let the tiny lease run out; checking now could race its end.
        await sleep(TINY_LEASE_WAIT_MS);
        m.unmaintained = true;
        return;
      }
      if (this instanceof Advance) return;
      await checkInvariants(m, r);
    } catch (error) {
      // The counterexample fast-check prints names the commands as generated; this adds
      // what they resolved to (locks, ids, answers) in the failing run itself.
      if (error instanceof Error && !error.message.includes("\nThe run:")) {
        if (m.log.at(-1) !== this.text) m.log.push(`${this.text}  <- failed here`);
        else m.log.push("(the invariant check after it failed)");
        error.message = `${error.message}\nThe run: ${JSON.stringify(m.config)}\n  ${m.log.join("\n  ")}`;
      }
      throw error;
    }
  }

  toString(): string {
    return this.spec;
  }
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** The invariants that hold after every command. */
async function checkInvariants(m: RunState, r: Real): Promise<void> {
  const now = m.time.now();
  m.model.maintain(now);
  const counts = await r.lane.counts();
  // An adapter without capability `expiry` (`flows`) may leave `expired` (`blocked`) out
  // of its counts.
  expect(
    { ...counts, expired: counts.expired ?? 0, blocked: counts.blocked ?? 0 },
    "counts() after the command",
  ).toEqual(m.model.counts());
  const total = Object.values(counts).reduce((a, b) => a + b, 0);
  expect(total, "counts sum to the jobs the model knows").toBe(m.model.jobs.size);
  expect(await r.lane.probe(), "probe() after the command").toBe(m.model.takeable());
  if (!m.caps.list) return;
  const list = method(r.lane, "list");
  const seen = new Map<string, JobState[]>();
  for (const state of STATES) {
    const ids: string[] = [];
    for await (const info of list({ state, pageSize: 3 })) {
      ids.push(info.id);
      seen.set(info.id, [...(seen.get(info.id) ?? []), state]);
    }
    expect(ids.sort(), `list({ state: "${state}" })`).toEqual(m.model.idsIn(state));
  }
  const twice = [...seen].filter(([, states]) => states.length !== 1);
  expect(twice, "jobs listed in more than one state").toEqual([]);
  expect([...seen.keys()].sort(), "every job listed once").toEqual([...m.model.jobs.keys()].sort());
}

// ── locks ────────────────────────────────────────────────────────────────────────────────

type PickKind = "any" | "live" | "foreign" | "bogus" | "unknown";
interface LockPick {
  kind: PickKind;
  n: number;
}

const lockPickArb: fc.Arbitrary<LockPick> = fc.record({
  kind: fc.constantFrom<PickKind>(
    "live",
    "live",
    "live",
    "any",
    "any",
    "foreign",
    "bogus",
    "unknown",
  ),
  n: fc.nat(50),
});

/** A lock for the batch, and how to print it. */
function resolve(m: RunState, pick: LockPick, now: number): { lock: Lock; label: string } {
  const all = m.model.locks;
  const asLock = (l: ModelLock) => ({ jobId: l.jobId, token: l.token, expiresAt: l.expiresAt });
  if (pick.kind === "unknown" || all.length === 0) {
    return {
      lock: { jobId: "ghost", token: "1", expiresAt: now + HOUR_MS },
      label: "unknown(ghost)",
    };
  }
  const any = all[pick.n % all.length] as ModelLock;
  if (pick.kind === "live") {
    const live = all.filter((l) => m.model.lockStatus(l, now) === "ok");
    const l = live.length > 0 ? (live[pick.n % live.length] as ModelLock) : any;
    return { lock: asLock(l), label: `${live.length > 0 ? "live" : "held"}(${l.label})` };
  }
  if (pick.kind === "any") {
    const state = m.model.lockStatus(any, now) === "ok" ? "live" : "stale";
    return { lock: asLock(any), label: `${state}(${any.label})` };
  }
  if (pick.kind === "foreign") {
    for (let i = 1; i < all.length; i++) {
      const other = all[(pick.n + i) % all.length] as ModelLock;
      if (other.jobId !== any.jobId) {
        return {
          lock: { ...asLock(any), token: other.token },
          label: `foreign(${any.jobId} with the token of ${other.label})`,
        };
      }
    }
  }
  return {
    lock: { ...asLock(any), token: "1234567890123" },
    label: `bogus(${any.jobId} with a made-up token)`,
  };
}

/** Resolve a batch; `dup` repeats its first lock at the end (a duplicate in one batch). */
function resolveBatch(
  m: RunState,
  picks: LockPick[],
  dup: boolean,
  now: number,
  settles: boolean,
): Array<{ lock: Lock; label: string }> {
  const batch = picks.map((p) => resolve(m, p, now));
  if (dup && batch[0]) batch.push(batch[0]);
  if (settles && m.avoid.has("duplicate-lock-in-batch")) {
    const seen = new Set<string>();
    return batch.filter(({ lock }) => {
      const key = `${lock.jobId}\u0000${lock.token}`;
      if (seen.has(key)) return false;
      seen.add(key);
      return true;
    });
  }
  return batch;
}

const pickText = (picks: LockPick[]) => picks.map((p) => `${p.kind}:${p.n}`).join(", ");
const labels = (batch: Array<{ label: string }>) => batch.map((b) => b.label).join(", ");

// ── commands ─────────────────────────────────────────────────────────────────────────────

interface PutItem {
  id: number;
  priority: number;
  runAt: RunAtKind;
}

class Put extends Command {
  readonly items: PutItem[];
  constructor(items: PutItem[]) {
    super();
    this.items = items;
    this.spec = `put(${items.map((i) => `${IDS[i.id]} p${i.priority} runAt:${i.runAt}`).join(", ")})`;
  }
  check(): boolean {
    return true;
  }
  async exec(m: RunState, r: Real, now: number): Promise<void> {
    const jobs = this.items.map((item) => {
      // Known defect: a past runAt counts as the put time; put those due now instead.
      const kind = item.runAt === "past" && m.avoid.has("put-past-run-at") ? "none" : item.runAt;
      const runAt = m.time.runAt(kind, now);
      // Known defect: Redis orders priority-0 jobs by insertion; leave 0 out while it stands.
      const priority = item.priority === 0 && m.avoid.has("priority-0-order") ? 1 : item.priority;
      return {
        id: IDS[item.id] as string,
        payload: JSON.stringify(`payload ${++m.payloads}`),
        priority,
        ...(runAt === undefined ? {} : { runAt }),
      };
    });
    this.text = `put(${jobs.map((j) => `${j.id} p${j.priority} runAt:${j.runAt === undefined ? "none" : j.runAt - now}`).join(", ")})`;
    const actual = await r.lane.put(jobs.map((j) => ({ ...j, task: "model", publishedAt: now })));
    const expected = m.model.put(jobs, now, true);
    expect(
      actual.map((a) => [a.id, a.status]),
      this.text,
    ).toEqual(jobs.map((j, i) => [j.id, expected[i]]));
  }
}

class Reserve extends Command {
  readonly limit: number;
  readonly lease: LeaseKind;
  /** ReserveOptions.startNow; undefined: absent (every job starts at once). */
  readonly startNow: number | undefined;
  constructor(limit: number, lease: LeaseKind, startNow?: number) {
    super();
    this.limit = limit;
    this.lease = lease;
    this.startNow = startNow;
    this.spec = `reserve(limit ${limit}, ${lease} lease${startNow === undefined ? "" : `, startNow ${startNow}`})`;
  }
  check(): boolean {
    return true;
  }
  async exec(m: RunState, r: Real, now: number): Promise<void> {
    const leaseMs = m.time.leaseMs(this.lease);
    const expected = m.model.toTake(this.limit);
    // Without the capability the option is ignored: every job counts as started.
    const startNow = m.caps.startNow ? this.startNow : undefined;
    const result = await r.lane.reserve({
      limit: this.limit,
      leaseMs,
      waitMs: 0,
      ...(this.startNow === undefined ? {} : { startNow: this.startNow }),
    });
    const got = result.jobs.map((j) => ({
      id: j.id,
      attempt: j.attempt,
      ...(m.caps.suspects ? { suspect: j.suspect === true } : {}),
      priority: j.priority,
      payload: j.payload,
      lockJob: j.lock.jobId,
      ...(m.time.manual ? { readyAt: j.readyAt, expiresAt: j.lock.expiresAt } : {}),
    }));
    this.text = `${this.spec} -> [${got.map((g) => `${g.id}#${g.attempt}`).join(", ")}]`;
    expect(got, this.text).toEqual(
      expected.map((j) => ({
        id: j.id,
        attempt: j.attempt + 1,
        ...(m.caps.suspects ? { suspect: LaneModel.suspect(j) } : {}),
        priority: j.priority,
        payload: j.payload,
        lockJob: j.id,
        ...(m.time.manual ? { readyAt: j.dueAt, expiresAt: now + leaseMs } : {}),
      })),
    );
    // No job handed out while another lock on it is live.
    for (const j of result.jobs) {
      const live = m.model.locks.filter(
        (l) => l.jobId === j.id && m.model.lockStatus(l, now) === "ok",
      );
      expect(
        live.map((l) => l.label),
        `${j.id} handed out while a lock on it is live`,
      ).toEqual([]);
    }
    result.jobs.forEach((j, i) => {
      const prefetched = startNow !== undefined && i >= startNow;
      m.model.take(
        expected[i] as (typeof expected)[number],
        j.lock.token,
        j.lock.expiresAt,
        prefetched,
      );
    });
    if (result.ready !== undefined) {
      expect(result.ready, `${this.text}: ready`).toBe(m.model.takeable());
    }
    if (this.lease === "short" && result.jobs.length > 0) this.tinyLease = true;
  }
}

type Settle = "ack" | "release";

class Settles extends Command {
  readonly kind: Settle;
  readonly picks: LockPick[];
  readonly dup: boolean;
  constructor(kind: Settle, picks: LockPick[], dup: boolean) {
    super();
    this.kind = kind;
    this.picks = picks;
    this.dup = dup;
    this.spec = `${kind}(${pickText(picks)}${dup ? ", first again" : ""})`;
  }
  check(): boolean {
    return true;
  }
  async exec(m: RunState, r: Real, now: number): Promise<void> {
    const batch = resolveBatch(m, this.picks, this.dup, now, true);
    this.text = `${this.kind}([${labels(batch)}])`;
    const locks = batch.map((b) => b.lock);
    const actual =
      this.kind === "ack"
        ? await r.lane.ack(locks)
        : await r.lane.release(locks.map((lock) => ({ lock, uncounted: true as const })));
    const expected = locks.map((lock) =>
      this.kind === "ack" ? m.model.ack(lock, now) : m.model.release(lock, now),
    );
    expect(actual, this.text).toEqual(expected);
  }
}

type NackOutcome = "dead" | RunAtKind;

class Nack extends Command {
  readonly items: Array<{ pick: LockPick; outcome: NackOutcome }>;
  readonly dup: boolean;
  constructor(items: Array<{ pick: LockPick; outcome: NackOutcome }>, dup: boolean) {
    super();
    this.items = items;
    this.dup = dup;
    this.spec = `nack(${items.map((i) => `${pickText([i.pick])} ${i.outcome}`).join(", ")}${dup ? ", first again" : ""})`;
  }
  check(): boolean {
    return true;
  }
  async exec(m: RunState, r: Real, now: number): Promise<void> {
    const batch = resolveBatch(
      m,
      this.items.map((i) => i.pick),
      this.dup,
      now,
      true,
    );
    const outcomes = batch.map((_, i) => this.items[i % this.items.length]?.outcome ?? "dead");
    let k = 0;
    const items: NackItem[] = batch.map(({ lock }, i) => {
      const outcome = outcomes[i] as NackOutcome;
      const error = { name: "Error", message: `boom ${++k}`, reason: "error" as const };
      if (outcome === "dead") return { lock, dead: true, error };
      // "none" and real time's "now" (which could tie with a put) are due at once, exactly.
      const runAt =
        m.time.runAt(
          outcome === "none" || (!m.time.manual && outcome === "now") ? "past" : outcome,
          now,
        ) ?? now;
      return { lock, runAt, error };
    });
    this.text = `nack([${batch.map((b, i) => `${b.label} ${outcomes[i]}`).join(", ")}])`;
    const actual = await r.lane.nack(items);
    const expected = items.map((item) => {
      const error = {
        name: item.error.name,
        reason: item.error.reason,
        message: item.error.message,
      };
      return "dead" in item
        ? m.model.nack(item.lock, now, { dead: true, error })
        : m.model.nack(item.lock, now, { runAt: item.runAt, error });
    });
    expect(actual, this.text).toEqual(expected);
  }
}

class Extend extends Command {
  readonly picks: LockPick[];
  readonly dup: boolean;
  readonly lease: LeaseKind;
  constructor(picks: LockPick[], dup: boolean, lease: LeaseKind) {
    super();
    this.picks = picks;
    this.dup = dup;
    this.lease = lease;
    this.spec = `extend(${pickText(picks)}${dup ? ", first again" : ""}; ${lease} lease)`;
  }
  check(): boolean {
    return true;
  }
  async exec(m: RunState, r: Real, now: number): Promise<void> {
    const batch = resolveBatch(m, this.picks, this.dup, now, false);
    const leaseMs = m.time.leaseMs(this.lease);
    this.text = `extend([${labels(batch)}], ${this.lease} lease)`;
    const actual = await r.lane.extend(
      batch.map((b) => b.lock),
      leaseMs,
    );
    // A lock named twice in one call is answered for its first use: "lost" after an "ok".
    const extended = new Set<string>();
    const expected: LockStatus[] = batch.map((b) => {
      const key = `${b.lock.jobId}\u0000${b.lock.token}`;
      if (extended.has(key)) return "lost";
      const status = m.model.extend(b.lock, now, leaseMs);
      if (status === "ok") extended.add(key);
      return status;
    });
    expect(actual, this.text).toEqual(expected);
    if (this.lease === "short" && expected.includes("ok")) this.tinyLease = true;
  }
}

/** cancel, delete, retryFailed: management calls by id. */
class Manage extends Command {
  readonly kind: "cancel" | "delete" | "retryFailed";
  readonly ids: number[] | undefined;
  constructor(kind: "cancel" | "delete" | "retryFailed", ids: number[] | undefined) {
    super();
    this.kind = kind;
    this.ids = ids;
    this.maintains = true;
    this.spec = `${kind}(${ids === undefined ? "all" : ids.map((i) => IDS[i]).join(", ")})`;
  }
  check(m: Readonly<RunState>): boolean {
    if (!m.caps[this.kind]) return false;
    // Known defect: these act before their call's maintenance; keep them off unmaintained state.
    if (m.unmaintained && m.avoid.has("management-before-maintenance")) return false;
    return true;
  }
  async exec(m: RunState, r: Real, now: number): Promise<void> {
    const ids = this.ids?.map((i) => IDS[i] as string);
    if (this.kind === "cancel") {
      const list = ids ?? [];
      if (!m.caps.cancelActive && list.some((id) => m.model.jobs.get(id)?.state === "active")) {
        this.text = `cancel(${list.join(", ")}) skipped: an active job, no cancelActive`;
        return;
      }
      const actual = await method(r.lane, "cancel")(list);
      expect(actual, this.text).toEqual(list.map((id) => m.model.cancel(id)));
    } else if (this.kind === "delete") {
      const list = ids ?? [];
      const actual = await method(r.lane, "delete")(list);
      expect(actual, this.text).toBe(m.model.delete(list));
    } else {
      const actual = await method(r.lane, "retryFailed")(ids);
      expect(actual, this.text).toBe(m.model.retryFailed(ids, now));
    }
  }
}

class Pause extends Command {
  readonly resume: boolean;
  constructor(resume: boolean) {
    super();
    this.resume = resume;
    this.spec = resume ? "resume()" : "pause()";
  }
  check(m: Readonly<RunState>): boolean {
    return m.caps.pause;
  }
  async exec(m: RunState, r: Real): Promise<void> {
    await method(r.lane, this.resume ? "resume" : "pause")();
    m.model.paused = !this.resume;
    expect(await method(r.lane, "isPaused")(), "isPaused()").toBe(m.model.paused);
  }
}

class Get extends Command {
  readonly id: number;
  constructor(id: number) {
    super();
    this.id = id;
    this.spec = `get(${IDS[id]})`;
  }
  check(m: Readonly<RunState>): boolean {
    // Known defect: get does not reclaim first; keep it off unmaintained state.
    if (m.unmaintained && m.avoid.has("get-before-maintenance")) return false;
    return m.caps.get;
  }
  async exec(m: RunState, r: Real): Promise<void> {
    const id = IDS[this.id] as string;
    const info = await method(r.lane, "get")(id);
    const job = m.model.jobs.get(id);
    if (job === undefined) {
      expect(info, this.text).toBeUndefined();
      return;
    }
    const shape = (
      i: Pick<JobInfo, "state" | "attempt" | "priority" | "payload" | "runAt" | "error">,
    ) => ({
      state: i.state,
      attempt: i.attempt,
      priority: i.priority,
      payload: i.payload,
      // Due times are exact only on a manual clock, and the contract defines them for
      // pending jobs only.
      ...(m.time.manual && (i.state === "waiting" || i.state === "delayed")
        ? { runAt: i.runAt }
        : {}),
      ...(i.state === "failed" && i.error
        ? {
            error: {
              name: i.error.name,
              reason: i.error.reason,
              ...(i.error.reason === "stalled" ? {} : { message: i.error.message }),
            },
          }
        : {}),
    });
    expect(info && shape(info), this.text).toEqual(
      shape({
        state: job.state,
        attempt: job.attempt,
        priority: job.priority,
        payload: job.payload,
        runAt: job.dueAt,
        ...(job.error
          ? { error: { message: "", ...job.error, reason: job.error.reason as never } }
          : {}),
      }),
    );
  }
}

class Advance extends Command {
  readonly ms: number;
  constructor(ms: number) {
    super();
    this.ms = ms;
    this.spec = `advance(${ms} ms)`;
    this.maintains = false;
  }
  check(m: Readonly<RunState>): boolean {
    return m.time.manual;
  }
  async exec(m: RunState): Promise<void> {
    await m.time.advance(this.ms);
    m.unmaintained = true;
  }
}

// ── arbitraries ──────────────────────────────────────────────────────────────────────────

const idArb = fc.nat(IDS.length - 1);
const runAtArb = fc.constantFrom<RunAtKind>("none", "none", "none", "past", "now", "soon", "later");
const batchArb = fc.array(lockPickArb, { minLength: 1, maxLength: 3 });

function commandArbs(): Array<fc.Arbitrary<Cmd>> {
  return [
    fc
      .array(
        fc.record({ id: idArb, priority: fc.constantFrom(0, 0, 0, 1, 5, -1), runAt: runAtArb }),
        { minLength: 1, maxLength: 3 },
      )
      .map((items) => new Put(items)),
    fc
      .tuple(
        fc.integer({ min: 1, max: 4 }),
        fc.constantFrom<LeaseKind>("long", "long", "short"),
        fc.option(fc.integer({ min: 0, max: 4 }), { nil: undefined }),
      )
      .map(([limit, lease, startNow]) => new Reserve(limit, lease, startNow)),
    fc.tuple(batchArb, fc.boolean()).map(([picks, dup]) => new Settles("ack", picks, dup)),
    fc.tuple(batchArb, fc.boolean()).map(([picks, dup]) => new Settles("release", picks, dup)),
    fc
      .tuple(
        fc.array(
          fc.record({
            pick: lockPickArb,
            outcome: fc.constantFrom<NackOutcome>(
              "dead",
              "dead",
              "none",
              "past",
              "now",
              "soon",
              "later",
            ),
          }),
          { minLength: 1, maxLength: 3 },
        ),
        fc.boolean(),
      )
      .map(([items, dup]) => new Nack(items, dup)),
    fc
      .tuple(batchArb, fc.boolean(), fc.constantFrom<LeaseKind>("long", "short"))
      .map(([picks, dup, lease]) => new Extend(picks, dup, lease)),
    fc.array(idArb, { minLength: 1, maxLength: 3 }).map((ids) => new Manage("cancel", ids)),
    fc.array(idArb, { minLength: 1, maxLength: 3 }).map((ids) => new Manage("delete", ids)),
    fc
      .option(fc.array(idArb, { minLength: 1, maxLength: 3 }), { nil: undefined })
      .map((ids) => new Manage("retryFailed", ids)),
    fc.boolean().map((resume) => new Pause(resume)),
    idArb.map((id) => new Get(id)),
    fc.constantFrom(1, 500, 1_000, 2_000).map((ms) => new Advance(ms)),
  ];
}

interface RunConfig {
  maxStalls: number;
  historyLimit: number;
  maxConcurrency: number | undefined;
}

const configArb: fc.Arbitrary<RunConfig> = fc.record({
  maxStalls: fc.integer({ min: 0, max: 2 }),
  historyLimit: fc.constantFrom(0, 5),
  maxConcurrency: fc.option(fc.integer({ min: 1, max: 3 }), { nil: undefined }),
});

// ── the suite ────────────────────────────────────────────────────────────────────────────

/** Regression cases: fixed sequences that once exposed a defect, run on every adapter. */
const REGRESSIONS: Array<{
  /** The known defect it shows, if an adapter may list it as one. */
  defect?: KnownDefect;
  title: string;
  config: RunConfig;
  commands: () => Cmd[];
}> = [
  {
    defect: "duplicate-lock-in-batch",
    title: "a lock twice in one release batch is applied once",
    config: { maxStalls: 1, historyLimit: 5, maxConcurrency: undefined },
    commands: () => [
      new Put([{ id: 0, priority: 0, runAt: "none" }]),
      new Reserve(1, "long"),
      new Settles("release", [{ kind: "live", n: 0 }], true),
      new Reserve(1, "long"),
    ],
  },
  {
    title: "a lock twice in one ack batch is applied once",
    config: { maxStalls: 1, historyLimit: 0, maxConcurrency: undefined },
    commands: () => [
      new Put([{ id: 0, priority: 0, runAt: "none" }]),
      new Reserve(1, "long"),
      new Settles("ack", [{ kind: "live", n: 0 }], true),
    ],
  },
  {
    title: "cancel meets an expired lease only after the call's maintenance reclaimed it",
    config: { maxStalls: 0, historyLimit: 5, maxConcurrency: undefined },
    commands: () => [
      new Put([{ id: 0, priority: 0, runAt: "none" }]),
      new Reserve(1, "short"),
      new Advance(1_000),
      new Manage("cancel", [0]),
      new Settles("ack", [{ kind: "any", n: 0 }], false),
    ],
  },
  {
    defect: "management-before-maintenance",
    title: "delete meets an expired lease only after the call's maintenance reclaimed it",
    config: { maxStalls: 0, historyLimit: 0, maxConcurrency: undefined },
    commands: () => [
      new Put([{ id: 0, priority: 0, runAt: "none" }]),
      new Reserve(1, "short"),
      new Advance(1_000),
      new Manage("delete", [0]),
    ],
  },
  {
    defect: "management-before-maintenance",
    title: "retryFailed meets an expired lease only after the call's maintenance reclaimed it",
    config: { maxStalls: 0, historyLimit: 0, maxConcurrency: undefined },
    commands: () => [
      new Put([{ id: 0, priority: 0, runAt: "none" }]),
      new Reserve(1, "short"),
      new Advance(1_000),
      new Manage("retryFailed", undefined),
    ],
  },
  {
    defect: "get-before-maintenance",
    title: "get reports a job whose lease ran out as reclaimed",
    config: { maxStalls: 0, historyLimit: 0, maxConcurrency: undefined },
    commands: () => [
      new Put([{ id: 0, priority: 1, runAt: "none" }]),
      new Reserve(1, "short"),
      new Advance(1_000),
      new Get(0),
    ],
  },
  {
    defect: "priority-0-order",
    title: "priority-0 jobs come out by due time, then put order",
    config: { maxStalls: 1, historyLimit: 5, maxConcurrency: undefined },
    commands: () => [
      new Put([{ id: 0, priority: 0, runAt: "none" }]),
      new Put([{ id: 1, priority: 0, runAt: "none" }]),
      new Reserve(1, "long"),
      new Nack([{ pick: { kind: "live", n: 0 }, outcome: "past" }], false),
      new Reserve(2, "long"),
    ],
  },
  {
    defect: "put-past-run-at",
    title: "a job put with a past runAt is due from that runAt",
    config: { maxStalls: 1, historyLimit: 5, maxConcurrency: undefined },
    commands: () => [
      new Put([{ id: 0, priority: 1, runAt: "none" }]),
      new Put([{ id: 1, priority: 1, runAt: "past" }]),
      new Reserve(2, "long"),
    ],
  },
];

export function runModelSuite(options: ModelSuiteOptions): void {
  const time = timing(options);
  const envRuns = Number(process.env.TASKLANE_MODEL_RUNS);
  const runs = envRuns > 0 ? envRuns : (options.runs ?? (time.manual ? 1_000 : 100));
  const seed = process.env.TASKLANE_MODEL_SEED
    ? Number(process.env.TASKLANE_MODEL_SEED)
    : undefined;
  const path = process.env.TASKLANE_MODEL_PATH;
  const known = new Set(options.knownDefects ?? []);
  const timeout = options.timeoutMs ?? 120_000;

  describe(`lane model: ${options.name}`, () => {
    const box: { adapter?: Adapter } = {};
    let lanes = 0;
    beforeAll(async () => {
      box.adapter = await options.createAdapter();
    });
    afterAll(async () => {
      await box.adapter?.close();
    });
    const adapter = () => {
      if (!box.adapter) throw new Error("model suite adapter not ready");
      return box.adapter;
    };
    const setup = (config: RunConfig, avoid: ReadonlySet<KnownDefect>) => async () => {
      const a = adapter();
      const laneOptions: LaneStoreOptions = {
        maxStalls: config.maxStalls,
        historyLimit: config.historyLimit,
        ...(config.maxConcurrency !== undefined && a.capabilities.maxConcurrency
          ? { maxConcurrency: config.maxConcurrency }
          : {}),
      };
      const lane = await a.lane(`model-${process.pid}-${++lanes}-${Date.now() % 1e6}`, laneOptions);
      time.runStart = time.now();
      const model: RunState = {
        model: new LaneModel({
          maxStalls: config.maxStalls,
          maxConcurrency: laneOptions.maxConcurrency,
        }),
        time,
        caps: a.capabilities,
        avoid,
        unmaintained: false,
        payloads: 0,
        log: [],
        config,
      };
      return { model, real: { lane } };
    };

    it(
      `random command sequences answer as the model does (${runs} runs${known.size > 0 ? `, avoiding known defects: ${[...known].join(", ")}` : ""})`,
      async (ctx) => {
        need(adapter().capabilities, ctx, "exactCounts", "ordered", "fencing", "dedup", "count");
        await fc.assert(
          fc.asyncProperty(
            configArb,
            fc.commands(commandArbs(), {
              maxCommands: options.maxCommands ?? 30,
              size: "max",
              ...(path ? { replayPath: path } : {}),
            }),
            async (config, cmds) => {
              await fc.asyncModelRun(setup(config, known), cmds);
            },
          ),
          { numRuns: runs, ...(seed === undefined ? {} : { seed }), ...(path ? { path } : {}) },
        );
      },
      timeout,
    );

    for (const regression of REGRESSIONS) {
      const marked = regression.defect !== undefined && known.has(regression.defect);
      const title = `regression: ${regression.title}${marked ? ` (known defect ${regression.defect}: expected to fail until fixed)` : ""}`;
      (marked ? it.fails : it)(
        title,
        async (ctx) => {
          need(adapter().capabilities, ctx, "exactCounts", "ordered", "fencing", "dedup", "count");
          await fc.asyncModelRun(setup(regression.config, new Set()), regression.commands());
        },
        timeout,
      );
    }
  });
}
