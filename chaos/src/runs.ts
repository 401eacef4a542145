/**
 * The ledgers turned into reservations: one per job handed to a worker, with its handler's
 * run (if it started), every settling call for its lock and the answers, and how long its
 * lease could have lasted.
 */
import type { CallResult, ProcessLedger, SettleKind } from "./ledger.ts";

export interface SettleCall {
  kind: SettleKind;
  /** When the call left. */
  sentAt: number;
  /** When its answer came back (undefined: the process died before it did). */
  answeredAt?: number;
  result?: CallResult;
  /** A retry's due time. */
  runAt?: number;
}

export interface Reservation {
  slot: number;
  pid: number;
  id: string;
  attempt: number;
  token: string;
  /** When the reserve call that returned it left. */
  sentAt: number;
  /** When the worker had it. */
  at: number;
  /**
   * The latest moment its lease can have lasted to: the reserve's expiry, pushed out by
   * every heartbeat that was accepted or whose answer was lost (it may have been applied).
   * A call for this lock that left after it must be refused.
   */
  leaseEnd: number;
  startedAt?: number;
  /**
   * The lease end known when the handler started. A start after it is a stale start: the
   * worker ran a job it no longer held (its reserve's answer came back after the lease
   * it carried had already ended, e.g. held up by a blackhole).
   */
  leaseEndAtStart?: number;
  finishedAt?: number;
  /** The handler returned (true) or threw (false). */
  handlerOk?: boolean;
  /** A poison pill ended the process while this ran. */
  pill?: string;
  settles: SettleCall[];
}

export interface Outcome {
  /** An ack or a dead-letter nack was accepted. */
  terminal?: SettleCall;
  /** A retry nack was accepted. */
  retry?: SettleCall;
  /** A release was accepted (the job went back unrun or interrupted at shutdown). */
  released?: SettleCall;
  /** A settling call left and its answer is unknown (an error, or the process died). */
  unknown: boolean;
}

export function outcomeOf(r: Reservation): Outcome {
  const out: Outcome = { unknown: false };
  for (const s of r.settles) {
    if (s.result === "ok") {
      if (s.kind === "ack" || s.kind === "dead") out.terminal ??= s;
      else if (s.kind === "nack") out.retry ??= s;
      else out.released ??= s;
    } else if (s.result === undefined || s.result === "error") out.unknown = true;
  }
  return out;
}

export interface LedgerFacts {
  /** Reservations by job id, in the order they were handed out. */
  jobs: Map<string, Reservation[]>;
  /** Event-loop lags by pid: [end time, ms]. */
  lags: Map<number, Array<[number, number]>>;
  /** Heap samples by pid: [time, heapUsed bytes as sampled, after a full collection]. */
  heap: Map<number, Array<[number, number, number | undefined]>>;
  /** Jobs finished, by pid, in summary mode. */
  counts: Map<number, number>;
  /** Infrastructure errors the workers survived, by `during`. */
  errors: Map<string, number>;
  /** Processes a poison pill ended (they logged it first). */
  pillPids: Set<number>;
  torn: number;
}

