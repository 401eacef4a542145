/**
 * Time, injectable. Core and the memory adapter read time and set timers only through a
 * Clock, so a test can swap in {@link createManualClock} and advance an hour instantly.
 */
export interface Clock {
  /** Epoch ms. */
  now(): number;
  setTimeout(fn: () => void, ms: number): TimerHandle;
  clearTimeout(handle: TimerHandle): void;
}

/** Opaque timer handle. */
export type TimerHandle = { readonly __timer: unique symbol } | object;

/** The real clock. Timers are unref'd so a forgotten timer never keeps a process alive. */
export const systemClock: Clock = {
  now: () => Date.now(),
  setTimeout(fn, ms) {
    const t = setTimeout(fn, Math.max(0, ms));
    t.unref?.();
    return t;
  },
  clearTimeout(handle) {
    clearTimeout(handle as ReturnType<typeof setTimeout>);
  },
};

/** A clock that moves only when told to. */
export interface ManualClock extends Clock {
  /**
   * Move time forward by `ms`, firing every timer that falls due, in time order. Between
   * timers it lets pending promises and I/O callbacks run, so async work scheduled by one
   * timer (a handler finishing, a heartbeat) settles before the next fires.
   */
  advance(ms: number): Promise<void>;
  /** Set the time to `at` (must not go backwards), firing due timers as `advance` does. */
  setTime(at: number): Promise<void>;
  /** Number of timers not yet fired. */
  pending(): number;
}

interface ManualTimer {
  at: number;
  seq: number;
  fn: () => void;
}

/** Let queued microtasks and one round of macrotasks run. */
export function flushAsync(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}

/**
 * A manual clock for tests. Starts at `startAt` (default 2026-01-01T00:00:00Z).
 *
 * @example
 * const clock = createManualClock();
 * const adapter = createMemoryAdapter({ clock });
 * await clock.advance(60 * 60_000); // an hour passes, instantly
 */
export function createManualClock(startAt = Date.UTC(2026, 0, 1)): ManualClock {
  let now = startAt;
  let seq = 0;
  const timers = new Set<ManualTimer>();

  const nextDue = (until: number): ManualTimer | undefined => {
    let best: ManualTimer | undefined;
    for (const t of timers) {
      if (t.at > until) continue;
      if (!best || t.at < best.at || (t.at === best.at && t.seq < best.seq)) best = t;
    }
    return best;
  };

  const setTime = async (target: number): Promise<void> => {
    if (target < now) throw new RangeError(`ManualClock cannot go back from ${now} to ${target}`);
    await flushAsync();
    for (;;) {
      const t = nextDue(target);
      if (!t) break;
      timers.delete(t);
      now = Math.max(now, t.at);
      t.fn();
      await flushAsync();
      await flushAsync();
    }
    now = target;
    await flushAsync();
  };

  return {
    now: () => now,
    setTimeout(fn, ms) {
      const t: ManualTimer = { at: now + Math.max(0, ms), seq: seq++, fn };
      timers.add(t);
      return t;
    },
    clearTimeout(handle) {
      timers.delete(handle as ManualTimer);
    },
    advance: (ms) => setTime(now + ms),
    setTime,
    pending: () => timers.size,
  };
}

/** Resolve after `ms` on `clock`, or reject with the signal's reason once it aborts. */
export function sleep(clock: Clock, ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) {
      reject(signal.reason);
      return;
    }
    const onAbort = () => {
      clock.clearTimeout(handle);
      reject(signal?.reason);
    };
    const handle = clock.setTimeout(() => {
      signal?.removeEventListener("abort", onAbort);
      resolve();
    }, ms);
    signal?.addEventListener("abort", onAbort, { once: true });
  });
}
