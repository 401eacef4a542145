import {
  createTasklane,
  defineTask,
  type Tasklane,
  type TasklaneEvents,
  type TasklaneOptions,
} from "@tasklane/core";
import { sleep } from "@tasklane/core/adapter";
import { afterEach, describe, expect, it } from "vitest";
import { z } from "zod";
import { type Harness, need } from "./harness.ts";
import type { ConformanceOptions } from "./options.ts";

type Recorded = { [K in keyof TasklaneEvents]: Array<TasklaneEvents[K]> };

/**
 * The worker against bad input and faults it must survive without losing or repeating
 * work: jobs a foreign producer wrote past publish's checks, and the like.
 */
export function registerWorkerFaultTests(get: () => Harness, _options: ConformanceOptions): void {
  describe("worker faults", () => {
    const open: Tasklane[] = [];
    afterEach(async () => {
      await Promise.all(open.splice(0).map((tl) => tl.close({ graceMs: 0 })));
    });

    /** A client on a fresh namespace (fresh lanes), recording what the worker reports. */
    const setup = (
      h: Harness,
      overrides: Partial<TasklaneOptions> & Pick<TasklaneOptions, "tasks">,
    ) => {
      const namespace = h.uniqueName("ns").replace(/[^A-Za-z0-9_-]/g, "");
      const tl = createTasklane({
        adapter: h.adapter,
        closeAdapter: false,
        clock: h.clock,
        namespace,
        lanes: [{ name: "work", leaseMs: 20 * h.unit, longPollMs: h.unit }],
        ...overrides,
      });
      open.push(tl);
      const seen = {} as Recorded;
      const names: Array<keyof TasklaneEvents> = ["succeeded", "failed", "lock_lost", "error"];
      for (const name of names) {
        const list: unknown[] = [];
        (seen as Record<string, unknown[]>)[name] = list;
        tl.events.on(name, (e: unknown) => list.push(e));
      }
      const raw = () => h.adapter.lane(`${namespace}_work`, { maxStalls: 3, historyLimit: 20 });
      return { tl, seen, raw };
    };

    it("dead-letters a job over the client's payload limit unparsed, never running it", async () => {
      const h = get();
      const limit = 1_024;
      const ran: string[] = [];
      const task = defineTask({
        name: "sized",
        lane: "work",
        schema: z.object({ s: z.string() }),
        run: (_payload, ctx) => void ran.push(ctx.jobId),
      });
      const { tl, seen, raw } = setup(h, { tasks: [task], maxPayloadBytes: limit });
      const lane = await raw();
      // Written straight into the lane, as a foreign producer would: publish refuses them.
      // Not JSON either: were the worker to parse it, the reason would be "malformed".
      const tooBig = h.job({ task: "sized", payload: `{"s":"${"x".repeat(2 * limit)}` });
      // Each half fits; together (the limit counts payload + appData) they do not.
      const payload = JSON.stringify({ s: "y".repeat(limit / 2) });
      const appData = JSON.stringify("z".repeat(limit / 2));
      const tooBigWithAppData = h.job({ task: "sized", payload, appData });
      // Multi-byte text: 400 characters, 1,200 bytes in UTF-8.
      const tooBigInBytes = h.job({
        task: "sized",
        payload: JSON.stringify({ s: "€".repeat(400) }),
      });
      const fits = h.job({ task: "sized", payload: JSON.stringify({ s: "€".repeat(300) }) });
      await lane.put([tooBig, tooBigWithAppData, tooBigInBytes, fits]);

      await tl.worker().start();
      await h.waitFor(
        () => seen.failed.length === 3 && seen.succeeded.length === 1,
        "three dead jobs and one success",
      );
      expect(ran).toEqual([fits.id]);
      const dead = new Map(seen.failed.map((e) => [e.jobId, e.error]));
      expect(new Set(dead.keys())).toEqual(
        new Set([tooBig.id, tooBigWithAppData.id, tooBigInBytes.id]),
      );
      for (const error of dead.values()) {
        expect(error).toMatchObject({ name: "PayloadTooLargeError", reason: "payload_too_large" });
        expect(error.message).toContain(`over the limit of ${limit} bytes`);
      }
      expect(dead.get(tooBigInBytes.id)?.message).toContain("is 1208 bytes");
      expect(seen.lock_lost).toEqual([]);
      if (h.caps.get) {
        const info = await lane.get?.(tooBig.id);
        expect(info?.state).toBe("failed");
        expect(info?.error?.reason).toBe("payload_too_large");
      }
    });

    it("runs a suspect alone: no other job of its worker runs or waits while it runs (capability suspects)", async (ctx) => {
      const h = get();
      need(h.caps, ctx, "suspects");
      const log: Array<{ id: string; event: "start" | "end"; running: number; held: number }> = [];
      let running = 0;
      let heldNow = () => 0;
      const task = defineTask({
        name: "probe",
        lane: "work",
        schema: z.object({ ms: z.number() }),
        run: async ({ ms }, ctx) => {
          running++;
          log.push({ id: ctx.jobId, event: "start", running, held: heldNow() });
          await sleep(h.clock, ms);
          log.push({ id: ctx.jobId, event: "end", running, held: heldNow() });
          running--;
        },
      });
      const { tl, seen, raw } = setup(h, { tasks: [task] });
      const lane = await raw();
      const suspects = [h.job({ task: "probe", payload: JSON.stringify({ ms: 30 }) })];
      suspects.push(h.job({ task: "probe", payload: JSON.stringify({ ms: 30 }) }));
      await lane.put(suspects);
      // Their first deliveries' leases run out: the jobs are suspects from now on.
      const taken = await h.reserveAll(lane, 2, h.unit);
      const lastExpiry = Math.max(...taken.map((j) => j.lock.expiresAt));
      await h.waitFor(
        () => h.now() > lastExpiry + h.caps.timeResolutionMs,
        "the first leases to run out",
      );
      const normal = Array.from({ length: 30 }, () =>
        h.job({ task: "probe", payload: JSON.stringify({ ms: 20 }) }),
      );
      await lane.put(normal);
      const worker = tl.worker({ concurrency: 4 });
      heldNow = () => worker.held;
      await worker.start();
      await h.waitFor(() => seen.succeeded.length >= 32, "32 successes");
      await worker.stop();
      expect(seen.failed).toEqual([]);
      const ids = new Set(suspects.map((j) => j.id));
      for (const id of ids) {
        const start = log.findIndex((e) => e.id === id && e.event === "start");
        const end = log.findIndex((e) => e.id === id && e.event === "end");
        // Alone at its start and at its end, and nothing started in between.
        expect(log[start]).toMatchObject({ running: 1, held: 1 });
        expect(log[end]).toMatchObject({ running: 1, held: 1 });
        expect(end).toBe(start + 1);
      }
      // Every job ran exactly once.
      const starts = log.filter((e) => e.event === "start").map((e) => e.id);
      expect(starts.length).toBe(32);
      expect(new Set(starts).size).toBe(32);
    });
  });
}
