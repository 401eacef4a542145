import {
  ClosedError,
  type JobError,
  type LaneStore,
  type ReservedJob,
} from "@tasklane/core/adapter";
import { describe, expect, it } from "vitest";
import { job, now, START, setup, waitingPolls } from "./helpers.ts";

const err: JobError = { name: "Error", message: "boom", reason: "error" };

async function waitingIds(lane: Required<LaneStore>): Promise<string[]> {
  const ids: string[] = [];
  for await (const info of lane.list({ state: "waiting" })) ids.push(info.id);
  return ids;
}

const ids = (jobs: ReservedJob[]) => jobs.map((j) => j.id);

describe("reserve", () => {
  it("a reserve on an empty lane records no day stats", async () => {
    const { lane } = await setup();
    expect(await lane.reserve(now)).toEqual({ jobs: [], ready: 0 });
    expect(await lane.stats("2026-01-01")).toBeUndefined();
    await lane.put([job("a")]);
    await lane.reserve(now);
    expect((await lane.stats("2026-01-01"))?.wait.count).toBe(1);
  });

  it("a reserved job without appData or traceContext carries neither key", async () => {
    const { lane } = await setup();
    await lane.put([job("a"), job("b", { appData: "x", traceContext: "t" })]);
    const { jobs } = await lane.reserve(now);
    expect(Object.keys(jobs[0] as ReservedJob).sort()).toEqual(
      ["attempt", "id", "lock", "payload", "priority", "publishedAt", "readyAt", "task"].sort(),
    );
    expect(jobs[1]).toMatchObject({ id: "b", appData: "x", traceContext: "t" });
  });

  it("a long poll that finds jobs answers with them at once", async () => {
    const { lane } = await setup();
    await lane.put([job("a")]);
    const p = lane.reserve({ ...now, waitMs: 60_000 });
    expect(await waitingPolls(lane)).toBe(0);
    const { jobs, ready } = await p;
    expect([ids(jobs), ready]).toEqual([["a"], 0]);
  });

  it("a reserve with limit 0 answers at once instead of long polling", async () => {
    const { lane } = await setup();
    await lane.put([job("a")]);
    const p = lane.reserve({ limit: 0, leaseMs: 30_000, waitMs: 60_000 });
    expect(await waitingPolls(lane)).toBe(0);
    expect(await p).toEqual({ jobs: [], ready: 1 });
  });

  it("a reserve whose signal is already aborted answers at once", async () => {
    const { lane } = await setup();
    const signal = AbortSignal.abort();
    const p = lane.reserve({ limit: 1, leaseMs: 30_000, waitMs: 60_000, signal });
    expect(await waitingPolls(lane)).toBe(0);
    expect(await p).toEqual({ jobs: [], ready: 0 });
  });

  it("a long poll whose deadline is a delayed job's due time takes that job", async () => {
    const { clock, lane } = await setup();
    await lane.put([job("later", { runAt: START + 1000 })]);
    // The poll's own timer was set first, so it fires before the lane's wake timer.
    const p = lane.reserve({ ...now, waitMs: 1000 });
    await clock.advance(1000);
    const { jobs } = await p;
    expect(ids(jobs)).toEqual(["later"]);
    expect(jobs[0]?.readyAt).toBe(START + 1000);
  });

  it("the reserve that hands out the 1000th job resolves after a macrotask turn, not before", async () => {
    const { lane } = await setup();
    await lane.put(Array.from({ length: 1000 }, (_, i) => job(`j${i}`)));
    const microtasks = async () => {
      for (let i = 0; i < 10; i++) await new Promise<void>((r) => queueMicrotask(r));
    };
    let settled = false;
    const first = lane.reserve({ ...now, limit: 999 }).then((r) => {
      settled = true;
      return r;
    });
    await microtasks();
    expect(settled).toBe(true);
    expect((await first).jobs).toHaveLength(999);
    settled = false;
    const second = lane.reserve({ ...now, limit: 1 }).then((r) => {
      settled = true;
      return r;
    });
    await microtasks();
    expect(settled).toBe(false);
    expect(ids((await second).jobs)).toEqual(["j999"]);
  });
});

