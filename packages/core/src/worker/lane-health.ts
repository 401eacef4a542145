/**
 * Lanes fail independently. A lane whose call throws (its Redis node down or its slot
 * migrating, its SQS queue unreachable) is set aside: the loop goes on serving the other
 * lanes, and the lane gets a back-off of its own (`errorBackoffMs`, doubling up to
 * MAX_ERROR_BACKOFF_MS). Only when every lane is set aside does the loop wait, and then
 * for the first lane to come back.
 *
 * When its back-off ends the lane is probed in the background rather than served by the
 * loop: a call to a backend that is down can take long to fail (a Cluster client's
 * redirections, a network timeout), and the loop must not wait on it while other lanes
 * have work. The probe's answer brings the lane back into selection; its failure sets the
 * lane aside again for twice as long. The back-off resets only once a turn on the lane
 * succeeds: a lane that answers probes but whose reserves fail keeps backing off.
 */
import type { Clock, TimerHandle } from "../clock.ts";
import type { LaneState } from "./lane-state.ts";
import { MAX_ERROR_BACKOFF_MS } from "./worker-options.ts";

export interface LaneHealthDeps {
  clock: Clock;
  lanes: readonly LaneState[];
  /** First back-off of a failing lane, ms. */
  errorBackoffMs: number;
  /** A set-aside lane answered its probe and is back (with the ready count it answered). */
  onRejoin(ls: LaneState, ready: number): void;
  /** A set-aside lane's probe failed too. */
  onProbeError(ls: LaneState, error: unknown): void;
}

export interface LaneHealth {
  /** The lanes the loop may serve now, in configuration order. */
  usable(): readonly LaneState[];
  /** A call on `ls` threw: set it aside for its next back-off. */
  failed(ls: LaneState): void;
  /** A turn on `ls` succeeded: its back-off starts again from the first step. */
  served(ls: LaneState): void;
  /** Start the probes of set-aside lanes whose back-off has ended. */
  probeDue(): void;
  /** ms until the next probe is due; undefined when no set-aside lane waits for one. */
  untilNextProbeMs(): number | undefined;
  /**
   * Resolves when a probe ends (its lane back, or set aside again) or the next one is
   * due; rejects when `signal` aborts.
   */
  waitForChange(signal: AbortSignal): Promise<void>;
}

interface Aside {
  /** When the lane is probed next (epoch ms of the worker's clock). */
  retryAt: number;
  probing: boolean;
}

export function createLaneHealth(deps: LaneHealthDeps): LaneHealth {
  const { clock, lanes, errorBackoffMs, onRejoin, onProbeError } = deps;
  /** Consecutive failures per lane since its last successful turn. */
  const failures = new Map<LaneState, number>();
  const aside = new Map<LaneState, Aside>();
  const waiters = new Set<() => void>();
  let usableCache: readonly LaneState[] = lanes;

  const changed = () => {
    usableCache = aside.size === 0 ? lanes : lanes.filter((l) => !aside.has(l));
    for (const wake of [...waiters]) wake();
  };

  const setAside = (ls: LaneState) => {
    const n = (failures.get(ls) ?? 0) + 1;
    failures.set(ls, n);
    const backoffMs = Math.min(errorBackoffMs * 2 ** Math.min(n - 1, 30), MAX_ERROR_BACKOFF_MS);
    aside.set(ls, { retryAt: clock.now() + backoffMs, probing: false });
    changed();
  };

  const probe = (ls: LaneState, state: Aside) => {
    state.probing = true;
    // A store whose probe throws synchronously fails the probe, not the loop.
    Promise.resolve()
      .then(() => ls.store.probe())
      .then(
        (ready) => {
          if (aside.get(ls) !== state) return;
          aside.delete(ls);
          changed();
          onRejoin(ls, ready);
        },
        (error: unknown) => {
          if (aside.get(ls) !== state) return;
          setAside(ls);
          onProbeError(ls, error);
        },
      );
  };

  const untilNextProbeMs = (): number | undefined => {
    let next: number | undefined;
    for (const state of aside.values()) {
      if (!state.probing && (next === undefined || state.retryAt < next)) next = state.retryAt;
    }
    return next === undefined ? undefined : Math.max(0, next - clock.now());
  };

  const waitForChange = (signal: AbortSignal) =>
    new Promise<void>((resolve, reject) => {
      if (signal.aborted) {
        reject(signal.reason);
        return;
      }
      let timer: TimerHandle | undefined;
      const end = () => {
        waiters.delete(done);
        signal.removeEventListener("abort", onAbort);
        if (timer !== undefined) clock.clearTimeout(timer);
      };
      const done = () => {
        end();
        resolve();
      };
      const onAbort = () => {
        end();
        reject(signal.reason);
      };
      waiters.add(done);
      signal.addEventListener("abort", onAbort, { once: true });
      const ms = untilNextProbeMs();
      if (ms !== undefined) timer = clock.setTimeout(done, ms);
    });

  return {
    usable: () => usableCache,
    failed: setAside,
    served(ls) {
      if (failures.size > 0) failures.delete(ls);
    },
    probeDue() {
      if (aside.size === 0) return;
      const now = clock.now();
      for (const [ls, state] of aside) {
        if (!state.probing && state.retryAt <= now) probe(ls, state);
      }
    },
    untilNextProbeMs,
    waitForChange,
  };
}
