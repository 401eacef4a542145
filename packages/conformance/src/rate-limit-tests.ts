import { defineTask, type Tasklane } from "@tasklane/core";
import type { ReservedJob, ReserveResult } from "@tasklane/core/adapter";
import { afterEach, describe, expect, it } from "vitest";
import { z } from "zod";
import { type Harness, need } from "./harness.ts";
import type { ConformanceOptions } from "./options.ts";

/** When the backend handed `job` out: its lease's end less the lease (the backend's clock). */
export const startOf = (job: ReservedJob, leaseMs: number) => job.lock.expiresAt - leaseMs;

/** A reserve that met a full window: nothing more to take now, and told when it opens. */
export function expectWindowFull(r: ReserveResult, h: Harness, durationMs: number): void {
  expect(r.ready).toBe(0);
  expect(r.nextDueAt).toBeGreaterThan(h.now() + durationMs / 2);
  expect(r.nextDueAt).toBeLessThanOrEqual(h.now() + durationMs);
}

/** The most starts inside any window [s, s + durationMs) that begins at a start. */
export function mostStartsInAWindow(starts: number[], durationMs: number): number {
  const sorted = [...starts].sort((a, b) => a - b);
  let most = 0;
  let j = 0;
  for (let i = 0; i < sorted.length; i++) {
    const from = sorted[i] as number;
    if (j < i) j = i;
    while (j < sorted.length && (sorted[j] as number) < from + durationMs) j++;
    most = Math.max(most, j - i);
  }
  return most;
}

/**
 * A lane's rate limit (capability `rateLimit`): at most `max` jobs handed out in any
 * window of `durationMs`, the rest handed out as the window moves; a rate-limited lane
 * never holds up another lane of the same worker.
 */
