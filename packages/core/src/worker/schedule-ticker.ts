/**
 * The worker's share of firing recurring schedules: one timer per worker, set to the
 * earliest next slot among its lanes' schedules and never later than `pollMs` from now
 * (another process may add an earlier one). Each tick asks every served lane for its
 * earliest slot (one indexed read, whatever the number of schedules) and fires only the
 * lanes where one is due, which read only their due schedules. Not on the hot path:
 * publish, reserve and ack do not know schedules exist.
 */
import type { LaneStore } from "../adapter.ts";
import type { Clock, TimerHandle } from "../clock.ts";
import type { TasklaneEventBus } from "../events.ts";

export interface ScheduleTickerDeps {
  clock: Clock;
  events: TasklaneEventBus;
  /** Served lanes that store schedules (config name and store). */
  lanes: Array<{ name: string; store: LaneStore }>;
  fire(lane: string): Promise<void>;
  pollMs: number;
}

export interface ScheduleTicker {
  start(): void;
  /** A schedule of `lane` got a new next slot in this process: look again now. */
  poke(lane: string): void;
  /** Resolves when a tick in progress has ended; no tick starts after. */
  stop(): Promise<void>;
}

export function createScheduleTicker(deps: ScheduleTickerDeps): ScheduleTicker {
  const { clock, events, lanes, pollMs } = deps;
  let timer: TimerHandle | undefined;
  let stopped = false;
  let ticking: Promise<void> = Promise.resolve();
  /** A poke during a tick: one more tick right after it (the poke's slot may be earlier). */
  let again = false;
  let running = false;

  const arm = (at: number) => {
    if (stopped) return;
    const delay = Math.max(0, Math.min(at - clock.now(), pollMs));
    timer = clock.setTimeout(() => {
      timer = undefined;
      ticking = tick();
    }, delay);
  };

  const tick = async (): Promise<void> => {
    running = true;
    try {
      await tickOnce();
    } finally {
      running = false;
    }
    if (again && !stopped) {
      again = false;
      if (timer !== undefined) clock.clearTimeout(timer);
      timer = undefined;
      ticking = tick();
    }
  };

  const tickOnce = async (): Promise<void> => {
    let earliest = Number.POSITIVE_INFINITY;
    for (const { name, store } of lanes) {
      if (stopped) return;
      try {
        let at = await store.nextScheduleAt?.();
        if (at !== undefined && at <= clock.now()) {
          await deps.fire(name);
          at = await store.nextScheduleAt?.();
        }
        if (at !== undefined && at < earliest) earliest = at;
      } catch (error) {
        // The next tick tries again. A client closing under a tick is not an error.
        if (!stopped) events.emit("error", { error, during: "schedule", lane: name });
      }
    }
    arm(earliest);
  };

  return {
    start() {
      if (lanes.length === 0) return;
      ticking = tick();
    },
    poke(lane) {
      if (stopped || !lanes.some((l) => l.name === lane)) return;
      if (running) {
        again = true;
        return;
      }
      if (timer !== undefined) clock.clearTimeout(timer);
      timer = undefined;
      ticking = tick();
    },
    async stop() {
      stopped = true;
      if (timer !== undefined) clock.clearTimeout(timer);
      timer = undefined;
      await ticking;
    },
  };
}
