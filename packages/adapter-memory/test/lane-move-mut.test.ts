import { ConfigError, flushAsync, LaneFullError } from "@tasklane/core";
import type { AdapterEvent, JobError, LaneCounts, LaneStore } from "@tasklane/core/adapter";
import { describe, expect, it } from "vitest";
import { createManualClock, createMemoryAdapter } from "../src/index.ts";
import { job, now, START, setup } from "./helpers.ts";

const boom: JobError = { name: "Error", message: "boom", reason: "error" };
const poll = { limit: 10, leaseMs: 30_000, waitMs: 60_000 };
const empty: LaneCounts = {
  waiting: 0,
  delayed: 0,
  active: 0,
  failed: 0,
  succeeded: 0,
  canceled: 0,
  expired: 0,
  blocked: 0,
};

/** A source lane "q" and a target lane "other" of one adapter. */
async function lanes(adapterOptions: { maxJobs?: number } = {}, maxStalls = 1) {
  const s = await setup({ maxStalls }, adapterOptions);
  const other = await s.adapter.lane("other", { maxStalls, historyLimit: 50 });
  return { ...s, other };
}

/** Put `id` and fail it for good after `attempts` deliveries. */
async function failed(lane: LaneStore, id: string, attempts = 1, extra = {}) {
  await lane.put([job(id, extra)]);
  for (let i = 1; i <= attempts; i++) {
    const { jobs } = await lane.reserve({ ...now, limit: 1 });
    const lock = jobs[0]!.lock;
    if (i < attempts) await lane.nack([{ lock, runAt: 0, error: boom }]);
    else await lane.nack([{ lock, dead: true, error: boom }]);
  }
}

async function errorOf(p: Promise<unknown>): Promise<unknown> {
  return p.then(
    () => undefined,
    (err: unknown) => err,
  );
}

describe("move: the target", () => {
  it("refuses a target that is not another lane of this adapter, naming it", async () => {
    const { lane, other } = await lanes();
    await lane.put([job("a")]);
    const foreign = createMemoryAdapter({ clock: createManualClock(START) });
    const cases: Array<[unknown, unknown, string]> = [
      [undefined, undefined, "must be a lane of the same memory adapter"],
      [
        await foreign.lane("elsewhere", { maxStalls: 1, historyLimit: 0 }),
        "elsewhere",
        "must be a lane of the same memory adapter",
      ],
      // The same name as a lane here, but another adapter's lane.
      [
        await foreign.lane("other", { maxStalls: 1, historyLimit: 0 }),
        "other",
        "must be a lane of the same memory adapter",
      ],
      [lane, "q", "is the lane the jobs are in"],
    ];
    for (const [to, name, problem] of cases) {
      const error = await errorOf(lane.move(["a"], to as LaneStore));
      expect(error).toBeInstanceOf(ConfigError);
      expect((error as ConfigError).field).toBe("to");
      expect((error as ConfigError).value).toBe(name);
      expect((error as ConfigError).message).toMatch(new RegExp(`: ${problem}$`));
    }
    expect((await lane.get("a"))?.state).toBe("waiting");
    expect(await other.counts()).toEqual(empty);
  });

  it("refuses a batch that does not fit the target, moving nothing; an exact fit moves", async () => {
    const { lane, other } = await lanes({ maxJobs: 2 });
    await other.put([job("x")]);
    await lane.put([job("a"), job("b")]);
    const error = await errorOf(lane.move(["a", "b"], other));
    expect(error).toBeInstanceOf(LaneFullError);
    expect((error as LaneFullError).message).toBe('Lane "other" holds its maximum of 2 jobs');
    expect(await lane.counts()).toEqual({ ...empty, waiting: 2 });
    expect(await other.counts()).toEqual({ ...empty, waiting: 1 });
    expect(await lane.move(["a"], other)).toEqual(["moved"]);
    expect(await other.counts()).toEqual({ ...empty, waiting: 2 });
  });

  it("reclaims the target's expired leases first: a job that died makes room", async () => {
    const { clock, lane, other } = await lanes({ maxJobs: 2 }, 0);
    await other.put([job("x")]);
    await other.reserve({ ...now, leaseMs: 1000 });
    await lane.put([job("a"), job("b")]);
    await clock.setTime(START + 1000);
    // x's holder is gone: with maxStalls 0 it is dead now, and no longer pending.
    expect(await lane.move(["a", "b"], other)).toEqual(["moved", "moved"]);
    expect(await other.counts()).toEqual({ ...empty, waiting: 2, failed: 1 });
  });

  it("a job named twice moves once", async () => {
    const { lane, other } = await lanes();
    await lane.put([job("a")]);
    expect(await lane.move(["a", "a"], other)).toEqual(["moved", "not_found"]);
    expect(await other.counts()).toEqual({ ...empty, waiting: 1 });
    expect(await lane.counts()).toEqual(empty);
  });

  it("serves a long poll waiting on the target at once", async () => {
    const { lane, other } = await lanes();
    await lane.put([job("a")]);
    let result: string[] | undefined;
    void other.reserve(poll).then((r) => {
      result = r.jobs.map((j) => j.id);
    });
    await flushAsync();
    expect(result).toBeUndefined();
    expect(await lane.move(["a"], other)).toEqual(["moved"]);
    await flushAsync();
    expect(result).toEqual(["a"]);
  });
});

