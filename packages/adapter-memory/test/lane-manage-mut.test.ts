import {
  ClosedError,
  ConfigError,
  flushAsync,
  LaneFullError,
  type ManualClock,
} from "@tasklane/core";
import type { JobError, JobInfo } from "@tasklane/core/adapter";
import { describe, expect, it } from "vitest";
import type { MemoryLane } from "../src/index.ts";
import { job, now, START, setup, track } from "./helpers.ts";

const boom: JobError = { name: "Error", message: "boom", reason: "error" };
const poll = { limit: 10, leaseMs: 30_000, waitMs: 60_000 };

async function ids(iterable: AsyncIterable<JobInfo>): Promise<string[]> {
  const out: string[] = [];
  for await (const info of iterable) out.push(info.id);
  return out;
}

/** A list() iteration driven by hand (the memory lane's list is an async generator). */
const iterate = (listing: AsyncIterable<JobInfo>) =>
  listing[Symbol.asyncIterator]() as AsyncGenerator<JobInfo, void, undefined>;

const events = (info: JobInfo | undefined) => info?.history.map((e) => e.event);

/** One job reserved at START under a 1 s lease; the clock then at the lease's end. */
async function expiredLease(laneOptions: { maxStalls?: number } = {}) {
  const s = await setup(laneOptions);
  await s.lane.put([job("a")]);
  const { jobs } = await s.lane.reserve({ ...now, leaseMs: 1000 });
  await s.clock.setTime(START + 1000);
  return { ...s, lock: jobs[0]!.lock };
}

describe("every call first reclaims expired leases (lazy maintenance)", () => {
  it("reads see the stalled job back in waiting", async () => {
    let s = await expiredLease();
    expect(await s.lane.probe()).toBe(1);
    s = await expiredLease();
    expect(await s.lane.counts()).toMatchObject({ waiting: 1, active: 0 });
    s = await expiredLease();
    expect((await s.lane.get("a"))?.state).toBe("waiting");
    s = await expiredLease();
    expect(await ids(s.lane.list({ state: "waiting" }))).toEqual(["a"]);
    s = await expiredLease();
    expect((await s.lane.listPage({ state: "waiting" })).jobs.map((j) => j.id)).toEqual(["a"]);
    s = await expiredLease();
    expect(await s.lane.count({ state: "waiting", task: "t" })).toBe(1);
    s = await expiredLease({ maxStalls: 0 });
    expect((await s.lane.failures()).map((g) => [g.group, g.count])).toEqual([["StalledError", 1]]);
  });

  it("writes act on the stalled job, not on the lapsed reservation", async () => {
    let s = await expiredLease();
    expect(await s.lane.delete(["a"])).toBe(1);
    s = await expiredLease();
    expect(await s.lane.setPriority(["a"], 4)).toEqual(["ok"]);
    s = await expiredLease();
    expect(await s.lane.promote(["a"])).toEqual(["ok"]);
    s = await expiredLease({ maxStalls: 0 });
    expect(await s.lane.retryFailed()).toBe(1);
    s = await expiredLease();
    expect(await s.lane.cancel(["a"])).toEqual(["canceled"]);
    expect(events(await s.lane.get("a"))).toEqual(["published", "reserved", "stalled", "canceled"]);
  });

  it("a stall is recorded at the time of the call that finds it (extend, report, resume, list pages)", async () => {
    const stalledAt = async (s: { clock: ManualClock; lane: MemoryLane }) => {
      await s.clock.advance(500);
      const info = await s.lane.get("a");
      return info?.history.find((e) => e.event === "stalled")?.at;
    };
    let s = await expiredLease();
    expect(await s.lane.extend([s.lock], 1000)).toEqual(["lost"]);
    expect(await stalledAt(s)).toBe(START + 1000);
    s = await expiredLease();
    expect(await s.lane.report([{ lock: s.lock, progress: "1" }])).toEqual(["lost"]);
    expect(await stalledAt(s)).toBe(START + 1000);
    s = await expiredLease();
    await s.lane.pause();
    await s.lane.resume();
    expect(await stalledAt(s)).toBe(START + 1000);

    // A list() iterator maintains again before each page.
    const t = await setup();
    await t.lane.put([job("a"), job("b"), job("c")]);
    await t.lane.reserve({ ...now, limit: 1, leaseMs: 1000 });
    const iterator = iterate(t.lane.list({ state: "waiting", pageSize: 1 }));
    expect((await iterator.next()).value?.id).toBe("b");
    await t.clock.setTime(START + 1000);
    expect((await iterator.next()).value?.id).toBe("c");
    await iterator.return(undefined);
    expect(await stalledAt(t)).toBe(START + 1000);
  });
});

