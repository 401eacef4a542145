import { defineTask, type Tasklane } from "@tasklane/core";
import type {
  DependencyPolicy,
  FlowItem,
  JobInfo,
  LaneStore,
  NewJob,
  ReservedJob,
} from "@tasklane/core/adapter";
import { afterEach, describe, expect, it } from "vitest";
import { z } from "zod";
import { type Harness, method, need } from "./harness.ts";
import type { ConformanceOptions } from "./options.ts";

/**
 * Flows (capability `flows`): `putFlow` stores jobs of several lanes at once, a job with
 * dependencies blocked until they end; each dependency's end counted once in the job
 * waiting for it, by its onFailure ("fail", "ignore", "continue"); a dependency put
 * earlier, or already ended; nothing written when one job is a duplicate or one
 * dependency is missing; blocked jobs counted, listed, got, canceled.
 */
export function registerFlowTests(get: () => Harness, _options: ConformanceOptions): void {
  describe("flows", () => {
    const open: Tasklane[] = [];
    afterEach(async () => {
      await Promise.all(open.splice(0).map((tl) => tl.close({ graceMs: 0 })));
    });

    const putFlow = (h: Harness, items: FlowItem[]) => {
      const fn = h.adapter.putFlow;
      if (typeof fn !== "function") {
        throw new Error(`adapter "${h.adapter.name}" has no putFlow() although it declares flows`);
      }
      return fn.call(h.adapter, items);
    };
    const dep = (lane: LaneStore, job: NewJob, onFailure: DependencyPolicy = "fail") => ({
      lane: lane.name,
      id: job.id,
      onFailure,
    });
    const take = async (h: Harness, lane: LaneStore, limit = 10): Promise<ReservedJob[]> =>
      (await lane.reserve({ limit, leaseMs: 50 * h.unit, waitMs: 0 })).jobs;
    /** Reserve the job `id`, the next one `lane` hands out (waiting for it to be due). */
    const takeOne = async (h: Harness, lane: LaneStore, id: string) => {
      const job = await h.waitFor(async () => (await take(h, lane, 1))[0], `job ${id} handed out`);
      expect(job.id).toBe(id);
      return job;
    };
    const state = async (lane: LaneStore, id: string) => (await method(lane, "get")(id))?.state;
    const deadError = (message: string) => ({
      name: "Error",
      message,
      reason: "error" as const,
    });

    it("a parent is blocked until its children on two lanes ended, then waiting; never handed out before", async (ctx) => {
      const h = get();
      need(h.caps, ctx, "flows", "get");
      const a = await h.freshLane();
      const b = await h.freshLane();
      const childA = h.job({ task: "child-a" });
      const childB = h.job({ task: "child-b" });
      const parent = h.job({ task: "parent", dependsOn: [dep(a, childA), dep(b, childB)] });
      expect(
        await putFlow(h, [
          { lane: a, job: childA },
          { lane: b, job: childB },
          { lane: a, job: parent },
        ]),
      ).toEqual({ status: "created" });
      expect(await a.counts()).toMatchObject({ waiting: 1, blocked: 1, active: 0 });
      expect(await b.counts()).toMatchObject({ waiting: 1, blocked: 0 });
      expect(await state(a, parent.id)).toBe("blocked");
      expect(await a.probe()).toBe(1);
      const [heldA, ...restA] = await take(h, a);
      expect(heldA?.id).toBe(childA.id);
      expect(restA).toEqual([]);
      expect(await a.ack([heldA?.lock as never])).toEqual(["ok"]);
      // one child ended: still blocked, nothing to take
      expect(await state(a, parent.id)).toBe("blocked");
      expect(await take(h, a)).toEqual([]);
      const heldB = await takeOne(h, b, childB.id);
      expect(await b.ack([heldB.lock])).toEqual(["ok"]);
      expect(await a.counts()).toMatchObject({ waiting: 1, blocked: 0, succeeded: 1 });
      const ran = await takeOne(h, a, parent.id);
      expect(ran.task).toBe("parent");
      const info = (await method(a, "get")(parent.id)) as JobInfo;
      expect(info.dependencies).toEqual([
        { lane: a.name, id: childA.id, task: "child-a", onFailure: "fail", state: "succeeded" },
        { lane: b.name, id: childB.id, task: "child-b", onFailure: "fail", state: "succeeded" },
      ]);
      expect(info.history.map((e) => e.event)).toContain("unblocked");
      expect((await method(b, "get")(childB.id))?.dependents).toEqual([
        { lane: a.name, jobId: parent.id },
      ]);
    });

    it('"fail": a child that goes dead fails the parent at once (reason dependency_failed, naming it); the other child runs on', async (ctx) => {
      const h = get();
      need(h.caps, ctx, "flows", "get");
      const lane = await h.freshLane();
      const bad = h.job({ task: "bad" });
      const good = h.job({ task: "good" });
      const parent = h.job({ dependsOn: [dep(lane, bad), dep(lane, good)] });
      await putFlow(h, [
        { lane, job: bad },
        { lane, job: good },
        { lane, job: parent },
      ]);
      const held = await h.reserveAll(lane, 2, 50 * h.unit);
      const heldBad = held.find((j) => j.id === bad.id) as ReservedJob;
      const heldGood = held.find((j) => j.id === good.id) as ReservedJob;
      expect(
        await lane.nack([{ lock: heldBad.lock, dead: true, error: deadError("boom") }]),
      ).toEqual(["ok"]);
      const info = (await method(lane, "get")(parent.id)) as JobInfo;
      expect(info.state).toBe("failed");
      expect(info.attempt).toBe(0);
      expect(info.error?.reason).toBe("dependency_failed");
      expect(info.error?.name).toBe("DependencyFailedError");
      expect(info.error?.message).toContain(bad.id);
      expect(info.history.find((e) => e.event === "failed")?.detail).toBe("dependency_failed");
      expect(info.dependencies?.map((d) => d.state)).toEqual(["failed", undefined]);
      // the other child is not touched, and its end changes nothing more
      expect(await lane.ack([heldGood.lock])).toEqual(["ok"]);
      expect(await state(lane, parent.id)).toBe("failed");
      expect((await method(lane, "get")(parent.id))?.dependencies?.map((d) => d.state)).toEqual([
        "failed",
        "succeeded",
      ]);
      expect(await take(h, lane)).toEqual([]);
    });

    it("a child re-prioritised or promoted (its record copied) still ends for its parent", async (ctx) => {
      const h = get();
      need(h.caps, ctx, "flows", "get", "changePriority", "promote");
      const lane = await h.freshLane();
      const waitingChild = h.job({ task: "w" });
      const delayedChild = h.job({ task: "d", runAt: h.now() + 100 * h.unit });
      const parent = h.job({
        task: "p",
        dependsOn: [dep(lane, waitingChild), dep(lane, delayedChild)],
      });
      await putFlow(h, [
        { lane, job: waitingChild },
        { lane, job: delayedChild },
        { lane, job: parent },
      ]);
      expect(await method(lane, "setPriority")([waitingChild.id], 3)).toEqual(["ok"]);
      expect(await method(lane, "promote")([delayedChild.id])).toEqual(["ok"]);
      const held = await h.reserveAll(lane, 2, 50 * h.unit);
      expect(held.map((j) => j.id).sort()).toEqual([waitingChild.id, delayedChild.id].sort());
      expect(await lane.ack(held.map((j) => j.lock))).toEqual(["ok", "ok"]);
      expect(await state(lane, parent.id)).toBe("waiting");
      expect((await method(lane, "get")(parent.id))?.dependencies?.map((d) => d.state)).toEqual([
        "succeeded",
        "succeeded",
      ]);
    });

    it("a child moved to another lane still ends for its parent, which shows where it was linked", async (ctx) => {
      const h = get();
      need(h.caps, ctx, "flows", "get", "move");
      const lane = await h.freshLane();
      const elsewhere = await h.freshLane();
      const child = h.job({ task: "c" });
      const parent = h.job({ dependsOn: [dep(lane, child)] });
      await putFlow(h, [
        { lane, job: child },
        { lane, job: parent },
      ]);
      expect(await lane.move?.([child.id], elsewhere)).toEqual(["moved"]);
      expect((await method(elsewhere, "get")(child.id))?.dependents).toEqual([
        { lane: lane.name, jobId: parent.id },
      ]);
      const held = await takeOne(h, elsewhere, child.id);
      expect(await elsewhere.ack([held.lock])).toEqual(["ok"]);
      const info = await method(lane, "get")(parent.id);
      expect(info?.state).toBe("waiting");
      expect(info?.dependencies).toEqual([
        { lane: lane.name, id: child.id, task: "c", onFailure: "fail", state: "succeeded" },
      ]);
    });

    it('"fail": a canceled child fails the parent too', async (ctx) => {
      const h = get();
      need(h.caps, ctx, "flows", "get", "cancel");
      const lane = await h.freshLane();
      const child = h.job();
      const parent = h.job({ dependsOn: [dep(lane, child)] });
      await putFlow(h, [
        { lane, job: child },
        { lane, job: parent },
      ]);
      expect(await method(lane, "cancel")([child.id])).toEqual(["canceled"]);
      const info = await method(lane, "get")(parent.id);
      expect(info?.state).toBe("failed");
      expect(info?.error?.reason).toBe("dependency_failed");
      expect(info?.dependencies?.[0]?.state).toBe("canceled");
    });

    it('"fail": a child deleted while pending counts as deleted and fails the parent', async (ctx) => {
      const h = get();
      need(h.caps, ctx, "flows", "get", "delete");
      const lane = await h.freshLane();
      const child = h.job();
      const parent = h.job({ dependsOn: [dep(lane, child)] });
      await putFlow(h, [
        { lane, job: child },
        { lane, job: parent },
      ]);
      expect(await method(lane, "delete")([child.id])).toBe(1);
      const info = await method(lane, "get")(parent.id);
      expect(info?.state).toBe("failed");
      expect(info?.dependencies?.[0]?.state).toBe("deleted");
    });

    it('"ignore": a dead child counts as ended; the parent waits for the others, then runs', async (ctx) => {
      const h = get();
      need(h.caps, ctx, "flows", "get");
      const lane = await h.freshLane();
      const bad = h.job({ task: "bad" });
      const slow = h.job({ task: "slow", priority: -1 });
      const parent = h.job({
        task: "parent",
        dependsOn: [dep(lane, bad, "ignore"), dep(lane, slow, "ignore")],
      });
      await putFlow(h, [
        { lane, job: bad },
        { lane, job: slow },
        { lane, job: parent },
      ]);
      const heldBad = await takeOne(h, lane, bad.id);
      await lane.nack([{ lock: heldBad.lock, dead: true, error: deadError("boom") }]);
      expect(await state(lane, parent.id)).toBe("blocked");
      const heldSlow = await takeOne(h, lane, slow.id);
      expect(await state(lane, parent.id)).toBe("blocked");
      await lane.ack([heldSlow.lock]);
      expect(await state(lane, parent.id)).toBe("waiting");
      expect((await takeOne(h, lane, parent.id)).task).toBe("parent");
      expect((await method(lane, "get")(parent.id))?.dependencies?.map((d) => d.state)).toEqual([
        "failed",
        "succeeded",
      ]);
    });

    it('"continue": a dead child makes the parent due at once, without waiting for the others', async (ctx) => {
      const h = get();
      need(h.caps, ctx, "flows", "get");
      const lane = await h.freshLane();
      const bad = h.job({ task: "bad" });
      const slow = h.job({ task: "slow", priority: -1 });
      const parent = h.job({
        task: "parent",
        dependsOn: [dep(lane, bad, "continue"), dep(lane, slow, "continue")],
      });
      await putFlow(h, [
        { lane, job: bad },
        { lane, job: slow },
        { lane, job: parent },
      ]);
      const heldBad = await takeOne(h, lane, bad.id);
      await lane.nack([{ lock: heldBad.lock, dead: true, error: deadError("boom") }]);
      // the slow child has not even started
      expect(await state(lane, slow.id)).toBe("waiting");
      expect(await state(lane, parent.id)).toBe("waiting");
      // a success of a "continue" child is an end like any other: the parent waited for it
      const ok = h.job();
      const other = h.job({ dependsOn: [dep(lane, ok, "continue")] });
      await putFlow(h, [
        { lane, job: ok },
        { lane, job: other },
      ]);
      expect(await state(lane, other.id)).toBe("blocked");
    });

    it("each dependency's end is counted once: a failed child retried and succeeding changes nothing", async (ctx) => {
      const h = get();
      need(h.caps, ctx, "flows", "get", "retryFailed");
      const lane = await h.freshLane();
      const flaky = h.job();
      const other = h.job({ priority: -1 });
      const parent = h.job({ dependsOn: [dep(lane, flaky, "ignore"), dep(lane, other, "ignore")] });
      await putFlow(h, [
        { lane, job: flaky },
        { lane, job: other },
        { lane, job: parent },
      ]);
      const first = await takeOne(h, lane, flaky.id);
      await lane.nack([{ lock: first.lock, dead: true, error: deadError("once") }]);
      expect(await method(lane, "retryFailed")([flaky.id])).toBe(1);
      const second = await takeOne(h, lane, flaky.id);
      await lane.ack([second.lock]);
      // counted once (as failed): the parent still waits for `other`
      expect(await state(lane, parent.id)).toBe("blocked");
      const info = await method(lane, "get")(parent.id);
      expect(info?.dependencies?.map((d) => d.state)).toEqual(["failed", undefined]);
    });

    it("dependsOn a job put earlier: blocked until it ends; a job already ended counts at once, with its result", async (ctx) => {
      const h = get();
      need(h.caps, ctx, "flows", "get", "results");
      const lane = await h.freshLane();
      const other = await h.freshLane();
      const earlier = h.job({ task: "earlier" });
      await other.put([earlier]);
      const waiting = h.job({ dependsOn: [dep(other, earlier)] });
      expect(await putFlow(h, [{ lane, job: waiting }])).toEqual({ status: "created" });
      expect(await state(lane, waiting.id)).toBe("blocked");
      const held = await takeOne(h, other, earlier.id);
      await other.ack([{ ...held.lock, result: '{"n":7}' }]);
      expect(await state(lane, waiting.id)).toBe("waiting");
      // already succeeded when depended upon
      const late = h.job({ dependsOn: [dep(other, earlier)] });
      expect(await putFlow(h, [{ lane, job: late }])).toEqual({ status: "created" });
      const info = await method(lane, "get")(late.id);
      expect(info?.state).toBe("waiting");
      expect(info?.dependencies).toEqual([
        {
          lane: other.name,
          id: earlier.id,
          task: "earlier",
          onFailure: "fail",
          state: "succeeded",
          result: '{"n":7}',
        },
      ]);
      // already failed, with "fail": failed at once, never run
      const dead = h.job();
      await other.put([dead]);
      const heldDead = await takeOne(h, other, dead.id);
      await other.nack([{ lock: heldDead.lock, dead: true, error: deadError("x") }]);
      const doomed = h.job({ dependsOn: [dep(other, dead)] });
      expect(await putFlow(h, [{ lane, job: doomed }])).toEqual({ status: "created" });
      expect((await method(lane, "get")(doomed.id))?.error?.reason).toBe("dependency_failed");
    });

    it("an unknown dependency answers missing and a duplicate id answers duplicate: nothing written", async (ctx) => {
      const h = get();
      need(h.caps, ctx, "flows", "get");
      const lane = await h.freshLane();
      const child = h.job();
      const parent = h.job({
        dependsOn: [dep(lane, child), { lane: lane.name, id: "nobody", onFailure: "fail" }],
      });
      expect(
        await putFlow(h, [
          { lane, job: child },
          { lane, job: parent },
        ]),
      ).toEqual({ status: "missing", lane: lane.name, id: "nobody" });
      expect(await lane.counts()).toMatchObject({ waiting: 0, blocked: 0 });
      expect(await method(lane, "get")(child.id)).toBeUndefined();
      const stored = h.job();
      await lane.put([stored]);
      const fresh = h.job();
      const again = h.job({ id: stored.id, dependsOn: [dep(lane, fresh)] });
      expect(
        await putFlow(h, [
          { lane, job: fresh },
          { lane, job: again },
        ]),
      ).toEqual({ status: "duplicate", lane: lane.name, id: stored.id });
      expect(await method(lane, "get")(fresh.id)).toBeUndefined();
      expect(await lane.counts()).toMatchObject({ waiting: 1, blocked: 0 });
    });

    it("a blocked job is listed, counted by search, got, moved never; canceling it leaves its children running", async (ctx) => {
      const h = get();
      need(h.caps, ctx, "flows", "get", "list", "cancel");
      const lane = await h.freshLane();
      const child = h.job();
      const parent = h.job({ task: "parent", dependsOn: [dep(lane, child)] });
      await putFlow(h, [
        { lane, job: child },
        { lane, job: parent },
      ]);
      const listed: string[] = [];
      for await (const info of method(lane, "list")({ state: "blocked" })) listed.push(info.id);
      expect(listed).toEqual([parent.id]);
      if (h.caps.search) {
        expect(await lane.count?.({ state: "blocked" })).toBe(1);
        expect((await lane.listPage?.({ state: "blocked", fields: "summary" }))?.jobs).toEqual([
          expect.objectContaining({ id: parent.id, state: "blocked", task: "parent" }),
        ]);
      }
      if (h.caps.move) {
        const target = await h.freshLane();
        expect(await lane.move?.([parent.id], target)).toEqual(["blocked"]);
      }
      expect(await method(lane, "cancel")([parent.id])).toEqual(["canceled"]);
      expect(await lane.counts()).toMatchObject({ blocked: 0, canceled: 1, waiting: 1 });
      const held = await takeOne(h, lane, child.id);
      expect(await lane.ack([held.lock])).toEqual(["ok"]);
      expect(await state(lane, parent.id)).toBe("canceled");
    });

    it("a parent with a later runAt is delayed until then once its children ended; one whose expiry passes while blocked expires", async (ctx) => {
      const h = get();
      need(h.caps, ctx, "flows", "get", "expiry");
      const lane = await h.freshLane();
      const child = h.job({ priority: 1 });
      const runAt = h.now() + 20 * h.unit;
      const later = h.job({ runAt, dependsOn: [dep(lane, child)] });
      const slowChild = h.job({ priority: -1 });
      const expiring = h.job({
        expiresAt: h.now() + 3 * h.unit,
        dependsOn: [dep(lane, slowChild)],
      });
      await putFlow(h, [
        { lane, job: child },
        { lane, job: later },
        { lane, job: slowChild },
        { lane, job: expiring },
      ]);
      const held = await takeOne(h, lane, child.id);
      await lane.ack([held.lock]);
      expect(await state(lane, later.id)).toBe("delayed");
      expect((await method(lane, "get")(later.id))?.runAt).toBe(runAt);
      await h.waitFor(
        async () => (await state(lane, expiring.id)) === "expired",
        "the blocked job's expiry",
      );
      // its child is not touched
      expect(await state(lane, slowChild.id)).toBe("waiting");
    });

    it("nested: a grandchild ends, its parent runs, then the root", async (ctx) => {
      const h = get();
      need(h.caps, ctx, "flows", "get");
      const lane = await h.freshLane();
      const grandchild = h.job({ task: "g" });
      const child = h.job({ task: "c", dependsOn: [dep(lane, grandchild)] });
      const root = h.job({ task: "r", dependsOn: [dep(lane, child)] });
      await putFlow(h, [
        { lane, job: grandchild },
        { lane, job: child },
        { lane, job: root },
      ]);
      expect(await lane.counts()).toMatchObject({ waiting: 1, blocked: 2 });
      const order: string[] = [];
      for (const id of [grandchild.id, child.id, root.id]) {
        const held = await takeOne(h, lane, id);
        order.push(held.task);
        await lane.ack([held.lock]);
      }
      expect(order).toEqual(["g", "c", "r"]);
    });

    it("a finished child removed by retention: the parent's view keeps its end and result", async (ctx) => {
      const h = get();
      need(h.caps, ctx, "flows", "get", "results", "retention");
      const lane = await h.freshLane({ retention: { succeeded: { maxCount: 0 } } });
      const child = h.job();
      const parent = h.job({ dependsOn: [dep(lane, child)] });
      await putFlow(h, [
        { lane, job: child },
        { lane, job: parent },
      ]);
      const held = await takeOne(h, lane, child.id);
      await lane.ack([{ ...held.lock, result: '"done"' }]);
      await h.waitFor(
        async () => (await method(lane, "get")(child.id)) === undefined,
        "retention to remove the child",
      );
      const info = await method(lane, "get")(parent.id);
      expect(info?.state).toBe("waiting");
      expect(info?.dependencies?.[0]).toMatchObject({ state: "succeeded", result: '"done"' });
    });

    it("tl.flow: the children run first (two lanes), the parent reads their results with ctx.children()", async (ctx) => {
      const h = get();
      need(h.caps, ctx, "flows", "get", "results");
      const seen: unknown[] = [];
      const order: string[] = [];
      const fetch = defineTask({
        name: "fetch",
        lane: "io",
        schema: z.object({ url: z.string() }),
        run: (p) => {
          order.push(`fetch ${p.url}`);
          return { bytes: p.url.length };
        },
      });
      const resize = defineTask({
        name: "resize",
        lane: "cpu",
        schema: z.object({ n: z.number() }),
        run: (p) => {
          order.push("resize");
          return p.n * 2;
        },
      });
      const report = defineTask({
        name: "report",
        lane: "cpu",
        schema: z.object({}),
        run: async (_p, c) => {
          order.push("report");
          seen.push(await c.children());
        },
      });
      const tl = h.client({
        lanes: [
          { name: "io", leaseMs: 20 * h.unit, longPollMs: h.unit },
          { name: "cpu", leaseMs: 20 * h.unit, longPollMs: h.unit },
        ],
        tasks: [fetch, resize, report],
      });
      open.push(tl);
      const flow = await tl.flow({
        task: report,
        payload: {},
        children: [
          { task: fetch, payload: { url: "abc" } },
          { task: resize, payload: { n: 21 }, onFailure: "ignore" },
        ],
      });
      expect(flow.status).toBe("created");
      expect(flow.lane).toBe("cpu");
      expect(flow.children.map((c) => [c.task, c.lane])).toEqual([
        ["fetch", "io"],
        ["resize", "cpu"],
      ]);
      expect((await tl.lane("cpu").get(flow.id))?.state).toBe("blocked");
      let succeeded = 0;
      tl.events.on("succeeded", () => succeeded++);
      const worker = tl.worker();
      await worker.start();
      await h.waitFor(() => succeeded === 3, "the flow to finish");
      await worker.stop();
      expect(order.at(-1)).toBe("report");
      expect(seen).toEqual([
        [
          {
            id: flow.children[0]?.id,
            lane: "io",
            task: "fetch",
            onFailure: "fail",
            state: "succeeded",
            result: { bytes: 3 },
          },
          {
            id: flow.children[1]?.id,
            lane: "cpu",
            task: "resize",
            onFailure: "ignore",
            state: "succeeded",
            result: 42,
          },
        ],
      ]);
    });

    it("tl.flow: a bad child payload (nested) writes nothing", async (ctx) => {
      const h = get();
      need(h.caps, ctx, "flows");
      const leaf = defineTask({
        name: "leaf",
        lane: "a",
        schema: z.object({ n: z.number() }),
        run: () => {},
      });
      const root = defineTask({ name: "root", lane: "a", schema: z.object({}), run: () => {} });
      const tl = h.client({ lanes: [{ name: "a" }], tasks: [leaf, root] });
      open.push(tl);
      await expect(
        tl.flow({
          task: root,
          payload: {},
          children: [
            { task: leaf, payload: { n: 1 } },
            { task: root, payload: {}, children: [{ task: leaf, payload: { n: "x" as never } }] },
          ],
        }),
      ).rejects.toMatchObject({ code: "VALIDATION" });
      expect(await tl.lane("a").counts()).toMatchObject({ waiting: 0, blocked: 0 });
    });

    it("on a lane with fair groups, a flow's jobs wait in their groups: children in turn, the parent once unblocked", async (ctx) => {
      const h = get();
      need(h.caps, ctx, "flows", "groups");
      const lane = await h.freshLane({ groups: {} });
      const grouped = (id: string, group: string, extra: Partial<NewJob> = {}) =>
        h.job({ id, freshId: false, group, ...extra });
      // Group A waits first, so the ring is not empty when the flow arrives.
      await lane.put([grouped("a1", "A"), grouped("a2", "A")]);
      const child = grouped("c1", "B");
      const parent = grouped("p", "C", { dependsOn: [dep(lane, child)] });
      expect(
        await putFlow(h, [
          { lane, job: child },
          { lane, job: parent },
        ]),
      ).toEqual({
        status: "created",
      });
      const first = await take(h, lane);
      expect(first.map((j) => j.id)).toEqual(["a1", "c1", "a2"]);
      expect(await lane.counts()).toMatchObject({ blocked: 1, waiting: 0, active: 3 });
      expect(await lane.ack([(first[1] as ReservedJob).lock])).toEqual(["ok"]);
      // Unblocked into its own group: served by the next reserve, its group kept.
      const next = await h.waitFor(async () => {
        const jobs = await take(h, lane);
        return jobs.length > 0 && jobs;
      }, "the parent handed out");
      expect(next.map((j) => j.id)).toEqual(["p"]);
      expect((await method(lane, "get")("p"))?.group).toBe("C");
    });
  });
}
