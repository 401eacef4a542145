/**
 * The checker, in the terms of Jepsen's total-queue workload, for every job the producer
 * got an acknowledged publish for:
 *
 * - lost: not in a terminal state (succeeded, failed, canceled) at the end, by the store
 *   (or, on SQS, which cannot look a job up: no accepted ack or dead letter in the ledgers
 *   and no ack whose answer was lost while the queue ended empty).
 * - unexpected: a run, or a stored job, of an id the producer never published.
 * - duplicated: its handler ran more than once. Consecutive runs A then B of one job (in
 *   the store's order of deliveries: by attempt, which every delivery raises) are
 *   expected when A's retry nack was accepted (a failed attempt) or A was released
 *   (handed back at shutdown). Otherwise B is a duplicate run, attributed to a fault when
 *   one of these holds, else unattributed:
 *     - an injected fault hit A's worker process (kill, crash, pause, drop, blackhole) or
 *       every process (redis-server kill -9), starting between A's reserve call leaving and
 *       both B's start and the end of A's lease (a fault after A's lease ran out cannot be
 *       why A was re-run; an interval fault counts when it overlaps that window);
 *     - A's ack was accepted and a redis-server kill -9 without fsync on every write
 *       (lossy) came between that ack and B: the ack was lost with the crash;
 *     - observed, not injected: "stall" when the orchestrator (the proxies, fauxqs) could
 *       not run or redis-server did not answer for a third of a lease or more, overlapping
 *       that window; "holder-stall" when A's worker logged an event-loop lag of at least a
 *       heartbeat period (a third of the lease) between taking A and B's start. Machine
 *       load does this; both are reported apart from the injected faults.
 * - doubly acked: more than one ack (or dead-letter nack) accepted for one job, by the
 *   ledgers; or more than one `succeeded` entry in the job's stored history. Also fencing
 *   failures: a settling call accepted although it left after the lease it names had
 *   ended, or after a newer reservation of the job had been handed out.
 * - not exactly one terminal state: a job found in two states, or still pending (waiting,
 *   delayed, active) after the drain.
 */
import type { JobState, LaneCounts } from "@tasklane/core";
import { type Fault, hits } from "./faults.ts";
import {
  type LedgerFacts,
  outcomeOf,
  type Reservation,
  type SettleCall,
  startedRuns,
  startedStale,
} from "./runs.ts";

export type Attribution =
  | "kill"
  | "crash"
  | "pause"
  | "drop"
  | "blackhole"
  | "redis-kill"
  | "lost-write"
  | "stall"
  | "holder-stall";

export const INJECTED: ReadonlySet<Attribution> = new Set<Attribution>([
  "kill",
  "crash",
  "pause",
  "drop",
  "blackhole",
  "redis-kill",
  "lost-write",
]);

/** One job's final state as the store reports it. */
export interface StoredJob {
  /** Every state the job was listed in (exactly one is expected). */
  states: JobState[];
  attempt: number;
  /** `succeeded` entries in its history (more than one: two acks were applied). */
  succeededInHistory: number;
  /** Why it is dead, for a failed job. */
  reason?: string;
}

export type StoreState =
  | { kind: "jobs"; jobs: Map<string, StoredJob> }
  /**
   * SQS: per-job state is unknowable; the lanes' counts at the end, and the dead letters
   * read from the dead-letter queue (job id → reason), which include jobs the adapter
   * dead-lettered itself (stalled too often) that no ledger shows.
   */
  | { kind: "counts"; counts: LaneCounts; deadLetters?: ReadonlyMap<string, string> };

export interface CheckInput {
  /** Every id the producer tried to publish. */
  attempted: ReadonlySet<string>;
  /** The ids whose publish was acknowledged. */
  acked: ReadonlySet<string>;
  facts: LedgerFacts;
  faults: readonly Fault[];
  store: StoreState;
  leaseMs: number;
}

