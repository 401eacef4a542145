/**
 * A test-only wrapper around a real adapter that writes, to the ledger, every job the
 * worker is handed (with its fencing token and lease) and every settling and heartbeat
 * call with its answer. The worker cannot see its locks; the adapter calls can, so this is
 * where "which reservation was acked, and was the ack accepted" is recorded. Every call
 * still goes to the real backend unchanged.
 */
import { createHash } from "node:crypto";
import type {
  Adapter,
  LaneStore,
  LaneStoreOptions,
  Lock,
  LockStatus,
  NackItem,
  ReleaseItem,
  ReserveOptions,
  ReserveResult,
} from "@tasklane/core/adapter";
import type { CallResult, LedgerEntry, LedgerWriter, SettleKind } from "../ledger.ts";

/**
 * Redis tokens are short counters; SQS receipt handles are hundreds of characters, so long
 * tokens are recorded as a hash (enough to tell one reservation from another).
 */
export function shortToken(token: string): string {
  if (token.length <= 24) return token;
  return createHash("sha1").update(token).digest("base64url").slice(0, 16);
}

function recordStore(store: LaneStore, ledger: LedgerWriter): LaneStore {
  const reserve = async (options: ReserveOptions): Promise<ReserveResult> => {
    const sentAt = Date.now();
    const result = await store.reserve(options);
    if (result.jobs.length > 0) {
      const t = Date.now();
      ledger.writeMany(
        result.jobs.map((job) => ({
          e: "res",
          t,
          s: sentAt,
          id: job.id,
          a: job.attempt,
          tok: shortToken(job.lock.token),
          exp: job.lock.expiresAt,
        })),
      );
    }
    return result;
  };

  const settle = async <T extends { lock: Lock } | Lock>(
    kind: (item: T) => SettleKind,
    items: T[],
    call: (items: T[]) => Promise<LockStatus[]>,
    runAtOf: (item: T) => number | undefined,
  ): Promise<LockStatus[]> => {
    const lockOf = (item: T): Lock => ("lock" in item ? item.lock : item);
    const t = Date.now();
    ledger.writeMany(
      items.map((item): LedgerEntry => {
        const lock = lockOf(item);
        const runAt = runAtOf(item);
        return {
          e: "set",
          t,
          k: kind(item),
          id: lock.jobId,
          tok: shortToken(lock.token),
          ...(runAt === undefined ? {} : { runAt }),
        };
      }),
    );
    const answer = (results: CallResult[]) => {
      const at = Date.now();
      ledger.writeMany(
        items.map((item, i) => {
          const lock = lockOf(item);
          return {
            e: "set=",
            t: at,
            k: kind(item),
            id: lock.jobId,
            tok: shortToken(lock.token),
            r: results[i] ?? "lost",
          };
        }),
      );
    };
    try {
      const statuses = await call(items);
      answer(statuses);
      return statuses;
    } catch (error) {
      answer(items.map(() => "error"));
      throw error;
    }
  };

  const ack = (locks: Lock[]) =>
    settle(
      () => "ack",
      locks,
      (l) => store.ack(l),
      () => undefined,
    );
  const nack = (items: NackItem[]) =>
    settle(
      (item) => ("dead" in item ? "dead" : "nack"),
      items,
      (i) => store.nack(i),
      (item) => ("runAt" in item ? item.runAt : undefined),
    );
  const release = (items: ReleaseItem[]) =>
    settle(
      () => "rel",
      items,
      (i) => store.release(i),
      () => undefined,
    );
  const extend = async (locks: Lock[], leaseMs: number): Promise<LockStatus[]> => {
    const write = (results: CallResult[]) => {
      const t = Date.now();
      ledger.writeMany(
        locks.map((lock, i) => ({
          e: "ext=",
          t,
          id: lock.jobId,
          tok: shortToken(lock.token),
          r: results[i] ?? "lost",
        })),
      );
    };
    try {
      const statuses = await store.extend(locks, leaseMs);
      write(statuses);
      return statuses;
    } catch (error) {
      write(locks.map(() => "error"));
      throw error;
    }
  };

  const overrides: Partial<LaneStore> = { reserve, ack, nack, release, extend };
  return new Proxy(store, {
    get(target, property) {
      if (typeof property === "string" && property in overrides) {
        return overrides[property as keyof LaneStore];
      }
      const value: unknown = Reflect.get(target, property);
      return typeof value === "function" ? value.bind(target) : value;
    },
  });
}

/** The adapter, with every lane it opens recorded to `ledger`. */
export function createRecordingAdapter(inner: Adapter, ledger: LedgerWriter): Adapter {
  const stores = new Map<LaneStore, LaneStore>();
  return new Proxy(inner, {
    get(target, property) {
      if (property === "lane") {
        return async (name: string, options: LaneStoreOptions) => {
          const store = await target.lane(name, options);
          let recorded = stores.get(store);
          if (recorded === undefined) {
            recorded = recordStore(store, ledger);
            stores.set(store, recorded);
          }
          return recorded;
        };
      }
      const value: unknown = Reflect.get(target, property);
      return typeof value === "function" ? value.bind(target) : value;
    },
  });
}