describe("closed adapter", () => {
  it("every management call of a lane refuses with ClosedError", async () => {
    const { adapter, lane } = await setup();
    const { lane: other } = await setup();
    await lane.put([job("a")]);
    const { jobs } = await lane.reserve(now);
    const lock = jobs[0]!.lock;
    const iterator = iterate(lane.list({ state: "succeeded", pageSize: 1 }));
    await lane.ack([lock]);
    await lane.put([job("b"), job("c")]);
    const { jobs: more } = await lane.reserve(now);
    await lane.ack(more.map((j) => j.lock));
    expect((await iterator.next()).value?.id).toBe("a");
    await adapter.close();
    const schedule = { id: "s", data: "{}", nextAt: START };
    const calls: Array<[string, () => Promise<unknown>]> = [
      ["extend", () => lane.extend([lock], 1000)],
      ["probe", () => lane.probe()],
      ["counts", () => lane.counts()],
      ["get", () => lane.get("a")],
      ["list", () => ids(lane.list({ state: "waiting" }))],
      ["list, next page", () => iterator.next()],
      ["cancel", () => lane.cancel(["a"])],
      ["retryFailed", () => lane.retryFailed()],
      ["delete", () => lane.delete(["a"])],
      ["pause", () => lane.pause()],
      ["resume", () => lane.resume()],
      ["isPaused", () => lane.isPaused()],
      ["stats", () => lane.stats("2026-01-01")],
      ["putSchedule", () => lane.putSchedule(schedule)],
      ["getSchedule", () => lane.getSchedule("s")],
      ["listSchedules", () => lane.listSchedules()],
      ["removeSchedule", () => lane.removeSchedule("s")],
      ["dueSchedules", () => lane.dueSchedules(START, 10)],
      ["nextScheduleAt", () => lane.nextScheduleAt()],
      ["fireSchedule", () => lane.fireSchedule(schedule, 1, [])],
      ["report", () => lane.report([{ lock, progress: "1" }])],
      ["listPage", () => lane.listPage({})],
      ["count", () => lane.count({ task: "t" })],
      ["failures", () => lane.failures()],
      ["setPriority", () => lane.setPriority(["a"], 1)],
      ["promote", () => lane.promote(["a"])],
      ["move", () => lane.move(["a"], other)],
    ];
    for (const [name, call] of calls) {
      const error = await call().then(
        () => undefined,
        (err: unknown) => err,
      );
      expect(error, name).toBeInstanceOf(ClosedError);
      expect((error as ClosedError).message, name).toBe('memory lane "q" is closed');
    }
  });
});