export interface DuplicateRun {
  id: string;
  /** The earlier run's worker process, and when it was reserved and started. */
  prevPid: number;
  prevAt: number;
  prevLeaseEnd: number;
  /** The duplicate's start. */
  startedAt: number;
  pid: number;
  attribution: Attribution | "unattributed";
}

export interface FencingFailure {
  id: string;
  pid: number;
  kind: string;
  why: "late" | "superseded";
  sentAt: number;
}

export interface CheckResult {
  attempted: number;
  acked: number;
  /** Acked jobs in a terminal state in the store (SQS: accepted ack or dead letter in the ledgers). */
  succeeded: number;
  dead: number;
  deadByReason: Record<string, number>;
  lost: string[];
  /** Acked jobs whose stored record vanished although an ack for them was accepted (lost writes). */
  lostAfterSuccess: string[];
  unexpected: string[];
  notExactlyOneTerminal: string[];
  /** SQS: acked jobs counted done on an ack whose answer was lost, the queue ending empty. */
  presumedDone: number;
  /** Handler starts. */
  runs: number;
  /** Handlers started after the lease they held had ended (the worker no longer held the job). */
  staleStarts: number;
  duplicatedJobs: number;
  duplicateRuns: DuplicateRun[];
  byAttribution: Record<string, number>;
  unattributed: DuplicateRun[];
  doublyAcked: string[];
  /** Double acks explained by a lossy redis-server crash between them. */
  doublyAckedAfterLostWrites: string[];
  historyDoubleSucceeded: string[];
  fencingFailures: FencingFailure[];
  /** Late or superseded calls accepted after a lossy crash rolled the job back (explained). */
  fencingAfterLostWrites: number;
  /** Settling calls refused because their lock was no longer the job's (fencing). */
  refused: number;
  /** Of those, calls that left after their lease had ended (they must be refused). */
  lateRefused: number;
  /** Settling calls whose answer never came (an error or a killed process). */
  unknownOutcomes: number;
  tornLines: number;
}

/** Injected faults first; an observed stall only explains what no injected fault does. */
const PREFERENCE: Attribution[] = [
  "kill",
  "crash",
  "redis-kill",
  "pause",
  "blackhole",
  "drop",
  "stall",
];

/** The injected fault that explains re-running `prev` at `nextStart`, if any. */
export function attribute(
  prev: Reservation,
  nextStart: number,
  faults: readonly Fault[],
): Attribution | undefined {
  const from = prev.sentAt;
  const to = Math.min(nextStart, prev.leaseEnd);
  let best: Attribution | undefined;
  for (const f of faults) {
    if (!hits(f, prev.pid)) continue;
    const end = f.until ?? f.at;
    if (f.at > to || end < from) continue;
    const kind = f.kind as Attribution;
    if (best === undefined || PREFERENCE.indexOf(kind) < PREFERENCE.indexOf(best)) best = kind;
  }
  return best;
}

function lostWriteBetween(faults: readonly Fault[], from: number, to: number): boolean {
  return faults.some(
    (f) => f.kind === "redis-kill" && f.lossy === true && f.at >= from && f.at <= to,
  );
}

function holderStalled(
  facts: LedgerFacts,
  prev: Reservation,
  nextStart: number,
  leaseMs: number,
): boolean {
  const lags = facts.lags.get(prev.pid) ?? [];
  const threshold = leaseMs / 3;
  return lags.some(([end, ms]) => ms >= threshold && end >= prev.at && end - ms <= nextStart);
}