describe("fair groups", () => {
  it("jobs without a group are the group '' toward groups.concurrency, in one reserve and across reserves", async () => {
    const { lane } = await setup({ groups: { concurrency: 1 } });
    await lane.put([job("u1"), job("u2"), job("g1", { group: "g" }), job("u3")]);
    const first = await lane.reserve(now);
    expect(ids(first.jobs)).toEqual(["u1", "g1"]);
    expect((await lane.reserve(now)).jobs).toEqual([]);
    await lane.ack([first.jobs[0]?.lock as ReservedJob["lock"]]);
    expect(ids((await lane.reserve(now)).jobs)).toEqual(["u2"]);
  });

  it("a list iterator parked in the active list is not counted as a running job of group ''", async () => {
    const { lane } = await setup({ groups: { concurrency: 2 } });
    await lane.put([job("u1"), job("u2"), job("u3")]);
    expect(ids((await lane.reserve({ ...now, limit: 1 })).jobs)).toEqual(["u1"]);
    const it = lane.list({ state: "active", pageSize: 1 })[Symbol.asyncIterator]();
    expect((await it.next()).value?.id).toBe("u1");
    expect(ids((await lane.reserve(now)).jobs)).toEqual(["u2"]);
    await it.return?.();
  });
});

describe("rate limit", () => {
  it("while the window is full, nextDueAt is the lease expiry when no job is ready", async () => {
    const { lane } = await setup({ rateLimit: { max: 1, durationMs: 1000 } });
    await lane.put([job("a")]);
    expect(ids((await lane.reserve(now)).jobs)).toEqual(["a"]);
    expect(await lane.reserve(now)).toEqual({ jobs: [], ready: 0, nextDueAt: START + 30_000 });
  });

  it("at maxConcurrency with room in the window, nextDueAt is the lease expiry", async () => {
    const { lane } = await setup({ maxConcurrency: 1, rateLimit: { max: 5, durationMs: 1000 } });
    await lane.put([job("a"), job("b")]);
    expect(ids((await lane.reserve(now)).jobs)).toEqual(["a"]);
    expect(await lane.reserve(now)).toEqual({ jobs: [], ready: 0, nextDueAt: START + 30_000 });
  });

  it("counts only the starts inside the window after many starts left it", async () => {
    const { clock, lane } = await setup({ rateLimit: { max: 2000, durationMs: 1000 } });
    await lane.put(Array.from({ length: 3100 }, (_, i) => job(`j${i}`)));
    expect((await lane.reserve({ ...now, limit: 1100 })).jobs).toHaveLength(1100);
    await clock.advance(1000);
    const r = await lane.reserve({ ...now, limit: 3000 });
    expect(r.jobs).toHaveLength(2000);
    expect(r.jobs[0]?.id).toBe("j1100");
  });
});

describe("ack", () => {
  it("a stale lock finishes nothing", async () => {
    const { clock, lane } = await setup({ maxStalls: 5 });
    await lane.put([job("a")]);
    const first = (await lane.reserve({ ...now, leaseMs: 1000 })).jobs[0] as ReservedJob;
    await clock.advance(1000);
    const second = (await lane.reserve(now)).jobs[0] as ReservedJob;
    expect(await lane.ack([first.lock])).toEqual(["lost"]);
    expect(await lane.nack([{ lock: first.lock, runAt: clock.now(), error: err }])).toEqual([
      "lost",
    ]);
    expect(await lane.release([{ lock: first.lock, uncounted: true }])).toEqual(["lost"]);
    expect((await lane.get("a"))?.state).toBe("active");
    expect(await lane.ack([second.lock])).toEqual(["ok"]);
    expect((await lane.get("a"))?.state).toBe("succeeded");
  });
});

describe("nack", () => {
  it("throws ClosedError once the adapter is closed", async () => {
    const { adapter, lane } = await setup();
    await lane.put([job("a")]);
    const { jobs } = await lane.reserve(now);
    await adapter.close();
    await expect(
      lane.nack([{ lock: (jobs[0] as ReservedJob).lock, runAt: START, error: err }]),
    ).rejects.toBeInstanceOf(ClosedError);
  });

  it("records the run time, reserve to nack, in the day's stats", async () => {
    const { clock, lane } = await setup();
    await lane.put([job("a")]);
    const { jobs } = await lane.reserve(now);
    await clock.advance(700);
    await lane.nack([{ lock: (jobs[0] as ReservedJob).lock, runAt: START + 700, error: err }]);
    const stats = await lane.stats("2026-01-01");
    expect(stats?.run).toMatchObject({ count: 1, mean: 700 });
    expect(stats).toMatchObject({ retries: 1, failures: 0 });
  });

  it("a retry at a runAt that is not finite is due at once", async () => {
    const { clock, lane } = await setup();
    await lane.put([job("a"), job("b")]);
    const { jobs } = await lane.reserve(now);
    await clock.advance(500);
    const [a, b] = jobs as [ReservedJob, ReservedJob];
    expect(
      await lane.nack([
        { lock: a.lock, runAt: Number.NaN, error: err },
        { lock: b.lock, runAt: Number.POSITIVE_INFINITY, error: err },
      ]),
    ).toEqual(["ok", "ok"]);
    expect(await lane.counts()).toMatchObject({ waiting: 2, delayed: 0 });
    const again = await lane.reserve(now);
    expect(again.jobs.map((j) => [j.id, j.attempt, j.readyAt])).toEqual([
      ["a", 2, START + 500],
      ["b", 2, START + 500],
    ]);
  });

  it("a retry due now or earlier waits at once, in nack order", async () => {
    const { clock, lane } = await setup();
    await lane.put([job("a"), job("b")]);
    const { jobs } = await lane.reserve(now);
    await clock.advance(5000);
    const [a, b] = jobs as [ReservedJob, ReservedJob];
    await lane.nack([
      { lock: a.lock, runAt: START + 5000, error: err },
      { lock: b.lock, runAt: START + 1000, error: err },
    ]);
    expect(await waitingIds(lane)).toEqual(["a", "b"]);
  });

  it("promotes jobs that fell due before the nacked job goes back to waiting", async () => {
    const { clock, lane } = await setup();
    await lane.put([job("d", { runAt: START + 1000 }), job("a")]);
    const { jobs } = await lane.reserve(now);
    await clock.advance(1000);
    await lane.nack([{ lock: (jobs[0] as ReservedJob).lock, runAt: START + 1000, error: err }]);
    expect(await waitingIds(lane)).toEqual(["d", "a"]);
  });
});