describe("move: the source lets go of every job it moved", () => {
  it("waiting, delayed, held and failed: nothing of them is left to take or fall due", async () => {
    const { adapter, clock, lane, other } = await lanes();
    const seen: AdapterEvent[] = [];
    await adapter.subscribe((e) => seen.push(e), { lifecycle: false });
    await failed(lane, "f");
    await lane.put([job("h")]);
    const held = (await lane.reserve({ ...now, leaseMs: 1000 })).jobs[0]!;
    await lane.put([job("w"), job("d", { runAt: START + 5000 })]);
    expect(await lane.move(["w", "d", "h", "f"], other)).toEqual([
      "moved",
      "moved",
      "moved",
      "moved",
    ]);
    // Only the held job's holder is told (a put event names where it went).
    expect(seen).toEqual([{ type: "put", lane: "q", jobId: "h", toLane: "other" }]);
    expect(await lane.probe()).toBe(0);
    expect((await lane.reserve(now)).jobs).toEqual([]);
    await clock.setTime(START + 5000);
    expect((await lane.reserve(now)).jobs).toEqual([]);
    expect(await lane.counts()).toEqual(empty);
    expect(await lane.ack([held.lock])).toEqual(["lost"]);
    expect(await other.counts()).toEqual({ ...empty, waiting: 4 });
  });

  it("moving the only delayed job away leaves a waiting poll only its own timer", async () => {
    const { clock, lane, other } = await lanes();
    await lane.put([job("d", { runAt: START + 5000 })]);
    void lane.reserve(poll);
    await flushAsync();
    expect(clock.pending()).toBe(2);
    expect(await lane.move(["d"], other)).toEqual(["moved"]);
    expect(clock.pending()).toBe(1);
  });

  it("reclaims the source's expired leases first: a lapsed job moves as waiting, its stall counted", async () => {
    const { clock, lane, other } = await lanes();
    await lane.put([job("a")]);
    await lane.reserve({ ...now, leaseMs: 1000 });
    await clock.setTime(START + 1000);
    expect(await lane.move(["a"], other)).toEqual(["moved"]);
    const info = await other.get("a");
    expect([info?.state, info?.attempt]).toEqual(["waiting", 1]);
    expect(info?.history.map((e) => e.event)).toEqual([
      "published",
      "reserved",
      "stalled",
      "moved",
    ]);
  });
});

