import { defineTask, type Tasklane } from "@tasklane/core";
import type { NewJob, ReservedJob } from "@tasklane/core/adapter";
import { afterEach, describe, expect, it } from "vitest";
import { z } from "zod";
import { type Harness, need } from "./harness.ts";
import type { ConformanceOptions } from "./options.ts";
import { expectWindowFull, mostStartsInAWindow, startOf } from "./rate-limit-tests.ts";

/**
 * Each group's own rate limit (capabilities `groups` and `groupRateLimit`): at most
 * `groups.rateLimit.max` jobs of one group handed out in any window of `durationMs`, each
 * group counted apart; a group whose window is full is passed over while the others are
 * served, its jobs are not ready, and a reserve with nothing else says when its window
 * opens.
 */
export function registerGroupRateLimitTests(
  get: () => Harness,
  _options: ConformanceOptions,
): void {
  describe("groups.rateLimit (each group's own window)", () => {
    const open: Tasklane[] = [];
    afterEach(async () => {
      await Promise.all(open.splice(0).map((tl) => tl.close({ graceMs: 0 })));
    });

    const job = (h: Harness, id: string, group: string): NewJob =>
      h.job({ id, freshId: false, group });

    it("a group with a full window is passed over, the others served; it starts again as its window moves", async (ctx) => {
      const h = get();
      need(h.caps, ctx, "groups", "groupRateLimit");
      const durationMs = 4 * h.unit;
      const leaseMs = 50 * h.unit;
      const lane = await h.freshLane({ groups: { rateLimit: { max: 2, durationMs } } });
      await lane.put(["x1", "x2", "x3", "x4", "x5"].map((id) => job(h, id, "x")));
      await lane.put([job(h, "y1", "y")]);
      const taken: ReservedJob[] = [];

      const first = await lane.reserve({ limit: 20, leaseMs, waitMs: 0 });
      // Round-robin until x has used its window: x1, y1, x2; then only x has jobs.
      expect(first.jobs.map((j) => j.id)).toEqual(["x1", "y1", "x2"]);
      taken.push(...first.jobs);
      const firstStart = startOf(first.jobs[0] as ReservedJob, leaseMs);
      expectWindowFull(first, h, durationMs);
      expect(await lane.probe()).toBe(0);

      // The window counts starts: ending x's jobs frees none.
      expect(await lane.ack(first.jobs.map((j) => j.lock))).toEqual(["ok", "ok", "ok"]);
      expect((await lane.reserve({ limit: 20, leaseMs, waitMs: 0 })).jobs).toEqual([]);
      // Another group has a window of its own.
      await lane.put([job(h, "z1", "z")]);
      const z = await lane.reserve({ limit: 20, leaseMs, waitMs: 0 });
      expect(z.jobs.map((j) => j.id)).toEqual(["z1"]);
      expect(z.ready).toBe(0);

      // A long poll is served as x's window moves.
      const { poll } = await h.pollUntilWaiting(lane, {
        limit: 20,
        leaseMs,
        waitMs: 10 * durationMs,
      });
      await h.pass(durationMs);
      const second = await poll;
      expect(second.jobs.map((j) => j.id)).toEqual(["x3", "x4"]);
      taken.push(...second.jobs);
      expect(startOf(second.jobs[0] as ReservedJob, leaseMs)).toBeGreaterThanOrEqual(
        firstStart + durationMs,
      );
      expect(startOf(second.jobs[0] as ReservedJob, leaseMs)).toBeLessThan(
        firstStart + 3 * durationMs,
      );
      const xStarts = taken.filter((j) => j.id.startsWith("x")).map((j) => startOf(j, leaseMs));
      expect(mostStartsInAWindow(xStarts, durationMs)).toBe(2);
      expect(await lane.counts()).toMatchObject({ waiting: 1, active: 3, succeeded: 3 });
    });

    it("with groups.concurrency too, the smaller room wins, and ready counts only what may start", async (ctx) => {
      const h = get();
      need(h.caps, ctx, "groups", "groupRateLimit");
      const leaseMs = 50 * h.unit;
      const lane = await h.freshLane({
        groups: { concurrency: 1, rateLimit: { max: 2, durationMs: 200 * h.unit } },
      });
      await lane.put(["a1", "a2", "a3"].map((id) => job(h, id, "a")));
      await lane.put(["b1", "b2", "b3"].map((id) => job(h, id, "b")));
      const one = await lane.reserve({ limit: 1, leaseMs, waitMs: 0 });
      expect(one.jobs.map((j) => j.id)).toEqual(["a1"]);
      // a is at its concurrency; b may start one (its concurrency), not its window's two.
      expect(one.ready).toBe(1);
      const two = await lane.reserve({ limit: 20, leaseMs, waitMs: 0 });
      expect(two.jobs.map((j) => j.id)).toEqual(["b1"]);
      expect(two.ready).toBe(0);
      // An end frees a slot of each group; each window has one start left.
      expect(await lane.ack([...one.jobs, ...two.jobs].map((j) => j.lock))).toEqual(["ok", "ok"]);
      expect(await lane.probe()).toBe(2);
      const three = await lane.reserve({ limit: 20, leaseMs, waitMs: 0 });
      expect(three.jobs.map((j) => j.id)).toEqual(["a2", "b2"]);
      expect(await lane.ack(three.jobs.map((j) => j.lock))).toEqual(["ok", "ok"]);
      // Slots free, windows full: nothing starts, nothing is ready, and the answer says
      // when the windows open (the first starts' time plus durationMs), not never.
      const four = await lane.reserve({ limit: 20, leaseMs, waitMs: 0 });
      expect(four.jobs).toEqual([]);
      expect(four.ready).toBe(0);
      expect(four.nextDueAt).toBeDefined();
      expect(four.nextDueAt).toBeLessThanOrEqual(h.now() + 200 * h.unit);
      expect(await lane.counts()).toMatchObject({ waiting: 2, active: 0, succeeded: 4 });
    });

    it("a worker: no group starts more than max per window, and a quiet group is not held up by a busy one", async (ctx) => {
      const h = get();
      need(h.caps, ctx, "groups", "groupRateLimit");
      const max = 2;
      const durationMs = 5 * h.unit;
      const runs: Array<{ tenant: string; at: number }> = [];
      const work = defineTask({
        name: "work",
        lane: "tenants",
        schema: z.object({ tenant: z.string(), n: z.number() }),
        run: ({ tenant }) => {
          runs.push({ tenant, at: h.now() });
        },
      });
      const tl = h.client({
        lanes: [
          {
            name: "tenants",
            leaseMs: 50 * h.unit,
            longPollMs: 50 * h.unit,
            groups: { rateLimit: { max, durationMs } },
          },
        ],
        tasks: [work],
      });
      open.push(tl);
      let succeeded = 0;
      tl.events.on("succeeded", () => succeeded++);
      await tl.publishMany(
        work,
        Array.from({ length: 3 * max }, (_, n) => ({
          payload: { tenant: "busy", n },
          group: "busy",
        })),
      );
      const worker = tl.worker({ concurrency: 8 });
      await worker.start();
      await h.waitFor(() => runs.length >= max, "busy's first window");
      const firstAt = runs[0]?.at as number;
      // busy's window is full; quiet's jobs, published now, start inside it.
      await tl.publishMany(
        work,
        [0, 1].map((n) => ({ payload: { tenant: "quiet", n }, group: "quiet" })),
      );
      await h.waitFor(() => runs.filter((r) => r.tenant === "quiet").length === 2, "quiet's jobs");
      expect(h.now()).toBeLessThan(firstAt + durationMs);
      expect(runs.filter((r) => r.tenant === "busy")).toHaveLength(max);
      await h.waitFor(() => succeeded === 3 * max + 2, "every job to succeed", 60 * durationMs);
      await worker.stop();
      const busy = runs.filter((r) => r.tenant === "busy").map((r) => r.at);
      // Three windows for busy: its last pair two windows after its first (less the delay
      // between a start on the backend and its handler's run here).
      expect((busy[5] as number) - firstAt).toBeGreaterThanOrEqual(2 * durationMs - 50);
    });
  });
}