describe("release", () => {
  it("throws ClosedError once the adapter is closed", async () => {
    const { adapter, lane } = await setup();
    await lane.put([job("a")]);
    const { jobs } = await lane.reserve(now);
    await adapter.close();
    await expect(
      lane.release([{ lock: (jobs[0] as ReservedJob).lock, uncounted: true }]),
    ).rejects.toBeInstanceOf(ClosedError);
  });

  it("a released job goes to a waiting long poll at once", async () => {
    const { lane } = await setup();
    await lane.put([job("a")]);
    const { jobs } = await lane.reserve(now);
    const poll = lane.reserve({ ...now, waitMs: 60_000 });
    expect(await waitingPolls(lane)).toBe(1);
    await lane.release([{ lock: (jobs[0] as ReservedJob).lock, uncounted: true }]);
    expect(await waitingPolls(lane)).toBe(0);
    const { jobs: got } = await poll;
    expect(got.map((j) => [j.id, j.attempt])).toEqual([["a", 1]]);
  });

  it("a runAt that is not later than now, or not finite, keeps the job's due time", async () => {
    const { clock, lane } = await setup();
    await lane.put([job("a"), job("b"), job("c")]);
    const { jobs } = await lane.reserve(now);
    await clock.advance(2000);
    const [a, b, c] = jobs as [ReservedJob, ReservedJob, ReservedJob];
    await lane.release([
      { lock: a.lock, uncounted: true, runAt: START + 2000 },
      { lock: b.lock, uncounted: true, runAt: START + 1000 },
      { lock: c.lock, uncounted: true, runAt: Number.POSITIVE_INFINITY },
    ]);
    expect(await lane.counts()).toMatchObject({ waiting: 3, delayed: 0 });
    const again = await lane.reserve(now);
    expect(again.jobs.map((j) => [j.id, j.attempt, j.readyAt])).toEqual([
      ["a", 1, START],
      ["b", 1, START],
      ["c", 1, START],
    ]);
  });

  it("a job whose expiry passed while it ran expires on release", async () => {
    const { clock, lane } = await setup();
    await lane.put([job("a", { expiresAt: START + 10_000 })]);
    const { jobs } = await lane.reserve({ ...now, leaseMs: 60_000 });
    await clock.advance(20_000);
    expect(await lane.release([{ lock: (jobs[0] as ReservedJob).lock, uncounted: true }])).toEqual([
      "ok",
    ]);
    expect((await lane.get("a"))?.state).toBe("expired");
    expect((await lane.reserve(now)).jobs).toEqual([]);
  });

  it("released jobs already due wait at once, in release order", async () => {
    const { lane } = await setup();
    await lane.put([job("a"), job("b", { runAt: START - 1000 })]);
    const { jobs } = await lane.reserve(now);
    expect(ids(jobs)).toEqual(["b", "a"]);
    const [b, a] = jobs as [ReservedJob, ReservedJob];
    await lane.release([
      { lock: a.lock, uncounted: true },
      { lock: b.lock, uncounted: true },
    ]);
    expect(await waitingIds(lane)).toEqual(["a", "b"]);
  });

  it("promotes jobs that fell due before the released job goes back to waiting", async () => {
    const { clock, lane } = await setup();
    await lane.put([job("d", { runAt: START + 1000 }), job("a")]);
    const { jobs } = await lane.reserve(now);
    await clock.advance(1000);
    await lane.release([{ lock: (jobs[0] as ReservedJob).lock, uncounted: true }]);
    expect(await waitingIds(lane)).toEqual(["d", "a"]);
  });
});
