/**
 * Adapter calls as core makes them, counted per lane and kind (`put`, `reserve`, `ack`, …)
 * and answer (`ok`, `error`), by wrapping each lane store the client opens. These are the
 * backend requests tasklane asks for: an adapter may carry several in one round trip
 * (Redis sends the puts of one event-loop turn as one script call) or one in several (SQS
 * batches of 10).
 */
import type { Attributes, Histogram } from "@opentelemetry/api";
import type { LaneStore } from "@tasklane/core/adapter";
import { ATTR_CALL, ATTR_LANE, ATTR_RESULT } from "./names.ts";

/** The count of one (lane, call) and its attribute sets. */
export class CallCount {
  ok = 0;
  errors = 0;
  readonly okAttributes: Attributes;
  readonly errorAttributes: Attributes;
  /** Bound once: a call costs one `then` on its promise, no closure. */
  readonly onOk = () => {
    this.ok++;
  };
  readonly onError = () => {
    this.errors++;
  };

  constructor(lane: string, call: string) {
    this.okAttributes = { [ATTR_LANE]: lane, [ATTR_CALL]: call, [ATTR_RESULT]: "ok" };
    this.errorAttributes = { [ATTR_LANE]: lane, [ATTR_CALL]: call, [ATTR_RESULT]: "error" };
  }
}

export interface LaneCallsDeps {
  /** Every count, for the observable counter. */
  counts: CallCount[];
  reserveBatchSize: () => Histogram | undefined;
  settleDuration: () => Histogram | undefined;
}

/** The methods wrapped by name below; every other method of a store is counted as is. */
const WRAPPED = new Set([
  "put",
  "reserve",
  "ack",
  "nack",
  "release",
  "extend",
  "probe",
  "counts",
  "list",
]);

/**
 * The store each wrapper stands for: a call given another lane's store (`move(ids, to)`)
 * hands the adapter its own store, which it may check by identity.
 */
const innerOf = new WeakMap<object, LaneStore>();

const unwrap = (arg: unknown): unknown =>
  typeof arg === "object" && arg !== null ? (innerOf.get(arg) ?? arg) : arg;

/** Every method a store has, own or inherited (an adapter's class), by name. */
function methodNames(store: LaneStore): string[] {
  const names = new Set<string>();
  for (let o: object | null = store; o !== null && o !== Object.prototype; ) {
    for (const name of Object.getOwnPropertyNames(o)) {
      if (name === "constructor") continue;
      const d = Object.getOwnPropertyDescriptor(o, name);
      if (d !== undefined && typeof d.value === "function") names.add(name);
    }
    o = Object.getPrototypeOf(o) as object | null;
  }
  return [...names];
}

/** `store`, its calls counted; `name` and its optional methods exactly as the store's. */
export function countLaneCalls(store: LaneStore, lane: string, deps: LaneCallsDeps): LaneStore {
  const laneAttributes: Attributes = { [ATTR_LANE]: lane };
  const countOf = (call: string): CallCount => {
    const c = new CallCount(lane, call);
    deps.counts.push(c);
    return c;
  };
  const counted = <A extends unknown[], R>(call: string, fn: (...args: A) => Promise<R>) => {
    const c = countOf(call);
    return (...args: A): Promise<R> => {
      const p = fn(...args);
      p.then(c.onOk, c.onError);
      return p;
    };
  };
  const timed = <A extends unknown[], R>(call: string, fn: (...args: A) => Promise<R>) => {
    const c = countOf(call);
    const attributes: Attributes = { [ATTR_LANE]: lane, [ATTR_CALL]: call };
    return (...args: A): Promise<R> => {
      const startedAt = performance.now();
      const p = fn(...args);
      p.then(() => {
        c.ok++;
        deps.settleDuration()?.record((performance.now() - startedAt) / 1000, attributes);
      }, c.onError);
      return p;
    };
  };
  const reserveCount = countOf("reserve");
  const wrapped: LaneStore = {
    name: store.name,
    put: counted("put", store.put.bind(store)),
    reserve: (options) => {
      const p = store.reserve(options);
      p.then((result) => {
        reserveCount.ok++;
        deps.reserveBatchSize()?.record(result.jobs.length, laneAttributes);
      }, reserveCount.onError);
      return p;
    },
    ack: timed("ack", store.ack.bind(store)),
    nack: timed("nack", store.nack.bind(store)),
    release: timed("release", store.release.bind(store)),
    extend: counted("extend", store.extend.bind(store)),
    probe: counted("probe", store.probe.bind(store)),
    counts: counted("counts", store.counts.bind(store)),
  };
  // The optional methods (get, cancel, stats, …), and any a later contract or an adapter
  // adds: present exactly when the store has them (core checks for them), each counted
  // under its name (a bounded set). Bound to the store: adapters keep private fields.
  const store_ = store as unknown as Record<string, (...args: unknown[]) => unknown>;
  for (const name of methodNames(store)) {
    if (WRAPPED.has(name)) continue;
    const method = store_[name] as (...args: unknown[]) => unknown;
    const c = countOf(name);
    (wrapped as unknown as Record<string, unknown>)[name] = (...args: unknown[]) => {
      const result = method.apply(store, args.map(unwrap));
      if (result instanceof Promise) result.then(c.onOk, c.onError);
      else c.ok++;
      return result;
    };
  }
  if (store.list !== undefined) {
    // An async iterable, not a promise: one call per list, however many pages it reads.
    const c = countOf("list");
    const list = store.list.bind(store);
    wrapped.list = (options) => {
      c.ok++;
      return list(options);
    };
  }
  innerOf.set(wrapped, store);
  return wrapped;
}