export function check(input: CheckInput): CheckResult {
  const { facts, faults, store, leaseMs } = input;
  const result: CheckResult = {
    attempted: input.attempted.size,
    acked: input.acked.size,
    succeeded: 0,
    dead: 0,
    deadByReason: {},
    lost: [],
    lostAfterSuccess: [],
    unexpected: [],
    notExactlyOneTerminal: [],
    presumedDone: 0,
    runs: 0,
    staleStarts: 0,
    duplicatedJobs: 0,
    duplicateRuns: [],
    byAttribution: {},
    unattributed: [],
    doublyAcked: [],
    doublyAckedAfterLostWrites: [],
    historyDoubleSucceeded: [],
    fencingFailures: [],
    fencingAfterLostWrites: 0,
    refused: 0,
    lateRefused: 0,
    unknownOutcomes: 0,
    tornLines: facts.torn,
  };

  for (const [id, reservations] of facts.jobs) {
    if (!input.attempted.has(id)) result.unexpected.push(id);
    const runs = startedRuns(reservations);
    result.runs += runs.length;
    result.staleStarts += runs.filter(startedStale).length;
    let duplicated = false;
    for (let i = 1; i < runs.length; i++) {
      const prev = runs[i - 1] as Reservation;
      const cur = runs[i] as Reservation;
      const start = cur.startedAt ?? cur.at;
      const outcome = outcomeOf(prev);
      if (outcome.retry || outcome.released) continue;
      let attribution: Attribution | "unattributed";
      if (outcome.terminal) {
        attribution = lostWriteBetween(faults, outcome.terminal.sentAt, start)
          ? "lost-write"
          : "unattributed";
      } else {
        attribution =
          attribute(prev, start, faults) ??
          (holderStalled(facts, prev, start, leaseMs) ? "holder-stall" : "unattributed");
      }
      const dup: DuplicateRun = {
        id,
        prevPid: prev.pid,
        prevAt: prev.at,
        prevLeaseEnd: prev.leaseEnd,
        startedAt: start,
        pid: cur.pid,
        attribution,
      };
      duplicated = true;
      result.duplicateRuns.push(dup);
      result.byAttribution[attribution] = (result.byAttribution[attribution] ?? 0) + 1;
      if (attribution === "unattributed") result.unattributed.push(dup);
    }
    if (duplicated) result.duplicatedJobs++;

    // Accepted terminal settles, and fencing.
    const terminals: SettleCall[] = [];
    for (const [i, r] of reservations.entries()) {
      // The first moment a later delivery of the job existed: from then on r's lock is stale.
      const later = reservations.slice(i + 1).map((n) => n.at);
      const supersededAt = later.length === 0 ? undefined : Math.min(...later);
      for (const s of r.settles) {
        if (s.result === undefined || s.result === "error") result.unknownOutcomes++;
        // 1 ms of slack: the lease end is in whole ms on the same clock.
        const late = s.sentAt > r.leaseEnd + 1;
        if (s.result === "ok") {
          if (s.kind === "ack" || s.kind === "dead") terminals.push(s);
          const superseded = supersededAt !== undefined && s.sentAt > supersededAt;
          if ((late || superseded) && lostWriteBetween(faults, r.at, s.sentAt)) {
            result.fencingAfterLostWrites++;
          } else if (late || superseded) {
            result.fencingFailures.push({
              id,
              pid: r.pid,
              kind: s.kind,
              why: late ? "late" : "superseded",
              sentAt: s.sentAt,
            });
          }
        } else if (s.result === "lost" || s.result === "canceled") {
          result.refused++;
          if (late) result.lateRefused++;
        }
      }
    }
    if (terminals.length > 1) {
      terminals.sort((a, b) => a.sentAt - b.sentAt);
      const first = terminals[0] as SettleCall;
      const last = terminals[terminals.length - 1] as SettleCall;
      if (lostWriteBetween(faults, first.sentAt, last.sentAt))
        result.doublyAckedAfterLostWrites.push(id);
      else result.doublyAcked.push(id);
    }
  }

  const lossy = faults.some((f) => f.kind === "redis-kill" && f.lossy === true);
  if (store.kind === "jobs") {
    for (const [id, job] of store.jobs) {
      if (!input.attempted.has(id) && !facts.jobs.has(id)) result.unexpected.push(id);
      if (job.succeededInHistory > 1) result.historyDoubleSucceeded.push(id);
      if (job.states.length > 1) result.notExactlyOneTerminal.push(id);
    }
    for (const id of input.acked) {
      const job = store.jobs.get(id);
      const terminal = job?.states.filter(isTerminal) ?? [];
      if (job !== undefined && job.states.length === 1 && terminal.length === 0) {
        result.notExactlyOneTerminal.push(id);
      }
      if (terminal.length === 0) {
        const ranOk = (facts.jobs.get(id) ?? []).some((r) => outcomeOf(r).terminal);
        if (job === undefined && ranOk && lossy) result.lostAfterSuccess.push(id);
        else result.lost.push(id);
        continue;
      }
      if (terminal[0] === "succeeded") result.succeeded++;
      else if (terminal[0] === "failed") {
        result.dead++;
        const reason = job?.reason ?? "unknown";
        result.deadByReason[reason] = (result.deadByReason[reason] ?? 0) + 1;
      }
    }
  } else {
    const drained = store.counts.waiting + store.counts.delayed + store.counts.active === 0;
    for (const id of input.acked) {
      const reservations = facts.jobs.get(id) ?? [];
      const outcomes = reservations.map(outcomeOf);
      const terminal = outcomes.find((o) => o.terminal)?.terminal;
      const deadLetter = store.deadLetters?.get(id);
      if (deadLetter !== undefined && terminal?.kind === "ack") {
        result.notExactlyOneTerminal.push(id);
      }
      if (deadLetter !== undefined && terminal?.kind !== "ack") {
        result.dead++;
        result.deadByReason[deadLetter] = (result.deadByReason[deadLetter] ?? 0) + 1;
      } else if (terminal) {
        if (terminal.kind === "dead") {
          result.dead++;
          result.deadByReason.error = (result.deadByReason.error ?? 0) + 1;
        } else result.succeeded++;
      } else if (drained && outcomes.some((o) => o.unknown)) {
        result.presumedDone++;
        result.succeeded++;
      } else result.lost.push(id);
    }
    if (!drained) result.notExactlyOneTerminal.push("(the queues were not empty at the end)");
  }
  return result;
}

