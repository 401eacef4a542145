import { createManualClock, createMemoryAdapter, type ManualClock } from "@tasklane/adapter-memory";
import { afterEach, describe, expect, it } from "vitest";
import { z } from "zod";
import type { LaneStore } from "../src/adapter-kit.ts";
import {
  type Adapter,
  AdapterError,
  createTasklane,
  defineTask,
  type Tasklane,
  type TasklaneEvents,
} from "../src/index.ts";

/** `inner` with each lane's methods bent by `overrides(lane)` (a flaky network). */
function wrapAdapter(
  inner: Adapter,
  overrides: (q: LaneStore) => Partial<LaneStore>,
): Adapter & { store(): LaneStore } {
  let last: LaneStore | undefined;
  return {
    name: inner.name,
    capabilities: inner.capabilities,
    lane: async (n, o) => {
      const q = await inner.lane(n, o);
      last = q;
      const bent = overrides(q);
      return new Proxy(q, {
        get(target, prop, receiver) {
          if (prop in bent) return bent[prop as keyof LaneStore];
          const v = Reflect.get(target, prop, receiver);
          return typeof v === "function" ? v.bind(target) : v;
        },
      });
    },
    close: () => inner.close(),
    ...(inner.subscribe ? { subscribe: inner.subscribe.bind(inner) } : {}),
    store: () => {
      if (!last) throw new Error("no lane opened yet");
      return last;
    },
  };
}

const dropped = () => new AdapterError("memory", "connection reset (test)");

const open: Tasklane[] = [];
afterEach(async () => {
  await Promise.all(open.splice(0).map((tl) => tl.close({ graceMs: 0 })));
});

function record<K extends keyof TasklaneEvents>(tl: Tasklane, name: K): Array<TasklaneEvents[K]> {
  const list: Array<TasklaneEvents[K]> = [];
  tl.events.on(name, ((e: TasklaneEvents[K]) => list.push(e)) as never);
  return list;
}

/** Advance in small steps until `done()` or `maxMs` have passed. */
async function advanceUntil(clock: ManualClock, done: () => boolean, maxMs: number, stepMs = 5) {
  for (let t = 0; t < maxMs && !done(); t += stepMs) await clock.advance(stepMs);
}

/** A client on the memory adapter whose lanes are bent by `overrides`, and a counting task. */
function setup(overrides: (q: LaneStore) => Partial<LaneStore>, leaseMs = 5_000) {
  const clock = createManualClock();
  const adapter = wrapAdapter(createMemoryAdapter({ clock }), overrides);
  const runs = new Map<string, number>();
  const holding: Array<() => void> = [];
  const task = defineTask({
    name: "t",
    lane: "q",
    schema: z.object({ fail: z.boolean(), hold: z.boolean().optional() }),
    retry: { maxAttempts: 3, baseMs: 1_000, jitter: 0 },
    run: async ({ fail, hold }, ctx) => {
      runs.set(ctx.jobId, (runs.get(ctx.jobId) ?? 0) + 1);
      if (hold) await new Promise<void>((resolve) => holding.push(resolve));
      if (fail && ctx.attempt === 1) throw new Error("first attempt fails");
    },
  });
  const tl = createTasklane({ adapter, clock, lanes: [{ name: "q", leaseMs }], tasks: [task] });
  open.push(tl);
  const seen = {
    succeeded: record(tl, "succeeded"),
    retrying: record(tl, "retrying"),
    lock_lost: record(tl, "lock_lost"),
    stalled: record(tl, "stalled"),
    unconfirmed: record(tl, "unconfirmed"),
    error: record(tl, "error"),
  };
  const release = () => {
    for (const resolve of holding.splice(0)) resolve();
  };
  return { clock, adapter, tl, task, runs, seen, release };
}