describe("extend", () => {
  it("renews the lease: the job is not reclaimed at its old expiry", async () => {
    const { clock, lane } = await setup();
    await lane.put([job("a")]);
    const { jobs } = await lane.reserve({ ...now, leaseMs: 1000 });
    await clock.advance(500);
    expect(await lane.extend([jobs[0]!.lock], 1000)).toEqual(["ok"]);
    await clock.advance(999);
    expect((await lane.get("a"))?.state).toBe("active");
    expect(await lane.ack([jobs[0]!.lock])).toEqual(["ok"]);
  });

  it("a renewed lease does not hide the lease of another job that ends sooner", async () => {
    const { clock, lane } = await setup();
    await lane.put([job("a"), job("b")]);
    const a = (await lane.reserve({ ...now, limit: 1, leaseMs: 1000 })).jobs[0]!;
    await lane.reserve({ ...now, limit: 1, leaseMs: 2000 });
    await clock.advance(500);
    expect(await lane.extend([a.lock], 3000)).toEqual(["ok"]);
    await clock.setTime(START + 2000);
    expect(await lane.counts()).toMatchObject({ waiting: 1, active: 1 });
    expect((await lane.get("b"))?.state).toBe("waiting");
    expect(await lane.ack([a.lock])).toEqual(["ok"]);
  });

  it("a lost lock extends nothing: unknown, stale, released and finished locks", async () => {
    const { clock, lane } = await setup();
    await lane.put([job("a"), job("b")]);
    const first = (await lane.reserve({ ...now, limit: 1, leaseMs: 1000 })).jobs[0]!;
    expect(await lane.release([{ lock: first.lock, uncounted: true }])).toEqual(["ok"]);
    const second = (await lane.reserve({ ...now, limit: 1, leaseMs: 1000 })).jobs[0]!;
    expect(second.id).toBe("a");
    const b = (await lane.reserve({ ...now, limit: 1, leaseMs: 1000 })).jobs[0]!;
    await lane.ack([b.lock]);
    expect(
      await lane.extend(
        [{ jobId: "nope", token: "1", expiresAt: START }, first.lock, b.lock],
        60_000,
      ),
    ).toEqual(["lost", "lost", "lost"]);
    // The current reservation kept its own lease.
    await clock.advance(1000);
    expect(await lane.ack([second.lock])).toEqual(["lost"]);
  });

  it("answers canceled for a reservation canceled while held, lost once it is released", async () => {
    const { lane } = await setup();
    await lane.put([job("a"), job("b")]);
    const { jobs } = await lane.reserve(now);
    await lane.cancel(["a"]);
    await lane.release([{ lock: jobs[1]!.lock, uncounted: true }]);
    expect(await lane.extend([jobs[0]!.lock, jobs[1]!.lock], 1000)).toEqual(["canceled", "lost"]);
    expect(
      await lane.report([
        { lock: jobs[1]!.lock, progress: "5" },
        { lock: { jobId: "nope", token: "1", expiresAt: START }, progress: "6" },
      ]),
    ).toEqual(["lost", "lost"]);
    expect((await lane.get("b"))?.progress).toBeUndefined();
  });
});

describe("list", () => {
  it("an unknown state lists nothing", async () => {
    const { lane } = await setup();
    await lane.put([job("a")]);
    expect(await ids(lane.list({ state: "bogus" as "waiting" }))).toEqual([]);
  });

  it("an iteration steps over the cursor another iteration parked in the list", async () => {
    const { lane } = await setup();
    await lane.put([job("a"), job("b"), job("c")]);
    const one = iterate(lane.list({ state: "waiting", pageSize: 1 }));
    expect((await one.next()).value?.id).toBe("a");
    expect(await ids(lane.list({ state: "waiting", pageSize: 10 }))).toEqual(["a", "b", "c"]);
    expect((await one.next()).value?.id).toBe("b");
    expect((await one.next()).value?.id).toBe("c");
    expect((await one.next()).done).toBe(true);
  });

  it("count and listPage step over the cursor of an iteration in progress", async () => {
    const { lane } = await setup();
    await lane.put([job("a"), job("b"), job("c")]);
    const iterator = iterate(lane.list({ state: "waiting", pageSize: 1 }));
    expect((await iterator.next()).value?.id).toBe("a");
    expect(await lane.count({ state: "waiting", task: "t" })).toBe(3);
    expect(await lane.count({ task: "t" })).toBe(3);
    expect(await lane.count({ state: "waiting", since: START })).toBe(3);
    expect((await lane.listPage({ state: "waiting" })).jobs.map((j) => j.id)).toEqual([
      "a",
      "b",
      "c",
    ]);
    await iterator.return(undefined);
  });
});

