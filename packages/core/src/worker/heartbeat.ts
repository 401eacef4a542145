import type { Clock } from "../clock.ts";
import type { TasklaneEventBus } from "../events.ts";
import { inBatches } from "./batches.ts";
import type { HeldJob } from "./held-job.ts";
import type { HeldJobs } from "./held-jobs.ts";
import type { LaneState } from "./lane-state.ts";
import type { Settler } from "./settler.ts";

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
 */
export function createHeartbeat(deps: HeartbeatDeps): Heartbeat {
  const { clock, events, held, lose, maxBatch, periodMs, onTick } = deps;
  let timer: unknown;
  let running = false;

  const tick = async () => {
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
            events.emit("error", { error, during: "heartbeat", lane: ls.config.name });
          }
        }
      }),
    ]);
  };

  const schedule = () => {
    timer = clock.setTimeout(() => {
      void tick().finally(() => {
        if (running) schedule();
      });
    }, periodMs);
  };

  return {
    start() {
      running = true;
      schedule();
    },
    stop() {
      running = false;
      if (timer !== undefined) clock.clearTimeout(timer as never);
    },
  };
}