export function registerRateLimitTests(get: () => Harness, _options: ConformanceOptions): void {
  describe("rateLimit", () => {
    const open: Tasklane[] = [];
    afterEach(async () => {
      await Promise.all(open.splice(0).map((tl) => tl.close({ graceMs: 0 })));
    });

    it("a burst of 3 * max jobs: max start per window, the rest as the window moves", async (ctx) => {
      const h = get();
      need(h.caps, ctx, "rateLimit");
      const max = 3;
      const durationMs = 4 * h.unit;
      const leaseMs = 50 * h.unit;
      const lane = await h.freshLane({ rateLimit: { max, durationMs } });
      await lane.put(Array.from({ length: 3 * max }, (_, i) => h.job({ id: `j${i}` })));
      const taken: ReservedJob[] = [];

      const first = await lane.reserve({ limit: 20, leaseMs, waitMs: 0 });
      expect(first.jobs.map((j) => j.id)).toEqual(["j0", "j1", "j2"]);
      taken.push(...first.jobs);
      const firstStart = startOf(first.jobs[0] as ReservedJob, leaseMs);
      // Nothing more to take now, and when that changes: as the window moves.
      expectWindowFull(first, h, durationMs);

      // Finishing the jobs frees no start (unlike maxConcurrency): the window counts starts.
      expect(await lane.ack(first.jobs.map((j) => j.lock))).toEqual(["ok", "ok", "ok"]);
      const full = await lane.reserve({ limit: 20, leaseMs, waitMs: 0 });
      expect(full.jobs).toEqual([]);
      expect(full.ready).toBe(0);
      expect(full.nextDueAt).toBeDefined();
      expect(await lane.counts()).toMatchObject({ waiting: 6, active: 0, succeeded: 3 });
      // A selector's probe sees the full window too: nothing to take, so no empty reserve.
      expect(await lane.probe()).toBe(0);

      // A long poll waits for the window to move, and is served then.
      const { poll } = await h.pollUntilWaiting(lane, {
        limit: 20,
        leaseMs,
        waitMs: 10 * durationMs,
      });
      await h.pass(durationMs);
      const second = await poll;
      expect(second.jobs.map((j) => j.id)).toEqual(["j3", "j4", "j5"]);
      taken.push(...second.jobs);
      expect(startOf(second.jobs[0] as ReservedJob, leaseMs)).toBeGreaterThanOrEqual(
        firstStart + durationMs,
      );

      await h.pass(durationMs);
      const third = await h.waitFor(async () => {
        const r = await lane.reserve({ limit: 20, leaseMs, waitMs: 0 });
        taken.push(...r.jobs);
        return r.jobs.length > 0 && r;
      }, "the third window");
      expect(third.jobs.map((j) => j.id)).toEqual(["j6", "j7", "j8"]);

      // Each job handed out once, and no window of durationMs saw more than max starts.
      expect(taken.map((j) => j.id).sort()).toEqual(
        Array.from({ length: 3 * max }, (_, i) => `j${i}`).sort(),
      );
      expect(
        mostStartsInAWindow(
          taken.map((j) => startOf(j, leaseMs)),
          durationMs,
        ),
      ).toBe(max);
      expect(await lane.counts()).toMatchObject({ waiting: 0, active: 6, succeeded: 3 });
    });

    it("a window with room for fewer than limit hands out only that many", async (ctx) => {
      const h = get();
      need(h.caps, ctx, "rateLimit");
      const leaseMs = 50 * h.unit;
      const lane = await h.freshLane({ rateLimit: { max: 5, durationMs: 20 * h.unit } });
      await lane.put(Array.from({ length: 8 }, (_, i) => h.job({ id: `k${i}` })));
      const a = await lane.reserve({ limit: 2, leaseMs, waitMs: 0 });
      expect(a.jobs.map((j) => j.id)).toEqual(["k0", "k1"]);
      expect(a.ready).toBe(3);
      expect(await lane.probe()).toBe(3);
      const b = await lane.reserve({ limit: 10, leaseMs, waitMs: 0 });
      expect(b.jobs.map((j) => j.id)).toEqual(["k2", "k3", "k4"]);
      expect(b.ready).toBe(0);
      expect(b.nextDueAt).toBeDefined();
      expect(await lane.probe()).toBe(0);
      // A job handed back is handed out again only as a new start.
      expect(await lane.release([{ lock: b.jobs[0]?.lock as never, uncounted: true }])).toEqual([
        "ok",
      ]);
      expect((await lane.reserve({ limit: 10, leaseMs, waitMs: 0 })).jobs).toEqual([]);
    });

    it("a lane without a limit again hands out everything", async (ctx) => {
      const h = get();
      need(h.caps, ctx, "rateLimit");
      const name = h.uniqueName();
      const limited = await h.adapter.lane(name, {
        maxStalls: 3,
        historyLimit: 20,
        rateLimit: { max: 1, durationMs: 100 * h.unit },
      });
      await limited.put([h.job({ id: "a" }), h.job({ id: "b" }), h.job({ id: "c" })]);
      expect(
        (await limited.reserve({ limit: 5, leaseMs: 50 * h.unit, waitMs: 0 })).jobs,
      ).toHaveLength(1);
      const free = await h.adapter.lane(name, { maxStalls: 3, historyLimit: 20 });
      const rest = await free.reserve({ limit: 5, leaseMs: 50 * h.unit, waitMs: 0 });
      expect(rest.jobs.map((j) => j.id)).toEqual(["b", "c"]);
    });

    it("a worker: the limited lane runs max per window, each job once, and another lane is not held up", async (ctx) => {
      const h = get();
      need(h.caps, ctx, "rateLimit");
      const max = 2;
      const durationMs = 5 * h.unit;
      const runs: Array<{ id: string; lane: string; at: number }> = [];
      const slow = defineTask({
        name: "limited",
        lane: "limited",
        schema: z.object({ n: z.number() }),
        run: async (p) => {
          runs.push({ id: `l${p.n}`, lane: "limited", at: h.now() });
        },
      });
      const other = defineTask({
        name: "other",
        lane: "free",
        schema: z.object({ n: z.number() }),
        run: async (p) => {
          runs.push({ id: `f${p.n}`, lane: "free", at: h.now() });
        },
      });
      const tl = h.client({
        lanes: [
          {
            name: "limited",
            priority: 1000,
            leaseMs: 50 * h.unit,
            longPollMs: 50 * h.unit,
            rateLimit: { max, durationMs },
          },
          { name: "free", priority: 1, leaseMs: 50 * h.unit, longPollMs: 50 * h.unit },
        ],
        tasks: [slow, other],
      });
      open.push(tl);
      let succeeded = 0;
      tl.events.on("succeeded", () => succeeded++);
      for (let n = 0; n < 3 * max; n++) await tl.publish(slow, { n });
      const worker = tl.worker({ concurrency: 4 });
      await worker.start();
      await h.waitFor(() => runs.length >= max, "the first window's starts");
      const firstAt = runs[0]?.at as number;
      // The limited lane's window is full: the other lane's jobs, published now, run at once.
      for (let n = 0; n < 3; n++) await tl.publish(other, { n });
      await h.waitFor(() => runs.filter((r) => r.lane === "free").length === 3, "the free lane");
      // ...inside the limited lane's first window, which is still full.
      expect(h.now()).toBeLessThan(firstAt + durationMs);
      expect(runs.filter((r) => r.lane === "limited")).toHaveLength(max);
      await h.waitFor(() => succeeded === 3 * max + 3, "every job to succeed", 60 * durationMs);
      await worker.stop();
      const limited = runs.filter((r) => r.lane === "limited");
      expect(limited.map((r) => r.id).sort()).toEqual(["l0", "l1", "l2", "l3", "l4", "l5"]);
      // Three windows: the last pair started two windows after the first, give or take
      // the delay between a start on the backend and its handler's run in this process.
      expect((limited[5]?.at as number) - firstAt).toBeGreaterThanOrEqual(2 * durationMs - 50);
    });
  });
}
