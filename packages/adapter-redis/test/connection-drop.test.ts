/**
 * A real worker whose connections to Redis are dropped (TCP RST) while jobs run and their
 * acks are in flight. The worker reaches Redis through a TCP proxy written here; a drop
 * resets every socket through it, and ioredis reconnects through the proxy. Settling
 * calls that fail meanwhile are retried by core inside their leases, so a drop costs at
 * most one extra run (a job whose lease ran out first), not one per ack in flight.
 */
import { createServer, type Server, type Socket, connect as tcpConnect } from "node:net";
import { createTasklane, defineTask, type TasklaneEvents } from "@tasklane/core";
import { afterAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { createRedisAdapter } from "../src/index.ts";
import { type RedisServer, startRedis, waitFor } from "./helpers.ts";

interface DropProxy {
  port: number;
  /** Connections made through the proxy so far. */
  readonly connections: number;
  /** Reset (RST) every connection through the proxy, both sides. Returns how many. */
  drop(): number;
  close(): Promise<void>;
}

/** A TCP proxy to `port` on 127.0.0.1 that can reset every connection through it. */
async function startDropProxy(port: number): Promise<DropProxy> {
  const pairs = new Set<[Socket, Socket]>();
  let connections = 0;
  const server: Server = createServer((downstream) => {
    connections++;
    const upstream = tcpConnect(port, "127.0.0.1");
    const pair: [Socket, Socket] = [downstream, upstream];
    pairs.add(pair);
    const end = () => {
      pairs.delete(pair);
      downstream.destroy();
      upstream.destroy();
    };
    downstream.on("error", end).on("close", end);
    upstream.on("error", end).on("close", end);
    downstream.pipe(upstream);
    upstream.pipe(downstream);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const address = server.address();
  if (address === null || typeof address === "string") throw new Error("proxy has no port");
  return {
    port: address.port,
    get connections() {
      return connections;
    },
    drop() {
      const all = [...pairs];
      pairs.clear();
      for (const [down, up] of all) {
        down.resetAndDestroy();
        up.resetAndDestroy();
      }
      return all.length;
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const [down, up] of pairs) {
          down.destroy();
          up.destroy();
        }
        server.close(() => resolve());
      }),
  };
}

let server: RedisServer | undefined;
let proxy: DropProxy | undefined;
afterAll(async () => {
  await proxy?.close();
  await server?.stop();
});

describe("dropped connections", () => {
  it("cost at most one duplicate run per drop: failed acks are retried inside their leases", async () => {
    server = await startRedis();
    proxy = await startDropProxy(server.port);
    const p = proxy;
    const adapter = createRedisAdapter({
      connection: { host: "127.0.0.1", port: p.port },
      maxBlockMs: 500,
    });
    /** Runs per job id: the ledger a duplicate shows up in. */
    const runs = new Map<string, number>();
    const work = defineTask({
      name: "work",
      lane: "work",
      schema: z.object({ i: z.number() }),
      run: async (_payload, ctx) => {
        runs.set(ctx.jobId, (runs.get(ctx.jobId) ?? 0) + 1);
        await new Promise((r) => setTimeout(r, 1 + (ctx.attempt % 3)));
      },
    });
    const tl = createTasklane({
      adapter,
      lanes: [{ name: "work", leaseMs: 3_000, longPollMs: 500, batchSize: 50 }],
      tasks: [work],
    });
    const seen: { [K in keyof TasklaneEvents]?: Array<TasklaneEvents[K]> } = {};
    for (const name of ["succeeded", "lock_lost", "unconfirmed", "error"] as const) {
      const list: unknown[] = [];
      (seen as Record<string, unknown[]>)[name] = list;
      tl.events.on(name, (e: unknown) => list.push(e));
    }
    const total = 4_000;
    const drops = 5;
    let dropped = 0;
    let resets = 0;
    // Drop at evenly spaced points of progress, from inside a success: other jobs' acks
    // are in flight then, and the next ones are about to be sent.
    tl.events.on("succeeded", () => {
      const done = seen.succeeded?.length ?? 0;
      if (dropped < drops && done >= ((dropped + 1) * total) / (drops + 1)) {
        dropped++;
        resets += p.drop();
      }
    });
    try {
      const published = await tl.publishMany(
        work,
        Array.from({ length: total }, (_, i) => ({ payload: { i } })),
      );
      const worker = tl.worker({ concurrency: 50 });
      await worker.start();
      const lane = await adapter.lane("work", { maxStalls: 3, historyLimit: 20 });
      await waitFor(
        async () => {
          try {
            const c = await lane.counts();
            return c.succeeded === total && c.active === 0 && c.waiting === 0;
          } catch {
            return false; // reconnecting
          }
        },
        "every job to succeed",
        60_000,
      );
      await worker.stop();
      expect(dropped).toBe(drops);
      expect(resets).toBeGreaterThan(drops); // each drop reset the worker's connections
      expect(published.every((r) => (runs.get(r.id) ?? 0) >= 1)).toBe(true);
      const duplicates = [...runs.values()].reduce((sum, n) => sum + n - 1, 0);
      // Reported so a run shows how close to the bound it came.
      console.info(
        `connection drops: ${dropped}, duplicate runs: ${duplicates}, failed calls: ${seen.error?.length}, unconfirmed: ${seen.unconfirmed?.length}, lock_lost: ${seen.lock_lost?.length}`,
      );
      expect(seen.error?.length).toBeGreaterThan(0); // the drops did fail calls
      expect(duplicates).toBeLessThanOrEqual(drops);
      expect(seen.lock_lost).toEqual([]); // a reply after a reconnect is no proof of a lost lease
    } finally {
      await tl.close({ graceMs: 0 });
    }
  }, 120_000);
});