export function buildFacts(ledgers: ProcessLedger[], leaseMs: number): LedgerFacts {
  const jobs = new Map<string, Reservation[]>();
  const lags = new Map<number, Array<[number, number]>>();
  const heap = new Map<number, Array<[number, number, number | undefined]>>();
  const counts = new Map<number, number>();
  const errors = new Map<string, number>();
  const pillPids = new Set<number>();
  let torn = 0;
  for (const ledger of ledgers) {
    torn += ledger.torn;
    const { pid, slot } = ledger;
    const byToken = new Map<string, Reservation>();
    const byAttempt = new Map<string, Reservation>();
    const pending = new Map<string, SettleCall[]>();
    for (const entry of ledger.entries) {
      switch (entry.e) {
        case "res": {
          const r: Reservation = {
            slot,
            pid,
            id: entry.id,
            attempt: entry.a,
            token: entry.tok,
            sentAt: entry.s,
            at: entry.t,
            leaseEnd: entry.exp,
            settles: [],
          };
          byToken.set(`${entry.id}|${entry.tok}`, r);
          byAttempt.set(`${entry.id}|${entry.a}`, r);
          let list = jobs.get(entry.id);
          if (list === undefined) {
            list = [];
            jobs.set(entry.id, list);
          }
          list.push(r);
          break;
        }
        case "start": {
          const r = byAttempt.get(`${entry.id}|${entry.a}`);
          if (r) {
            r.startedAt = entry.t;
            r.leaseEndAtStart = r.leaseEnd;
          }
          break;
        }
        case "fin": {
          const r = byAttempt.get(`${entry.id}|${entry.a}`);
          if (r) {
            r.finishedAt = entry.t;
            r.handlerOk = entry.ok;
          }
          break;
        }
        case "pill": {
          pillPids.add(pid);
          const r = byAttempt.get(`${entry.id}|${entry.a}`);
          if (r) r.pill = entry.how;
          break;
        }
        case "set": {
          const r = byToken.get(`${entry.id}|${entry.tok}`);
          if (!r) break;
          const call: SettleCall = { kind: entry.k, sentAt: entry.t };
          if (entry.runAt !== undefined) call.runAt = entry.runAt;
          r.settles.push(call);
          const key = `${entry.id}|${entry.tok}|${entry.k}`;
          const queue = pending.get(key);
          if (queue) queue.push(call);
          else pending.set(key, [call]);
          break;
        }
        case "set=": {
          const call = pending.get(`${entry.id}|${entry.tok}|${entry.k}`)?.shift();
          if (call) {
            call.answeredAt = entry.t;
            call.result = entry.r;
          }
          break;
        }
        case "ext=": {
          const r = byToken.get(`${entry.id}|${entry.tok}`);
          // An error may have been applied before the connection failed: count it too.
          if (r && (entry.r === "ok" || entry.r === "error")) {
            r.leaseEnd = Math.max(r.leaseEnd, entry.t + leaseMs);
          }
          break;
        }
        case "lag":
          push(lags, pid, [entry.t, entry.ms]);
          break;
        case "heap":
          push(heap, pid, [entry.t, entry.used, entry.live]);
          break;
        case "count":
          counts.set(pid, entry.done);
          break;
        case "err":
          errors.set(entry.during, (errors.get(entry.during) ?? 0) + 1);
          break;
        default:
          break;
      }
    }
  }
  // The store's order of deliveries: every delivery raises the attempt (an uncounted
  // release, or a prefetched delivery whose lease ran out, hands out the same attempt
  // again, later). The order in which workers got
  // their answers can differ: a reserve's answer can be held up past a later delivery.
  for (const list of jobs.values()) list.sort(deliveryOrder);
  return { jobs, lags, heap, counts, errors, pillPids, torn };
}

function push<T>(map: Map<number, T[]>, key: number, value: T): void {
  const list = map.get(key);
  if (list) list.push(value);
  else map.set(key, [value]);
}

/** A fencing token as a number where the backend issues increasing integers (Redis). */
const INTEGER_TOKEN = /^\d{1,20}$/;

function deliveryOrder(a: Reservation, b: Reservation): number {
  const byAttempt = a.attempt - b.attempt;
  if (byAttempt !== 0) return byAttempt;
  // The same attempt handed out again (a release, or a prefetched delivery whose lease ran
  // out): Redis's tokens grow with every delivery of a lane, the order the store made them
  // in, while two answers can reach their workers in the same millisecond or out of order.
  if (INTEGER_TOKEN.test(a.token) && INTEGER_TOKEN.test(b.token) && a.token !== b.token) {
    return BigInt(a.token) < BigInt(b.token) ? -1 : 1;
  }
  return a.at - b.at;
}

/** The reservations whose handler started, in the store's delivery order. */
export function startedRuns(reservations: readonly Reservation[]): Reservation[] {
  return reservations.filter((r) => r.startedAt !== undefined).sort(deliveryOrder);
}

/** Whether the handler started after the lease it held had ended. */
export function startedStale(r: Reservation): boolean {
  return r.startedAt !== undefined && r.startedAt > (r.leaseEndAtStart ?? r.leaseEnd) + 1;
}
