/**
 * A real worker across a Redis restart: AOF on (fsync always), the server is killed with
 * SIGKILL while jobs run and started again on the same port. The worker resumes on its own
 * and every job whose ack Redis accepted is still succeeded afterwards.
 */
import { createTasklane, defineTask } from "@tasklane/core";
import { afterAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { createRedisAdapter } from "../src/index.ts";
import { type RedisServer, startRedis, waitFor } from "./helpers.ts";

let server: RedisServer | undefined;
afterAll(async () => {
  await server?.stop();
});

describe("redis restart", () => {
  it("resumes after the server restarts and loses no acknowledged job", async () => {
    server = await startRedis(["--appendonly", "yes", "--appendfsync", "always"]);
    const s = server;
    const adapter = createRedisAdapter({ connection: s.url, maxBlockMs: 500 });
    const work = defineTask({
      name: "work",
      lane: "work",
      schema: z.object({ i: z.number() }),
      run: async () => {
        await new Promise((r) => setTimeout(r, 2));
      },
    });
    const tl = createTasklane({
      adapter,
      lanes: [{ name: "work", leaseMs: 1_000, longPollMs: 500, batchSize: 10 }],
      tasks: [work],
    });
    tl.events.on("error", () => {});
    const acked = new Set<string>();
    tl.events.on("succeeded", (e) => acked.add(e.jobId));
    try {
      const before = await tl.publishMany(
        work,
        Array.from({ length: 300 }, (_, i) => ({ payload: { i } })),
      );
      const worker = tl.worker({ concurrency: 10 });
      await worker.start();
      await waitFor(() => acked.size >= 50, "some jobs done before the crash");
      await s.kill();
      const ackedBeforeCrash = [...acked];
      expect(ackedBeforeCrash.length).toBeLessThan(300); // the crash hit a running worker
      await s.restart();
      const after = await waitFor(async () => {
        try {
          return await tl.publishMany(
            work,
            Array.from({ length: 50 }, (_, i) => ({ payload: { i: 1_000 + i } })),
          );
        } catch {
          return undefined; // the client is still reconnecting
        }
      }, "publishing after the restart");
      const all = [...before, ...after].map((r) => r.id);
      const q = tl.lane("work");
      // An ack that reached Redis just before the crash may have lost its reply (no event):
      // such a job is done too, so "done" is read from Redis.
      await waitFor(
        async () => (await q.counts()).succeeded === all.length,
        "every job done",
        60_000,
      );
      for (const id of ackedBeforeCrash) {
        const info = await q.get(id);
        expect(info?.state, id).toBe("succeeded");
      }
      await worker.stop({ graceMs: 1_000 });
    } finally {
      await tl.close({ graceMs: 0 });
      await adapter.close();
    }
  }, 90_000);
});
