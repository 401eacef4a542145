import type { Clock } from "../clock.ts";
import type { TasklaneEventBus } from "../events.ts";
import { inBatches } from "./batches.ts";
import type { HeldJob } from "./held-job.ts";
import type { HeldJobs } from "./held-jobs.ts";
import type { LaneState } from "./lane-state.ts";
import { FIRST_SETTLE_RETRY_MS, MAX_SETTLE_RETRY_MS, type Settler } from "./settler.ts";

export interface HeartbeatDeps {
  clock: Clock;
  events: TasklaneEventBus;
  held: HeldJobs;
  lose: Settler["lose"];
  maxBatch: number;
  periodMs: number;
  /** Also run on every tick, beside the extends (the worker registry's renewal). */
  onTick?: () => Promise<void>;
}

export interface Heartbeat {
  start(): void;
  /** No tick starts after this; one in flight finishes. */
  stop(): void;
}

/**
 * One timer per worker. Each tick extends, per lane, the lease of every held job that is
 * not settling, in one batched `extend` (every third of the shortest lease by default, so
 * a lease is renewed well before it ends). An answer other than "ok" means the lease is
 * gone: the job is lost (its handler aborted). Ticks never overlap: the next is set when
 * one ends.
 *
 * An extend that throws (the connection dropped) leaves the leases as they were, with a
 * third of the lease or less to go: the next tick then comes as soon as a settling
 * call's retry would (25 ms, doubling up to 1 s, never later than the usual period), so
 * a short outage costs no lease. A retried extend is harmless: it only moves the end of a
 * lease that is still ours.
 */
export function createHeartbeat(deps: HeartbeatDeps): Heartbeat {
  const { clock, events, held, lose, maxBatch, periodMs, onTick } = deps;
  let timer: unknown;
  let running = false;
  /** The wait before the next tick after one whose extend threw, ms (0: none threw). */
  let retryMs = 0;

  /** One round of extends; false when any of them threw. */
  const tick = async (): Promise<boolean> => {
    let healthy = true;
    const byLane = new Map<LaneState, HeldJob[]>();
    for (const h of held) {
      if (h.settled || h.finishing) continue;
      const list = byLane.get(h.lane);
      if (list) list.push(h);
      else byLane.set(h.lane, [h]);
    }
    await Promise.all([
      onTick?.(),
      ...[...byLane].map(async ([ls, hs]) => {
        for (const batch of inBatches(hs, maxBatch)) {
          const now = clock.now();
          try {
            const statuses = await ls.store.extend(
              batch.map((h) => h.job.lock),
              ls.config.leaseMs,
            );
            batch.forEach((h, i) => {
              const s = statuses[i] ?? "lost";
              if (s === "ok") h.job.lock.expiresAt = now + ls.config.leaseMs;
              else lose(h, s);
            });
          } catch (error) {
            healthy = false;
            events.emit("error", { error, during: "heartbeat", lane: ls.config.name });
          }
        }
      }),
    ]);
    return healthy;
  };

  const schedule = (delayMs: number) => {
    timer = clock.setTimeout(() => {
      void tick().then(
        (healthy) => {
          retryMs = healthy
            ? 0
            : Math.min(retryMs === 0 ? FIRST_SETTLE_RETRY_MS : 2 * retryMs, MAX_SETTLE_RETRY_MS);
          if (running) schedule(retryMs === 0 ? periodMs : Math.min(retryMs, periodMs));
        },
        () => {
          if (running) schedule(periodMs);
        },
      );
    }, delayMs);
  };

  return {
    start() {
      running = true;
      schedule(periodMs);
    },
    stop() {
      running = false;
      if (timer !== undefined) clock.clearTimeout(timer as never);
    },
  };
}