describe("cancel", () => {
  it("records the cancel in the job's history", async () => {
    const { clock, lane } = await setup();
    await lane.put([job("a")]);
    await clock.advance(10);
    expect(await lane.cancel(["a", "nope"])).toEqual(["canceled", "not_found"]);
    expect((await lane.get("a"))?.history).toEqual([
      { at: START, event: "published" },
      { at: START + 10, event: "canceled" },
    ]);
  });

  it("canceling a held job frees its slot for a waiting long poll at once", async () => {
    const { lane } = await setup({ maxConcurrency: 1 });
    await lane.put([job("a"), job("b")]);
    await lane.reserve({ ...now, limit: 1 });
    const waiting = track(lane.reserve(poll));
    await flushAsync();
    expect(waiting.result).toBeUndefined();
    expect(await lane.cancel(["a"])).toEqual(["canceled"]);
    await flushAsync();
    expect(waiting.result?.jobs.map((j) => j.id)).toEqual(["b"]);
  });
});

describe("retryFailed", () => {
  it("serves a waiting long poll at once", async () => {
    const { lane } = await setup();
    await lane.put([job("a")]);
    const { jobs } = await lane.reserve(now);
    await lane.nack([{ lock: jobs[0]!.lock, dead: true, error: boom }]);
    const waiting = track(lane.reserve(poll));
    await flushAsync();
    expect(waiting.result).toBeUndefined();
    expect(await lane.retryFailed(["a"])).toBe(1);
    await flushAsync();
    expect(waiting.result?.jobs.map((j) => [j.id, j.attempt, j.suspect])).toEqual([
      ["a", 1, undefined],
    ]);
  });

  it("a retried job is no suspect, and its expiry no longer applies", async () => {
    const { clock, lane } = await setup();
    await lane.put([job("a", { expiresAt: START + 5000 })]);
    // A prefetched delivery lapses: the job is marked a suspect, then fails for good.
    await lane.reserve({ ...now, startNow: 0, leaseMs: 1000 });
    await clock.advance(1000);
    const { jobs } = await lane.reserve(now);
    expect(jobs[0]?.suspect).toBe(true);
    await lane.nack([{ lock: jobs[0]!.lock, dead: true, error: boom }]);
    await clock.advance(10_000);
    expect(await lane.retryFailed()).toBe(1);
    expect((await lane.get("a"))?.expiresAt).toBeUndefined();
    const again = (await lane.reserve(now)).jobs[0]!;
    expect([again.id, again.attempt, again.suspect]).toEqual(["a", 1, undefined]);
    // A retry after this failure runs too: the expiry is gone, not just skipped once.
    await lane.nack([{ lock: again.lock, runAt: clock.now(), error: boom }]);
    expect((await lane.get("a"))?.state).toBe("waiting");
  });
});

describe("retryFailed under maxJobs", () => {
  /** A lane of at most 3 pending jobs holding `failedIds` failed and `waitingIds` waiting. */
  async function fullish(failedIds: string[], waitingIds: string[]) {
    const s = await setup({}, { maxJobs: 3 });
    for (const id of failedIds) {
      await s.lane.put([job(id)]);
      const { jobs } = await s.lane.reserve(now);
      await s.lane.nack([{ lock: jobs[0]!.lock, dead: true, error: boom }]);
    }
    await s.lane.put(waitingIds.map((id) => job(id)));
    return s;
  }

  it("refuses a retry that does not fit, retrying nothing; one that fits exactly retries", async () => {
    const { lane } = await fullish(["a", "b", "c"], ["x"]);
    for (const call of [() => lane.retryFailed(), () => lane.retryFailed(["a", "b", "c"])]) {
      const error = await call().then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(error).toBeInstanceOf(LaneFullError);
      expect((error as LaneFullError).message).toBe('Lane "q" holds its maximum of 3 jobs');
      expect(await lane.counts()).toMatchObject({ waiting: 1, failed: 3 });
      expect((await lane.get("a"))?.history.map((e) => e.event)).not.toContain("retried");
    }
    // Named twice and an unknown id: two failed jobs, which fit beside x.
    expect(await lane.retryFailed(["a", "b", "a", "nope"])).toBe(2);
    expect(await lane.counts()).toMatchObject({ waiting: 3, failed: 1 });
  });

  it("retrying every failed job fits when only they would be pending", async () => {
    const { lane } = await fullish(["a", "b", "c"], []);
    expect(await lane.retryFailed()).toBe(3);
    expect(await lane.counts()).toMatchObject({ waiting: 3, failed: 0 });
  });
});

