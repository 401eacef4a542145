/**
 * The trace context a job carries (`NewJob.traceContext`): what telemetry links a job's
 * runs to its publish through. The adapter stores it as opaque text and hands it back
 * with every delivery, unchanged: after a retry, a hand-back, a stall and a retry by hand
 * as on the first, and never for a job put without one.
 */
import type { LaneStore, NewJob, ReservedJob } from "@tasklane/core/adapter";
import { describe, expect, it } from "vitest";
import type { Harness } from "./harness.ts";

const TRACEPARENT = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01";
/** A longer context: JSON of a carrier with tracestate and baggage, text SQS must escape. */
const CARRIER = JSON.stringify({
  traceparent: "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-00",
  tracestate: `vendor=${"x".repeat(200)},other=%41%u0041`,
  baggage: "user=ü€😀,tab=a\tb,nul=\u0000,lone=\ud800",
});

/** Reserve the next delivery of a job, waiting for it to be due. */
async function nextDelivery(h: Harness, q: LaneStore, what: string): Promise<ReservedJob> {
  return h.waitFor(
    async () => (await q.reserve({ limit: 1, leaseMs: 10 * h.unit, waitMs: 0 })).jobs[0],
    what,
  );
}

export function registerTraceContextTests(get: () => Harness): void {
  describe("trace context", () => {
    it("hands a job's trace context back with it, unchanged, and none to a job put without", async () => {
      const h = get();
      const q = await h.freshLane();
      const plain = h.job();
      const short = h.job({ traceContext: TRACEPARENT });
      const long = h.job({ traceContext: CARRIER, appData: '{"a":1}' });
      await q.put([plain, short, long]);
      const got = await h.reserveAll(q, 3, 10 * h.unit);
      const byId = new Map(got.map((j) => [j.id, j]));
      expect(byId.get(plain.id)).not.toHaveProperty("traceContext");
      expect(byId.get(short.id)?.traceContext).toBe(TRACEPARENT);
      expect(byId.get(long.id)?.traceContext).toBe(CARRIER);
      expect(byId.get(long.id)?.appData).toBe('{"a":1}');
      for (const j of got) expect(j.malformed).toBeUndefined();
    });

    it("keeps one publish call's context on each of its jobs, beside jobs of other calls", async () => {
      const h = get();
      const q = await h.freshLane();
      // publishMany's usual call: fresh ids, one priority, one publish time, one context;
      // then a call mixing jobs with and without one, and two contexts in a row
      const now = h.now();
      const same = (i: number): NewJob =>
        h.job({
          freshId: true,
          publishedAt: now,
          payload: `{"i":${i}}`,
          traceContext: TRACEPARENT,
        });
      const batch = [same(0), same(1), same(2), same(3)];
      const mixed = [
        h.job({ publishedAt: now }),
        h.job({ publishedAt: now, traceContext: CARRIER }),
        h.job({ publishedAt: now, traceContext: TRACEPARENT }),
        h.job({ publishedAt: now }),
      ];
      await q.put(batch);
      await q.put(mixed);
      const got = await h.reserveAll(q, 8, 10 * h.unit);
      const byId = new Map(got.map((j) => [j.id, j]));
      for (const job of [...batch, ...mixed]) {
        const back = byId.get(job.id);
        expect(back?.payload).toBe(job.payload);
        expect(back?.traceContext).toBe(job.traceContext);
      }
    });

    it("keeps it across a retry, a hand-back and a stall", async () => {
      const h = get();
      const q = await h.freshLane();
      await q.put([h.job({ traceContext: CARRIER })]);
      const [first] = await h.reserveAll(q, 1, 10 * h.unit);
      const error = { name: "Error", message: "boom", reason: "error" as const };
      const lock = (first as ReservedJob).lock;
      expect(await q.nack([{ lock, runAt: h.now(), error }])).toEqual(["ok"]);
      const retried = await nextDelivery(h, q, "the retry");
      expect(retried.traceContext).toBe(CARRIER);
      expect(await q.release([{ lock: retried.lock, uncounted: true }])).toEqual(["ok"]);
      // handed back: taken again under a short lease, which runs out (a stall)
      const [released] = await h.reserveAll(q, 1, h.unit);
      expect(released?.traceContext).toBe(CARRIER);
      const stalled = await nextDelivery(h, q, "the delivery after the stall");
      expect(stalled.id).toBe(first?.id);
      expect(stalled.traceContext).toBe(CARRIER);
      expect(await q.ack([stalled.lock])).toEqual(["ok"]);
    });

    it("keeps it when a job's priority changes, it is promoted or moved (capabilities)", async (ctx) => {
      const h = get();
      if (!h.caps.changePriority && !h.caps.promote && !h.caps.move) return ctx.skip();
      const q = await h.freshLane();
      const other = await h.freshLane();
      const waiting = h.job({ traceContext: TRACEPARENT });
      const delayed = h.job({ traceContext: CARRIER, runAt: h.now() + 3_600_000 });
      await q.put([waiting, delayed]);
      if (h.caps.changePriority) expect(await q.setPriority?.([waiting.id], 7)).toEqual(["ok"]);
      if (h.caps.promote) expect(await q.promote?.([delayed.id])).toEqual(["ok"]);
      let from = q;
      if (h.caps.move) {
        const moved = h.caps.promote ? [waiting.id, delayed.id] : [waiting.id];
        expect(await q.move?.(moved, other)).toEqual(moved.map(() => "moved"));
        from = other;
      }
      const [first] = await h.reserveAll(from, 1, 10 * h.unit);
      expect(first?.id).toBe(waiting.id);
      expect(first?.traceContext).toBe(TRACEPARENT);
      if (h.caps.promote) {
        const [second] = await h.reserveAll(from, 1, 10 * h.unit);
        expect(second?.id).toBe(delayed.id);
        expect(second?.traceContext).toBe(CARRIER);
      }
    });

    it("keeps it for a dead letter retried by hand", async (ctx) => {
      const h = get();
      if (!h.caps.retryFailed) return ctx.skip();
      const q = await h.freshLane();
      const put = h.job({ traceContext: TRACEPARENT });
      await q.put([put]);
      const [job] = await h.reserveAll(q, 1, 10 * h.unit);
      const error = { name: "Error", message: "dead", reason: "error" as const };
      const lock = (job as ReservedJob).lock;
      expect(await q.nack([{ lock, dead: true, error }])).toEqual(["ok"]);
      await h.waitFor(
        async () => (await q.retryFailed?.([put.id])) || false,
        "retryFailed to move the job",
      );
      const again = await nextDelivery(h, q, "the job retried by hand");
      expect(again.id).toBe(put.id);
      expect(again.traceContext).toBe(TRACEPARENT);
    });
  });
}