describe("settle retry", () => {
  it("retries an ack that threw before reaching the backend: one run, one success, no lock_lost", async () => {
    let acks = 0;
    const { clock, adapter, tl, task, runs, seen } = setup((q) => ({
      ack: async (locks) => {
        if (acks++ === 0) throw dropped();
        return q.ack(locks);
      },
    }));
    const published = await tl.publishMany(
      task,
      Array.from({ length: 5 }, () => ({ payload: { fail: false } })),
    );
    await tl.worker().start();
    await advanceUntil(clock, () => seen.succeeded.length === 5, 1_000);
    expect(seen.succeeded.map((e) => e.jobId).sort()).toEqual(published.map((r) => r.id).sort());
    expect(seen.error.map((e) => e.during)).toEqual(["ack"]);
    // Past the lease: nothing runs again (without the retry every job would, once).
    await clock.advance(20_000);
    expect([...runs.values()]).toEqual([1, 1, 1, 1, 1]);
    expect(seen.lock_lost).toEqual([]);
    expect(seen.unconfirmed).toEqual([]);
    expect(await adapter.store().counts()).toMatchObject({ succeeded: 5, active: 0, waiting: 0 });
  });

  it("reports an ack that landed but lost its answer as unconfirmed, never lock_lost", async () => {
    let acks = 0;
    const { clock, adapter, tl, task, runs, seen } = setup((q) => ({
      ack: async (locks) => {
        const statuses = await q.ack(locks);
        if (acks++ === 0) throw dropped(); // it landed; the reply was lost on the way back
        return statuses;
      },
    }));
    const { id } = await tl.publish(task, { fail: false });
    await tl.worker().start();
    await advanceUntil(clock, () => seen.unconfirmed.length === 1, 1_000);
    expect(seen.unconfirmed).toEqual([
      { lane: "q", jobId: id, task: "t", attempt: 1, call: "ack", detail: "lost_on_retry" },
    ]);
    await clock.advance(20_000);
    expect(runs.get(id)).toBe(1);
    expect(seen.lock_lost).toEqual([]);
    expect(seen.stalled).toEqual([]);
    expect(seen.succeeded).toEqual([]);
    expect(await adapter.store().counts()).toMatchObject({ succeeded: 1, active: 0 });
  });

  it("retries a nack that threw: the failure is recorded and the job retried on its schedule", async () => {
    let nacks = 0;
    const { clock, adapter, tl, task, runs, seen } = setup((q) => ({
      nack: async (items) => {
        if (nacks++ === 0) throw dropped();
        return q.nack(items);
      },
    }));
    const { id } = await tl.publish(task, { fail: true });
    await tl.worker().start();
    await advanceUntil(clock, () => seen.succeeded.length === 1, 5_000);
    expect(seen.retrying).toHaveLength(1);
    expect(seen.retrying[0]).toMatchObject({ jobId: id, attempt: 1 });
    expect(seen.succeeded[0]).toMatchObject({ jobId: id, attempt: 2 });
    expect(runs.get(id)).toBe(2);
    const info = await adapter.store().get?.(id);
    expect(info?.history.map((e) => e.event)).toEqual([
      "published",
      "reserved",
      "retrying",
      "reserved",
      "succeeded",
    ]);
    expect(seen.lock_lost).toEqual([]);
  });

  it("gives up when the lease runs out before a retry gets through; the job runs again", async () => {
    let acks = 0;
    let down = true;
    const { clock, tl, task, runs, seen } = setup(
      (q) => ({
        ack: async (locks) => {
          acks++;
          if (down) throw dropped();
          return q.ack(locks);
        },
      }),
      1_000,
    );
    const { id } = await tl.publish(task, { fail: false });
    await tl.worker().start();
    await advanceUntil(clock, () => seen.unconfirmed.length === 1, 2_000);
    expect(seen.unconfirmed).toEqual([
      { lane: "q", jobId: id, task: "t", attempt: 1, call: "ack", detail: "lease_expired" },
    ]);
    // Waits of 25, 50, 100, 200 ms, then half of what is left of the lease (at least
    // 25 ms): about a dozen tries in a 1 s lease, not a busy loop.
    expect(acks).toBeGreaterThanOrEqual(6);
    expect(acks).toBeLessThanOrEqual(14);
    down = false;
    await advanceUntil(clock, () => seen.succeeded.length === 1, 5_000);
    expect(runs.get(id)).toBe(2); // at least once: the lease ran out, so it ran again
    expect(seen.succeeded[0]).toMatchObject({ jobId: id, attempt: 2 });
    expect(seen.lock_lost).toEqual([]);
  });

  it("stop gives up the retries still waiting when its grace period ends", async () => {
    const { clock, tl, task, seen } = setup(() => ({
      ack: async () => {
        throw dropped();
      },
    }));
    const { id } = await tl.publish(task, { fail: false });
    const worker = tl.worker();
    await worker.start();
    await advanceUntil(clock, () => seen.error.length > 0, 1_000);
    const stopped = worker.stop({ graceMs: 2_000 });
    let done = false;
    void stopped.then(() => {
      done = true;
    });
    await clock.advance(1_900);
    expect(done).toBe(false);
    expect(worker.held).toBe(1);
    await advanceUntil(clock, () => done, 1_000);
    expect(done).toBe(true);
    expect(worker.held).toBe(0);
    expect(seen.unconfirmed).toEqual([
      { lane: "q", jobId: id, task: "t", attempt: 1, call: "ack", detail: "stopped" },
    ]);
  });

  it("sends the next heartbeat soon after one that threw, not a whole period later", async () => {
    const extendsAt: number[] = [];
    const { clock, tl, task, seen, release } = setup(
      (q) => ({
        extend: async (locks, leaseMs) => {
          extendsAt.push(clock.now());
          if (extendsAt.length === 1) throw dropped();
          return q.extend(locks, leaseMs);
        },
      }),
      3_000,
    );
    await tl.publish(task, { fail: false, hold: true });
    await tl.worker().start();
    await advanceUntil(clock, () => extendsAt.length >= 2, 3_000);
    expect(seen.error.map((e) => e.during)).toEqual(["heartbeat"]);
    const [first, second] = extendsAt as [number, number];
    expect(second - first).toBeLessThanOrEqual(30);
    // Healthy again: back to the usual period (a third of the lease).
    await advanceUntil(clock, () => extendsAt.length >= 3, 3_000);
    expect((extendsAt[2] as number) - second).toBeGreaterThanOrEqual(1_000);
    expect((extendsAt[2] as number) - second).toBeLessThanOrEqual(1_005);
    release();
    await advanceUntil(clock, () => seen.succeeded.length === 1, 1_000);
    expect(seen.lock_lost).toEqual([]);
  });

  it("reports a job whose heartbeats failed past its lease as stalled and lock_lost, aborting it", async () => {
    let down = true;
    const { clock, tl, task, seen, release } = setup(
      (q) => ({
        extend: async (locks, leaseMs) => {
          if (down && clock.now() <= (locks[0]?.expiresAt ?? 0)) throw dropped();
          down = false;
          return q.extend(locks, leaseMs);
        },
      }),
      3_000,
    );
    const { id } = await tl.publish(task, { fail: false, hold: true });
    await tl.worker().start();
    await advanceUntil(clock, () => seen.lock_lost.length === 1, 10_000);
    const ref = { lane: "q", jobId: id, task: "t" };
    expect(seen.stalled).toEqual([ref]);
    expect(seen.lock_lost).toEqual([ref]);
    release();
  });

  it("reports a lease lost while it lasted as lock_lost only", async () => {
    const { clock, tl, task, seen, release } = setup(() => ({
      extend: async (locks) => locks.map(() => "lost" as const),
    }));
    const { id } = await tl.publish(task, { fail: false, hold: true });
    await tl.worker().start();
    await advanceUntil(clock, () => seen.lock_lost.length === 1, 10_000);
    expect(seen.lock_lost).toEqual([{ lane: "q", jobId: id, task: "t" }]);
    expect(seen.stalled).toEqual([]);
    release();
  });

  it("backs off heartbeats that keep throwing: 25, 50, then 100 ms", async () => {
    const extendsAt: number[] = [];
    const { clock, tl, task, release } = setup(
      (q) => ({
        extend: async (locks, leaseMs) => {
          extendsAt.push(clock.now());
          if (extendsAt.length <= 3) throw dropped();
          return q.extend(locks, leaseMs);
        },
      }),
      3_000,
    );
    await tl.publish(task, { fail: false, hold: true });
    await tl.worker().start();
    await advanceUntil(clock, () => extendsAt.length >= 4, 3_000, 1);
    const gaps = extendsAt.slice(1).map((t, i) => t - (extendsAt[i] as number));
    expect(gaps).toEqual([25, 50, 100]);
    release();
  });

  it("retries an ack within the lease its heartbeats extended", async () => {
    let acks = 0;
    const { clock, tl, task, seen, release } = setup(
      (q) => ({
        ack: async (locks) => {
          if (acks++ === 0) throw dropped();
          return q.ack(locks);
        },
      }),
      3_000,
    );
    const { id } = await tl.publish(task, { fail: false, hold: true });
    await tl.worker().start();
    // Held past its first lease: heartbeats keep it.
    await clock.advance(5_000);
    release();
    await advanceUntil(clock, () => seen.succeeded.length === 1, 2_000);
    expect(seen.succeeded).toMatchObject([{ jobId: id, attempt: 1 }]);
    expect(seen.unconfirmed).toEqual([]);
    expect(acks).toBe(2);
  });

  it("names the nack it could not confirm before the lease ran out", async () => {
    const { clock, tl, task, seen } = setup(
      () => ({
        nack: async () => {
          throw dropped();
        },
      }),
      1_000,
    );
    const { id } = await tl.publish(task, { fail: true });
    await tl.worker().start();
    await advanceUntil(clock, () => seen.unconfirmed.length === 1, 2_000);
    expect(seen.unconfirmed).toEqual([
      { lane: "q", jobId: id, task: "t", attempt: 1, call: "nack", detail: "lease_expired" },
    ]);
  });
});
