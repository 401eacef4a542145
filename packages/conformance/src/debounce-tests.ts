import { defineTask, type Tasklane } from "@tasklane/core";
import type { NewJob } from "@tasklane/core/adapter";
import { afterEach, describe, expect, it } from "vitest";
import { z } from "zod";
import { type Harness, need } from "./harness.ts";
import type { ConformanceOptions } from "./options.ts";

/**
 * Debounce and throttle by key (capability `debounce`): a put whose key has a window open
 * on a job never handed out stores nothing and names that job; keep "last" replaces its
 * payload, keep "first" drops the new one; a started job or an ended window lets the next
 * put create a job.
 */
export function registerDebounceTests(get: () => Harness, _options: ConformanceOptions): void {
  describe("debounce", () => {
    const open: Tasklane[] = [];
    afterEach(async () => {
      await Promise.all(open.splice(0).map((tl) => tl.close({ graceMs: 0 })));
    });

    /** A job of `key` with a window of `ms` from now, as core makes it for `keep`. */
    const debounced = (
      h: Harness,
      key: string,
      ms: number,
      keep: "last" | "first",
      payload: string,
      extra: Partial<NewJob> = {},
    ): NewJob => {
      const until = h.now() + ms;
      return h.job({
        payload,
        debounce: { key, until, keep },
        ...(keep === "last" ? { runAt: until } : {}),
        ...extra,
      });
    };

    it('keep "last": later puts in the window replace the payload of the one job, which runs at its end', async (ctx) => {
      const h = get();
      need(h.caps, ctx, "debounce");
      const lane = await h.freshLane();
      const ms = 5 * h.unit;
      const first = debounced(h, "k", ms, "last", '"a"');
      expect(await lane.put([first])).toEqual([{ id: first.id, status: "created" }]);
      const second = debounced(h, "k", ms, "last", '"b"');
      const third = debounced(h, "k", ms, "last", '"c"');
      expect(await lane.put([second, third])).toEqual([
        { id: first.id, status: "debounced" },
        { id: first.id, status: "debounced" },
      ]);
      expect(await lane.counts()).toMatchObject({ waiting: 0, delayed: 1 });
      expect((await lane.reserve({ limit: 5, leaseMs: 50 * h.unit, waitMs: 0 })).jobs).toEqual([]);
      const job = await h.waitFor(async () => {
        const { jobs } = await lane.reserve({ limit: 5, leaseMs: 50 * h.unit, waitMs: 0 });
        return jobs[0];
      }, "the debounced job at the window's end");
      expect(job.id).toBe(first.id);
      expect(job.payload).toBe('"c"');
      // Started: the next put of the key opens a new window with a new job.
      const fourth = debounced(h, "k", ms, "last", '"d"');
      expect(await lane.put([fourth])).toEqual([{ id: fourth.id, status: "created" }]);
    });

    it('keep "first": later puts in the window are dropped while the job waits; once it started, a new job', async (ctx) => {
      const h = get();
      need(h.caps, ctx, "debounce");
      const lane = await h.freshLane();
      const ms = 50 * h.unit;
      const first = debounced(h, "t", ms, "first", '"a"');
      const second = debounced(h, "t", ms, "first", '"b"');
      expect(await lane.put([first, second])).toEqual([
        { id: first.id, status: "created" },
        { id: first.id, status: "debounced" },
      ]);
      const { jobs } = await lane.reserve({ limit: 5, leaseMs: 50 * h.unit, waitMs: 0 });
      expect(jobs.map((j) => [j.id, j.payload])).toEqual([[first.id, '"a"']]);
      // inside the window still, but the job has started
      const third = debounced(h, "t", ms, "first", '"c"');
      expect(await lane.put([third])).toEqual([{ id: third.id, status: "created" }]);
      expect(await lane.counts()).toMatchObject({ waiting: 1, active: 1 });
    });

    it("a window ends: the next put creates a job; keys are per task", async (ctx) => {
      const h = get();
      need(h.caps, ctx, "debounce");
      const lane = await h.freshLane();
      // Long enough that the second put lands inside the window on a loaded machine too
      // (with 2 units it failed once in real time beside a mutation run; the window
      // ending between the two puts is the likely cause).
      const ms = 5 * h.unit;
      const a = debounced(h, "w", ms, "first", '"a"');
      const other = debounced(h, "w", ms, "first", '"x"', { task: "another-task" });
      expect(await lane.put([a, other])).toEqual([
        { id: a.id, status: "created" },
        { id: other.id, status: "created" },
      ]);
      const inside = debounced(h, "w", ms, "first", '"a2"');
      expect(await lane.put([inside])).toEqual([{ id: a.id, status: "debounced" }]);
      await h.pass(ms);
      const b = debounced(h, "w", ms, "first", '"b"');
      expect(await lane.put([b])).toEqual([{ id: b.id, status: "created" }]);
      expect(await lane.counts()).toMatchObject({ waiting: 3 });
    });

    it("publish with debounce: one job runs, with the last payload; every publish returns its id", async (ctx) => {
      const h = get();
      need(h.caps, ctx, "debounce");
      const runs: Array<{ id: string; n: number }> = [];
      const task = defineTask({
        name: "debounced",
        lane: "work",
        schema: z.object({ n: z.number() }),
        run: async (p, c) => {
          runs.push({ id: c.jobId, n: p.n });
        },
      });
      const tl = h.client({
        lanes: [{ name: "work", leaseMs: 20 * h.unit, longPollMs: h.unit }],
        tasks: [task],
      });
      open.push(tl);
      const debounce = { key: "user-7", ms: 3 * h.unit };
      const results = [];
      for (let n = 1; n <= 3; n++) results.push(await tl.publish(task, { n }, { debounce }));
      const id = results[0]?.id;
      expect(results.map((r) => r.status)).toEqual(["created", "debounced", "debounced"]);
      expect(results.map((r) => r.id)).toEqual([id, id, id]);
      let succeeded = 0;
      tl.events.on("succeeded", () => succeeded++);
      const worker = tl.worker();
      await worker.start();
      await h.waitFor(() => succeeded === 1, "the debounced job to run");
      await worker.stop();
      expect(runs).toEqual([{ id, n: 3 }]);
    });
  });
}