describe("delete", () => {
  it("deleting the only delayed job leaves a waiting poll only its own timer", async () => {
    const { clock, lane } = await setup();
    await lane.put([job("d", { runAt: START + 5000 })]);
    const waiting = track(lane.reserve(poll));
    await flushAsync();
    expect(clock.pending()).toBe(2);
    expect(await lane.delete(["d"])).toBe(1);
    expect(clock.pending()).toBe(1);
    await clock.advance(poll.waitMs);
    expect(waiting.result?.jobs).toEqual([]);
  });
});

describe("schedules", () => {
  it("putSchedule and fireSchedule refuse a malformed write with a ConfigError", async () => {
    const { lane } = await setup();
    const bad = { id: "", data: "{}", nextAt: START };
    const put = await lane.putSchedule(bad).catch((err: unknown) => err);
    expect(put).toBeInstanceOf(ConfigError);
    expect((put as ConfigError).field).toBe("schedule.id");
    const fire = await lane.fireSchedule(bad, 1, [job("x")]).catch((err: unknown) => err);
    expect(fire).toBeInstanceOf(ConfigError);
    expect((fire as ConfigError).field).toBe("schedule.id");
    expect(await lane.get("x")).toBeUndefined();
    expect(await lane.getSchedule("")).toBeUndefined();
  });
});

describe("listPage", () => {
  it("a page holds pageSize matching jobs, however many others it steps over", async () => {
    const { lane } = await setup();
    await lane.put(
      Array.from({ length: 12 }, (_, i) => job(`j${i}`, i % 3 === 2 ? { tags: ["x"] } : {})),
    );
    const first = await lane.listPage({ tag: "x", pageSize: 2 });
    expect(first.jobs.map((j) => j.id)).toEqual(["j2", "j5"]);
    expect(first.cursor).toBeDefined();
    const second = await lane.listPage({ tag: "x", pageSize: 2 }, first.cursor);
    expect(second.jobs.map((j) => j.id)).toEqual(["j8", "j11"]);
  });

  it("stops at pageSize, and does not list jobs that entered after the first page", async () => {
    const { lane } = await setup();
    await lane.put([job("a"), job("b"), job("c")]);
    const first = await lane.listPage({ state: "waiting", pageSize: 2 });
    expect(first.jobs.map((j) => j.id)).toEqual(["a", "b"]);
    await lane.put([job("d")]);
    const second = await lane.listPage({ state: "waiting", pageSize: 2 }, first.cursor);
    expect(second).toEqual({ jobs: [expect.objectContaining({ id: "c" })] });
  });

  it("examines at most 10,000 jobs per call: a sparse match comes on a later page", async () => {
    const { lane } = await setup();
    const n = 10_001;
    await lane.put(
      Array.from({ length: n }, (_, i) => job(`j${i}`, i === n - 1 ? { tags: ["x"] } : {})),
    );
    const first = await lane.listPage({ tag: "x", pageSize: 5 });
    expect(first.jobs).toEqual([]);
    expect(first.cursor).toBeDefined();
    const second = await lane.listPage({ tag: "x", pageSize: 5 }, first.cursor);
    expect(second.jobs.map((j) => j.id)).toEqual([`j${n - 1}`]);
    expect(second.cursor).toBeUndefined();
  });
});

