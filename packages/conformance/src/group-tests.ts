import { ConfigError, createTasklane, defineTask, type Tasklane } from "@tasklane/core";
import type { LaneStore, NewJob, ReservedJob } from "@tasklane/core/adapter";
import { afterEach, describe, expect, it } from "vitest";
import { z } from "zod";
import { type Harness, need } from "./harness.ts";
import type { ConformanceOptions } from "./options.ts";

/**
 * Fair groups (capability `groups`): a lane opened with `groups` serves its jobs' groups
 * round-robin, one job per group per turn, and runs at most `groups.concurrency` jobs of
 * one group at once, across every reserve.
 */
export function registerGroupTests(get: () => Harness, _options: ConformanceOptions): void {
  describe("fair groups", () => {
    const open: Tasklane[] = [];
    afterEach(async () => {
      await Promise.all(open.splice(0).map((tl) => tl.close({ graceMs: 0 })));
    });

    const job = (h: Harness, id: string, group?: string): NewJob =>
      h.job({ id, freshId: false, ...(group === undefined ? {} : { group }) });
    const take = async (lane: LaneStore, limit: number, leaseMs: number) =>
      (await lane.reserve({ limit, leaseMs, waitMs: 0 })).jobs;

    it("serves the groups round-robin, each group's jobs in the lane's order", async (ctx) => {
      const h = get();
      need(h.caps, ctx, "groups");
      const lane = await h.freshLane({ groups: {} });
      await lane.put(["a1", "a2", "a3", "a4"].map((id) => job(h, id, "A")));
      await lane.put([job(h, "b1", "B"), job(h, "u1"), job(h, "b2", "B")]);
      // A joined the ring first, then B, then the ungrouped jobs.
      const got = await take(lane, 10, 30 * h.unit);
      expect(got.map((j) => j.id)).toEqual(["a1", "b1", "u1", "a2", "b2", "a3", "a4"]);
    });

    it("a small group is not starved by a big one's backlog", async (ctx) => {
      const h = get();
      need(h.caps, ctx, "groups");
      const lane = await h.freshLane({ groups: {} });
      await lane.put(Array.from({ length: 200 }, (_, i) => job(h, `big-${i}`, "big")));
      await lane.put([job(h, "small-0", "small"), job(h, "small-1", "small")]);
      const first = await take(lane, 2, 30 * h.unit);
      const second = await take(lane, 2, 30 * h.unit);
      expect([...first, ...second].map((j) => j.id)).toEqual([
        "big-0",
        "small-0",
        "big-1",
        "small-1",
      ]);
    });

    it("runs at most groups.concurrency jobs of one group at once, across reserves", async (ctx) => {
      const h = get();
      need(h.caps, ctx, "groups");
      const lane = await h.freshLane({ groups: { concurrency: 2 } });
      await lane.put(["a1", "a2", "a3", "a4"].map((id) => job(h, id, "A")));
      await lane.put([job(h, "b1", "B")]);
      const first = await take(lane, 10, 30 * h.unit);
      expect(first.map((j) => j.id)).toEqual(["a1", "b1", "a2"]);
      // A is at its limit: another reserve (another worker) gets nothing, and nothing is
      // reported takeable (a worker would otherwise poll in a loop).
      const again = await lane.reserve({ limit: 10, leaseMs: 30 * h.unit, waitMs: 0 });
      expect(again.jobs).toEqual([]);
      expect(again.ready).toBe(0);
      // One of A's ends: the next of A's can start, one only.
      const lockOf = (i: number) => (first[i] as ReservedJob).lock;
      expect(await lane.ack([lockOf(0)])).toEqual(["ok"]);
      expect((await take(lane, 10, 30 * h.unit)).map((j) => j.id)).toEqual(["a3"]);
      // A failed run frees its slot too.
      expect(
        await lane.nack([
          { lock: lockOf(2), runAt: 0, error: { name: "E", message: "m", reason: "error" } },
        ]),
      ).toEqual(["ok"]);
      expect((await take(lane, 10, 30 * h.unit)).map((j) => j.id)).toEqual(["a2"]);
      expect(await lane.counts()).toMatchObject({ waiting: 1, active: 3 });
    });

    it("a job that waits again goes back into its group: release, lease run out, cancel", async (ctx) => {
      const h = get();
      need(h.caps, ctx, "groups");
      const lane = await h.freshLane({ groups: {} });
      // a release: a1 back at the front of A, which is behind B now
      await lane.put([job(h, "a1", "A"), job(h, "a2", "A"), job(h, "b1", "B")]);
      const [a1] = await take(lane, 1, 30 * h.unit);
      expect(a1?.id).toBe("a1");
      expect(await lane.release([{ lock: (a1 as ReservedJob).lock, uncounted: true }])).toEqual([
        "ok",
      ]);
      const again = await take(lane, 10, 30 * h.unit);
      expect(again.map((j) => j.id)).toEqual(["b1", "a1", "a2"]);
      // leases that run out: c1 back into C, ahead of c2 (put later); D joins behind C
      await lane.put([job(h, "c1", "C"), job(h, "d1", "D")]);
      expect((await take(lane, 10, h.unit)).map((j) => j.id)).toEqual(["c1", "d1"]);
      await lane.put([job(h, "c2", "C")]);
      await h.pass(3 * h.unit);
      expect((await take(lane, 10, 30 * h.unit)).map((j) => j.id)).toEqual(["c1", "d1", "c2"]);
      // a canceled waiting job leaves its group: not handed out, not counted
      await lane.put([job(h, "e1", "E"), job(h, "e2", "E"), job(h, "f1", "F")]);
      expect(await lane.cancel?.(["e1"])).toEqual(["canceled"]);
      expect((await lane.counts()).waiting).toBe(2);
      expect((await take(lane, 10, 30 * h.unit)).map((j) => j.id)).toEqual(["e2", "f1"]);
      expect((await lane.counts()).waiting).toBe(0);
    });

    it("promote, retryFailed and setPriority put the job into its group", async (ctx) => {
      const h = get();
      need(h.caps, ctx, "groups", "promote", "retryFailed", "changePriority");
      const lane = await h.freshLane({ groups: {} });
      // promote: the delayed a1's group joins the ring then, behind B
      await lane.put([
        h.job({ id: "a1", freshId: false, group: "A", runAt: h.now() + 3_600_000 }),
        job(h, "b1", "B"),
        job(h, "b2", "B"),
      ]);
      expect(await lane.promote?.(["a1"])).toEqual(["ok"]);
      expect((await take(lane, 10, 30 * h.unit)).map((j) => j.id)).toEqual(["b1", "a1", "b2"]);
      // retryFailed: a failed job's group joins the ring's end again
      await lane.put([job(h, "c1", "C"), job(h, "d1", "D")]);
      const [c1] = await take(lane, 1, 30 * h.unit);
      expect(
        await lane.nack([
          {
            lock: (c1 as ReservedJob).lock,
            dead: true,
            error: { name: "E", message: "m", reason: "error" },
          },
        ]),
      ).toEqual(["ok"]);
      expect(await lane.retryFailed?.(["c1"])).toBe(1);
      expect((await take(lane, 10, 30 * h.unit)).map((j) => j.id)).toEqual(["d1", "c1"]);
      // setPriority: the group's order changes, the ring's does not
      await lane.put([job(h, "e1", "E"), job(h, "e2", "E"), job(h, "f1", "F")]);
      expect(await lane.setPriority?.(["e2"], 5)).toEqual(["ok"]);
      expect((await take(lane, 10, 30 * h.unit)).map((j) => j.id)).toEqual(["e2", "f1", "e1"]);
    });

    it("a job moved into a grouped lane keeps its group", async (ctx) => {
      const h = get();
      need(h.caps, ctx, "groups", "move");
      const from = await h.freshLane({ groups: {} });
      const to = await h.freshLane({ groups: { concurrency: 1 } });
      await to.put([job(h, "a0", "A")]);
      const [a0] = await take(to, 1, 30 * h.unit);
      await from.put([job(h, "a1", "A")]);
      expect(await from.move?.(["a1"], to)).toEqual(["moved"]);
      expect((await to.get?.("a1"))?.group).toBe("A");
      await to.put([job(h, "b1", "B")]);
      // A is at its limit with a0 running: a1 waits for it, b1 does not
      expect((await take(to, 10, 30 * h.unit)).map((j) => j.id)).toEqual(["b1"]);
      expect(await to.ack([(a0 as ReservedJob).lock])).toEqual(["ok"]);
      expect((await take(to, 10, 30 * h.unit)).map((j) => j.id)).toEqual(["a1"]);
      expect(await from.counts()).toMatchObject({ waiting: 0 });
    });

    it("client: publish with group; refused without the lane's groups option, or empty", async (ctx) => {
      const h = get();
      need(h.caps, ctx, "groups");
      const ran: string[] = [];
      const work = defineTask({
        name: "work",
        lane: "fair",
        schema: z.object({ tenant: z.string(), n: z.number() }),
        run: ({ tenant, n }) => {
          ran.push(`${tenant}${n}`);
        },
      });
      const plain = defineTask({
        name: "plain",
        lane: "plain",
        schema: z.object({}),
        run: () => {},
      });
      const tl = createTasklane({
        adapter: h.adapter,
        closeAdapter: false,
        clock: h.clock,
        namespace: h.uniqueName("ns").replace(/[^A-Za-z0-9_-]/g, ""),
        lanes: [
          { name: "fair", groups: { concurrency: 1 }, leaseMs: 20 * h.unit, longPollMs: h.unit },
          { name: "plain" },
        ],
        tasks: [work, plain],
      });
      open.push(tl);
      await tl.publishMany(
        work,
        [1, 2, 3].map((n) => ({ payload: { tenant: "a", n }, group: "a" })),
      );
      const { id } = await tl.publish(work, { tenant: "b", n: 1 }, { group: "b" });
      expect((await tl.getJob(id))?.group).toBe("b");
      await expect(tl.publish(plain, {}, { group: "a" })).rejects.toBeInstanceOf(ConfigError);
      await expect(tl.publish(work, { tenant: "a", n: 9 }, { group: "" })).rejects.toBeInstanceOf(
        ConfigError,
      );
      const worker = tl.worker({ concurrency: 4 });
      await worker.start();
      await h.waitFor(() => ran.length === 4, "every job to run");
      await worker.stop();
      // b's one job ran before a's last two: one job per group per turn.
      expect(ran.indexOf("b1")).toBeLessThan(ran.indexOf("a2"));
    });
  });
}
