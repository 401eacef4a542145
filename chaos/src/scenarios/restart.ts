/**
 * redis-server kill -9 and restart while workers run and the producer publishes (Redis,
 * append-only file). With `appendfsync always` every acknowledged write is on disk before
 * its reply: nothing acknowledged may be lost (asserted). With `everysec` up to about a
 * second of acknowledged writes can go with the crash: what is lost (publishes, acks whose
 * jobs then run again) is measured and reported, not a failure.
 */
import type { Harness } from "../harness.ts";
import type { Scenario } from "../scenario.ts";
import { baseFailures, duplicateFigures, progress, startBacklog } from "./common.ts";

export interface RestartParams {
  backlog: number;
  workers: number;
  concurrency: number;
  jobMs: number;
  leaseMs: number;
  restarts: number;
  /** How long redis-server stays down before it is started again, ms. */
  downMs: number;
  jobsBetweenFaults: number;
  drainTimeoutMs: number;
}

export function createRestartScenario(
  appendfsync: "always" | "everysec",
): Scenario<RestartParams, Harness> {
  const name = appendfsync === "always" ? "restart" : "restart-everysec";
  const lossy = appendfsync !== "always";
  const scenario: Scenario<RestartParams, Harness> = {
    name,
    title: `redis-server kill -9 and restart, appendfsync ${appendfsync}`,
    async setup(ctx, p) {
      return startBacklog({ name, runDir: ctx.runDir, backend: "redis", appendfsync }, p);
    },
    async inject(h, p, ctx) {
      // The producer keeps publishing through the restarts, so some publishes meet a
      // server that is down (retried until acknowledged) or lose their reply.
      let feeding = true;
      const feeder = (async () => {
        while (feeding) {
          // While the server is down the count is unknown: publish anyway, so publishes
          // meet the outage (they are retried until the server is back).
          const pending = await h.pending().catch(() => -1);
          if (pending < p.backlog) {
            await h.producer.publish(
              Array.from({ length: 100 }, () => ({ kind: "ok" as const, ms: p.jobMs })),
            );
          } else await new Promise((resolve) => setTimeout(resolve, 20));
        }
      })();
      try {
        for (let i = 0; i < p.restarts; i++) {
          await progress(h, p.jobsBetweenFaults, 120_000);
          const redis = h.redis;
          if (redis === undefined) throw new Error("no redis-server");
          const at = Date.now();
          await redis.kill();
          await new Promise((resolve) => setTimeout(resolve, p.downMs)); // the outage's length
          await redis.start();
          h.faults.add({ kind: "redis-kill", at, until: Date.now(), pids: "all", lossy });
          ctx.log(
            `${name}: redis-server killed and back in ${Date.now() - at} ms (${i + 1}/${p.restarts})`,
          );
        }
        await progress(h, p.jobsBetweenFaults, 120_000);
      } finally {
        feeding = false;
        await feeder;
      }
    },
    async check(h, p) {
      const drained = await h.drain(p.drainTimeoutMs);
      const finished = await h.finish();
      const r = finished.result;
      const restarts = h.faults.count("redis-kill");
      const outages = h.faults.faults
        .filter((f) => f.kind === "redis-kill")
        .map((f) => (f.until ?? f.at) - f.at);
      return {
        name,
        title: scenario.title,
        backend: `redis-server ${h.redis?.version ?? "?"}, appendonly yes, appendfsync ${appendfsync}`,
        params: {
          backlog: p.backlog,
          workers: `${p.workers} × ${p.concurrency}`,
          "job ms": p.jobMs,
          "lease ms": p.leaseMs,
          restarts,
          "down ms": p.downMs,
        },
        check: r,
        figures: [
          {
            name: "longest outage (kill → PING answered)",
            value: Math.max(0, ...outages),
            unit: "ms",
          },
          { name: "publishes retried", value: h.producer.retries, unit: "calls" },
          {
            name: "acknowledged publishes lost",
            value: r.lost.length,
            unit: "jobs",
            ...(lossy ? {} : { target: 0, targetText: "0" }),
          },
          {
            name: "jobs run and acked, then their record lost",
            value: r.lostAfterSuccess.length,
            unit: "jobs",
          },
          {
            name: "accepted acks lost (the job ran again)",
            value: r.byAttribution["lost-write"] ?? 0,
            unit: "jobs",
          },
          {
            name: "double acks after lost writes",
            value: r.doublyAckedAfterLostWrites.length,
            unit: "jobs",
          },
          {
            name: "duplicate runs per restart",
            value: restarts === 0 ? undefined : r.duplicateRuns.length / restarts,
            unit: "runs",
          },
          ...duplicateFigures(h, finished),
        ],
        notes: lossy
          ? [
              "With appendfsync everysec, losses are measured, not failures (Redis's documented trade-off).",
            ]
          : [],
        failures: baseFailures(h, finished, drained, { lossyStore: lossy }),
      };
    },
  };
  return scenario;
}