describe("setPriority", () => {
  it("refuses a priority that is not an integer, naming the field", async () => {
    const { lane } = await setup();
    await lane.put([job("a")]);
    const error = await lane.setPriority(["a"], 1.5).catch((err: unknown) => err);
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as ConfigError).field).toBe("priority");
    expect((error as ConfigError).message).toBe(
      "Invalid option priority = 1.5: must be an integer",
    );
    expect((await lane.get("a"))?.priority).toBe(0);
  });

  it("records the new priority of a delayed job in its history", async () => {
    const { clock, lane } = await setup();
    await lane.put([job("d", { runAt: START + 5000 })]);
    await clock.advance(10);
    expect(await lane.setPriority(["d"], 7)).toEqual(["ok"]);
    expect((await lane.get("d"))?.history).toEqual([
      { at: START, event: "published" },
      { at: START + 10, event: "prioritized", detail: "7" },
    ]);
  });

  it("a re-prioritised waiting job is handed out once, counted once, listed once", async () => {
    const { lane } = await setup();
    await lane.put([job("a"), job("b"), job("c")]);
    expect(await lane.setPriority(["b"], 5)).toEqual(["ok"]);
    expect(await lane.counts()).toMatchObject({ waiting: 3 });
    expect(await ids(lane.list({ state: "waiting" }))).toEqual(["a", "b", "c"]);
    expect((await lane.get("b"))?.priority).toBe(5);
    const { jobs } = await lane.reserve(now);
    expect(jobs.map((j) => [j.id, j.priority])).toEqual([
      ["b", 5],
      ["a", 0],
      ["c", 0],
    ]);
    expect(await lane.counts()).toMatchObject({ waiting: 0, active: 3 });
    expect(await ids(lane.list({ state: "waiting" }))).toEqual([]);
    expect(await ids(lane.list({ state: "active" }))).toEqual(["b", "a", "c"]);
  });

  it("a re-prioritised waiting job still expires", async () => {
    const { clock, lane } = await setup();
    await lane.put([job("a", { expiresAt: START + 1000 })]);
    await lane.pause();
    expect(await lane.setPriority(["a"], 3)).toEqual(["ok"]);
    await clock.advance(1000);
    expect((await lane.get("a"))?.state).toBe("expired");
  });
});

describe("promote", () => {
  it("answers ok for a job already waiting, wrong_state for a held one", async () => {
    const { lane } = await setup();
    await lane.put([job("a"), job("b")]);
    await lane.reserve({ ...now, limit: 1 });
    expect(await lane.promote(["b", "a", "nope"])).toEqual(["ok", "wrong_state", "not_found"]);
  });

  it("moves the job from delayed to waiting for good, and records it", async () => {
    const { clock, lane } = await setup();
    await lane.put([job("d", { runAt: START + 5000 })]);
    await clock.advance(10);
    expect(await lane.promote(["d"])).toEqual(["ok"]);
    expect(await lane.counts()).toMatchObject({ waiting: 1, delayed: 0 });
    expect(await ids(lane.list({ state: "waiting" }))).toEqual(["d"]);
    expect(events(await lane.get("d"))).toEqual(["published", "promoted"]);
    const { jobs } = await lane.reserve(now);
    expect(jobs.map((j) => [j.id, j.readyAt])).toEqual([["d", START + 10]]);
    await lane.ack([jobs[0]!.lock]);
    // Its old due time passes: nothing falls due again.
    await clock.advance(10_000);
    expect((await lane.reserve(now)).jobs).toEqual([]);
    expect(await lane.counts()).toEqual({
      waiting: 0,
      delayed: 0,
      active: 0,
      failed: 0,
      succeeded: 1,
      canceled: 0,
      expired: 0,
      blocked: 0,
    });
  });

  it("serves a waiting long poll at once", async () => {
    const { lane } = await setup();
    await lane.put([job("d", { runAt: START + 5000 })]);
    const waiting = track(lane.reserve(poll));
    await flushAsync();
    expect(waiting.result).toBeUndefined();
    expect(await lane.promote(["d"])).toEqual(["ok"]);
    await flushAsync();
    expect(waiting.result?.jobs.map((j) => j.id)).toEqual(["d"]);
  });

  it("a promoted job still expires", async () => {
    const { clock, lane } = await setup();
    await lane.put([job("d", { runAt: START + 5000, expiresAt: START + 1000 })]);
    await lane.pause();
    expect(await lane.promote(["d"])).toEqual(["ok"]);
    await clock.advance(1000);
    expect((await lane.get("d"))?.state).toBe("expired");
  });
});