function isTerminal(state: JobState): boolean {
  return state === "succeeded" || state === "failed" || state === "canceled";
}

/**
 * What fails a run whatever the profile: a lost job, an unexpected one, a job not in
 * exactly one terminal state, an unattributed duplicate run, a double ack or a fencing
 * failure. With `lossyStore` (redis-server without fsync on every write, killed), losses
 * and double acks after the crash are measured, not failures.
 */
export function failuresOf(result: CheckResult, options: { lossyStore?: boolean } = {}): string[] {
  const out: string[] = [];
  const ids = (list: readonly string[]) =>
    list.slice(0, 5).join(", ") + (list.length > 5 ? ", ..." : "");
  if (result.lost.length > 0 && options.lossyStore !== true)
    out.push(`${result.lost.length} lost: ${ids(result.lost)}`);
  if (result.unexpected.length > 0)
    out.push(`${result.unexpected.length} unexpected: ${ids(result.unexpected)}`);
  if (result.notExactlyOneTerminal.length > 0 && options.lossyStore !== true)
    out.push(
      `${result.notExactlyOneTerminal.length} not in exactly one terminal state: ${ids(result.notExactlyOneTerminal)}`,
    );
  if (result.unattributed.length > 0)
    out.push(
      `${result.unattributed.length} unattributed duplicate runs: ${ids(result.unattributed.map((d) => d.id))}`,
    );
  if (result.doublyAcked.length > 0)
    out.push(`${result.doublyAcked.length} doubly acked: ${ids(result.doublyAcked)}`);
  if (result.historyDoubleSucceeded.length > 0 && options.lossyStore !== true)
    out.push(
      `${result.historyDoubleSucceeded.length} with two succeeded entries in their history: ${ids(result.historyDoubleSucceeded)}`,
    );
  if (result.fencingFailures.length > 0)
    out.push(
      `${result.fencingFailures.length} fencing failures (a late or superseded call accepted): ${ids(result.fencingFailures.map((f) => `${f.id} ${f.kind} ${f.why}`))}`,
    );
  if (result.tornLines > 0) out.push(`${result.tornLines} torn ledger lines`);
  return out;
}
