/**
 * Watches for stalls nobody injected: the orchestrator's own event loop (it runs the
 * fault proxies and fauxqs, so when it cannot run, every worker's traffic waits) and
 * redis-server's answer to a PING on a connection of its own. A stall of `thresholdMs`
 * or more is logged as an observed fault ("stall"), which the checker reports apart from
 * the injected ones.
 */
import type { Redis } from "ioredis";
import type { FaultLog } from "./faults.ts";

export interface StallMonitor {
  stop(): void;
}

export function startStallMonitor(options: {
  faults: FaultLog;
  thresholdMs: number;
  /** A client straight to redis-server, if there is one. */
  redis?: Redis;
}): StallMonitor {
  const { faults, thresholdMs, redis } = options;
  const tickMs = 50;
  let last = Date.now();
  const loop = setInterval(() => {
    const now = Date.now();
    const late = now - last - tickMs;
    last = now;
    if (late >= thresholdMs) {
      faults.add({
        kind: "stall",
        at: now - late,
        until: now,
        pids: "all",
        detail: `orchestrator event loop ${late} ms`,
      });
    }
  }, tickMs);
  let pinging = false;
  const ping = setInterval(() => {
    if (redis === undefined || pinging || redis.status !== "ready") return;
    pinging = true;
    const sent = Date.now();
    redis
      .ping()
      .then(
        () => {
          const took = Date.now() - sent;
          if (took >= thresholdMs) {
            faults.add({
              kind: "stall",
              at: sent,
              until: sent + took,
              pids: "all",
              detail: `redis-server PING ${took} ms`,
            });
          }
        },
        () => {}, // down: a restart the scenario injected, logged as such
      )
      .finally(() => {
        pinging = false;
      });
  }, 100);
  return {
    stop() {
      clearInterval(loop);
      clearInterval(ping);
    },
  };
}