describe("move: the job in the target", () => {
  it("a waiting job keeps its due time and attempts; a delayed one falls due when it was due", async () => {
    const { clock, lane, other } = await lanes();
    await lane.put([job("w")]);
    const { jobs } = await lane.reserve(now);
    await lane.nack([{ lock: jobs[0]!.lock, runAt: START + 100, error: boom }]);
    await lane.put([job("d", { runAt: START + 5000 })]);
    await clock.setTime(START + 200);
    expect(await lane.move(["w", "d"], other)).toEqual(["moved", "moved"]);
    const w = await other.get("w");
    expect([w?.state, w?.attempt, w?.runAt]).toEqual(["waiting", 1, START + 100]);
    const d = await other.get("d");
    expect([d?.state, d?.attempt, d?.runAt]).toEqual(["delayed", 0, START + 5000]);
    expect((await other.reserve(now)).jobs.map((j) => [j.id, j.attempt])).toEqual([["w", 2]]);
    await clock.setTime(START + 4999);
    expect((await other.reserve(now)).jobs).toEqual([]);
    await clock.setTime(START + 5000);
    expect((await other.reserve(now)).jobs.map((j) => [j.id, j.attempt, j.readyAt])).toEqual([
      ["d", 1, START + 5000],
    ]);
  });

  it("a held job is due now, its interrupted delivery not counted", async () => {
    const { clock, lane, other } = await lanes();
    await lane.put([job("h")]);
    const { jobs } = await lane.reserve(now);
    await lane.nack([{ lock: jobs[0]!.lock, runAt: START, error: boom }]);
    await lane.reserve(now);
    await clock.setTime(START + 300);
    expect(await lane.move(["h"], other)).toEqual(["moved"]);
    const h = await other.get("h");
    expect([h?.state, h?.attempt, h?.runAt]).toEqual(["waiting", 1, START + 300]);
  });

  it("a failed job leaves the dead letter set: due now, attempts reset, no suspect, in order", async () => {
    const { clock, lane, other } = await lanes();
    await failed(lane, "f1", 2);
    await failed(lane, "f2");
    await clock.setTime(START + 300);
    expect(await lane.move(["f1", "f2"], other)).toEqual(["moved", "moved"]);
    const f1 = await other.get("f1");
    expect([f1?.state, f1?.attempt, f1?.runAt, f1?.finishedAt]).toEqual([
      "waiting",
      0,
      START + 300,
      undefined,
    ]);
    const { jobs } = await other.reserve(now);
    expect(jobs.map((j) => [j.id, j.attempt, j.suspect])).toEqual([
      ["f1", 1, undefined],
      ["f2", 1, undefined],
    ]);
  });

  it("a failed job's expiry no longer applies; a waiting job's still does", async () => {
    const { clock, lane, other } = await lanes();
    await failed(lane, "f", 1, { expiresAt: START + 100 });
    await lane.put([job("w", { expiresAt: START + 1000 })]);
    await other.pause();
    await clock.setTime(START + 200);
    expect(await lane.move(["f", "w"], other)).toEqual(["moved", "moved"]);
    expect((await other.get("f"))?.expiresAt).toBeUndefined();
    const w = await other.get("w");
    expect([w?.state, w?.expiresAt]).toEqual(["waiting", START + 1000]);
    await clock.setTime(START + 1000);
    expect((await other.get("f"))?.state).toBe("waiting");
    expect((await other.get("w"))?.state).toBe("expired");
  });

  it("a held job whose expiry passed while it ran ends expired in the target", async () => {
    const { clock, lane, other } = await lanes();
    await lane.put([job("h", { expiresAt: START + 100 })]);
    await lane.reserve(now);
    await clock.setTime(START + 100);
    expect(await lane.move(["h"], other)).toEqual(["moved"]);
    const h = await other.get("h");
    expect([h?.state, h?.finishedAt]).toEqual(["expired", START + 100]);
    expect(h?.history.map((e) => e.event).slice(-2)).toEqual(["moved", "expired"]);
  });
});
