import { defineTask, type Tasklane } from "@tasklane/core";
import { afterEach, describe, expect, it } from "vitest";
import { z } from "zod";
import { type Harness, need } from "./harness.ts";
import type { ConformanceOptions } from "./options.ts";

/**
 * A job handed back with a later due time, its attempt not spent (capability `retryAfter`):
 * `release` with `runAt` on the lane, and `ctx.retryAfter(ms)` in a handler.
 */
export function registerRetryAfterTests(get: () => Harness, _options: ConformanceOptions): void {
  describe("retryAfter", () => {
    const open: Tasklane[] = [];
    afterEach(async () => {
      await Promise.all(open.splice(0).map((tl) => tl.close({ graceMs: 0 })));
    });

    it("release with runAt: delayed until then, then handed out with the same attempt", async (ctx) => {
      const h = get();
      need(h.caps, ctx, "retryAfter");
      const lane = await h.freshLane();
      await lane.put([h.job({ id: "r1", freshId: false })]);
      const [first] = (await lane.reserve({ limit: 1, leaseMs: 20 * h.unit, waitMs: 0 })).jobs;
      expect(first?.attempt).toBe(1);
      const runAt = h.now() + 3 * h.unit;
      expect(await lane.release([{ lock: first?.lock as never, uncounted: true, runAt }])).toEqual([
        "ok",
      ]);
      expect(await lane.counts()).toMatchObject({ waiting: 0, delayed: 1, active: 0 });
      expect((await lane.reserve({ limit: 1, leaseMs: 20 * h.unit, waitMs: 0 })).jobs).toEqual([]);
      const again = await h.waitFor(async () => {
        const { jobs } = await lane.reserve({ limit: 1, leaseMs: 20 * h.unit, waitMs: 0 });
        return jobs[0];
      }, "the released job due again");
      expect(h.now()).toBeGreaterThanOrEqual(runAt);
      expect(again.id).toBe("r1");
      expect(again.attempt).toBe(1);
    });

    it("release with runAt and a report: delayed, the report stored", async (ctx) => {
      const h = get();
      need(h.caps, ctx, "retryAfter");
      need(h.caps, ctx, "reports");
      need(h.caps, ctx, "get");
      const lane = await h.freshLane();
      await lane.put([h.job({ id: "r2", freshId: false })]);
      const [held] = (await lane.reserve({ limit: 1, leaseMs: 20 * h.unit, waitMs: 0 })).jobs;
      const log = { at: 1, attempt: 1, message: "rate limited" };
      const runAt = h.now() + 3 * h.unit;
      expect(
        await lane.release([
          {
            lock: held?.lock as never,
            uncounted: true,
            runAt,
            report: { progress: "0.25", logs: [log] },
          },
        ]),
      ).toEqual(["ok"]);
      expect(await lane.counts()).toMatchObject({ waiting: 0, delayed: 1, active: 0 });
      expect(await lane.get?.("r2")).toMatchObject({
        state: "delayed",
        progress: "0.25",
        logs: [log],
      });
    });

    it("ctx.retryAfter(ms): runs again after ms, the attempt not spent", async (ctx) => {
      const h = get();
      need(h.caps, ctx, "retryAfter");
      const runs: Array<{ attempt: number; at: number }> = [];
      const delayMs = 3 * h.unit;
      const limited = defineTask({
        name: "limited",
        lane: "work",
        schema: z.object({}),
        retry: { maxAttempts: 1 },
        run: async (_p, c) => {
          runs.push({ attempt: c.attempt, at: h.now() });
          if (runs.length < 3) throw c.retryAfter(delayMs);
        },
      });
      const tl = h.client({
        lanes: [{ name: "work", leaseMs: 20 * h.unit, longPollMs: h.unit }],
        tasks: [limited],
      });
      open.push(tl);
      const retrying: unknown[] = [];
      tl.events.on("retrying", (e) => retrying.push(e));
      let succeeded = 0;
      tl.events.on("succeeded", () => succeeded++);
      await tl.publish(limited, {});
      const worker = tl.worker();
      await worker.start();
      await h.waitFor(() => succeeded === 1, "the third run to succeed");
      await worker.stop();
      // maxAttempts 1, yet three runs: none spent an attempt
      expect(runs.map((r) => r.attempt)).toEqual([1, 1, 1]);
      expect((runs[1]?.at ?? 0) - (runs[0]?.at ?? 0)).toBeGreaterThanOrEqual(delayMs);
      expect((runs[2]?.at ?? 0) - (runs[1]?.at ?? 0)).toBeGreaterThanOrEqual(delayMs);
      expect(retrying).toEqual([]);
    });
  });
}
