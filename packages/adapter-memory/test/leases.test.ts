import type { AdapterEvent, JobError } from "@tasklane/core/adapter";
import { describe, expect, it } from "vitest";
import { job, now, START, setup } from "./helpers.ts";

const boom: JobError = { name: "Error", message: "boom", reason: "error" };

describe("leases, fencing and outcomes", () => {
  it("acks a live lease once; a second ack is lost", async () => {
    const { lane } = await setup();
    await lane.put([job("a")]);
    const [a] = (await lane.reserve(now)).jobs;
    expect(await lane.ack([a!.lock])).toEqual(["ok"]);
    expect(await lane.ack([a!.lock])).toEqual(["lost"]);
    const info = await lane.get("a");
    expect(info).toMatchObject({ state: "succeeded", attempt: 1, finishedAt: START });
    expect(info?.history.map((e) => e.event)).toEqual(["published", "reserved", "succeeded"]);
  });

  it("an expired lease goes back to waiting; the stale holder is lost; attempt + 1", async () => {
    const { clock, lane } = await setup({ maxStalls: 3 });
    await lane.put([job("a")]);
    const [first] = (await lane.reserve({ ...now, leaseMs: 1000 })).jobs;
    await clock.advance(1000);
    // Lost even before any reserve reclaimed it.
    expect(await lane.extend([first!.lock], 1000)).toEqual(["lost"]);
    expect(await lane.counts()).toMatchObject({ waiting: 1, active: 0 });
    const [second] = (await lane.reserve(now)).jobs;
    // Due since it was put: a reclaimed job keeps its due time (its place in the lane).
    expect(second).toMatchObject({ id: "a", attempt: 2, readyAt: START });
    expect(second!.lock.token).not.toBe(first!.lock.token);
    expect(await lane.ack([first!.lock])).toEqual(["lost"]);
    expect(await lane.ack([second!.lock])).toEqual(["ok"]);
    expect((await lane.get("a"))?.history.map((e) => e.event)).toContain("stalled");
  });

  it("extend pushes the lease end out", async () => {
    const { clock, lane } = await setup();
    await lane.put([job("a")]);
    const [a] = (await lane.reserve({ ...now, leaseMs: 1000 })).jobs;
    await clock.advance(900);
    expect(await lane.extend([a!.lock], 1000)).toEqual(["ok"]);
    await clock.advance(900);
    expect(await lane.counts()).toMatchObject({ active: 1 });
    expect(await lane.ack([a!.lock])).toEqual(["ok"]);
  });

  it("past maxStalls a job goes to failed with reason stalled", async () => {
    const { clock, lane } = await setup({ maxStalls: 1 });
    await lane.put([job("a")]);
    await lane.reserve({ ...now, leaseMs: 100 });
    await clock.advance(100);
    const [again] = (await lane.reserve({ ...now, leaseMs: 100 })).jobs;
    expect(again?.attempt).toBe(2);
    await clock.advance(100);
    expect((await lane.reserve(now)).jobs).toEqual([]);
    const info = await lane.get("a");
    expect(info?.state).toBe("failed");
    expect(info?.error).toMatchObject({ name: "StalledError", reason: "stalled" });
    expect((await lane.stats("2026-01-01"))?.failures).toBe(1);
  });

  it("nack retries later (delayed, then due) or dead-letters; retryFailed resets the attempt", async () => {
    const { clock, lane } = await setup();
    await lane.put([job("a"), job("b")]);
    const [a, b] = (await lane.reserve(now)).jobs;
    expect(
      await lane.nack([
        { lock: a!.lock, runAt: START + 5000, error: boom },
        { lock: b!.lock, dead: true, error: { ...boom, reason: "unrecoverable" } },
      ]),
    ).toEqual(["ok", "ok"]);
    expect(await lane.counts()).toMatchObject({ delayed: 1, failed: 1 });
    expect((await lane.get("a"))?.error?.message).toBe("boom");
    await clock.advance(5000);
    const [a2] = (await lane.reserve(now)).jobs;
    expect(a2).toMatchObject({ id: "a", attempt: 2 });
    expect(await lane.retryFailed()).toBe(1);
    const [b2] = (await lane.reserve(now)).jobs;
    expect(b2).toMatchObject({ id: "b", attempt: 1 });
    const stats = await lane.stats("2026-01-01");
    expect(stats).toMatchObject({ retries: 1, failures: 1 });
    expect(stats?.run.count).toBe(2);
    expect(stats?.wait.count).toBe(4);
  });

  it("release uncounted hands the job back due now with the same attempt number", async () => {
    const { lane } = await setup();
    await lane.put([job("a"), job("b", { priority: -1 })]);
    const [a] = (await lane.reserve({ ...now, limit: 1 })).jobs;
    expect(a?.attempt).toBe(1);
    expect(await lane.release([{ lock: a!.lock, uncounted: true }])).toEqual(["ok"]);
    expect(await lane.ack([a!.lock])).toEqual(["lost"]);
    const [again] = (await lane.reserve({ ...now, limit: 1 })).jobs;
    expect(again).toMatchObject({ id: "a", attempt: 1 });
  });

  it("cancels waiting, delayed and active jobs; the holder learns it and an event is sent", async () => {
    const { adapter, lane } = await setup();
    const events: AdapterEvent[] = [];
    const unsubscribe = await adapter.subscribe((e) => events.push(e));
    await lane.put([job("run"), job("wait", { priority: -1 }), job("later", { runAt: START + 1 })]);
    const [run] = (await lane.reserve({ ...now, limit: 1 })).jobs;
    expect(await lane.cancel(["run", "wait", "later", "nope"])).toEqual([
      "canceled",
      "canceled",
      "canceled",
      "not_found",
    ]);
    // The holder's event, then (lifecycle events, after the operation) the other two.
    expect(events.filter((e) => e.type === "canceled")).toEqual([
      { type: "canceled", lane: "q", jobId: "run" },
      { type: "canceled", lane: "q", jobId: "wait" },
      { type: "canceled", lane: "q", jobId: "later" },
    ]);
    expect(await lane.extend([run!.lock], 1000)).toEqual(["canceled"]);
    expect(await lane.ack([run!.lock])).toEqual(["canceled"]);
    expect(await lane.nack([{ lock: run!.lock, dead: true, error: boom }])).toEqual(["canceled"]);
    expect(await lane.cancel(["run"])).toEqual(["finished"]);
    expect(await lane.counts()).toMatchObject({ waiting: 0, delayed: 0, active: 0, canceled: 3 });
    await unsubscribe();
    const heard = events.length;
    await lane.put([job("x")]);
    await lane.reserve(now);
    await lane.cancel(["x"]);
    expect(events).toHaveLength(heard);
  });

  it("a stale lock of a job canceled under a newer lease is lost, not canceled", async () => {
    const { clock, lane } = await setup({ maxStalls: 5 });
    await lane.put([job("a")]);
    const [first] = (await lane.reserve({ ...now, leaseMs: 10 })).jobs;
    await clock.advance(10);
    await lane.reserve(now);
    await lane.cancel(["a"]);
    expect(await lane.ack([first!.lock])).toEqual(["lost"]);
  });

  it("delete removes anything but active jobs", async () => {
    const { lane } = await setup();
    await lane.put([job("a"), job("b"), job("c", { runAt: START + 10 })]);
    await lane.reserve({ ...now, limit: 1 });
    expect(await lane.delete(["a", "b", "c", "zz"])).toBe(2);
    expect(await lane.counts()).toMatchObject({ waiting: 0, delayed: 0, active: 1 });
  });
});

describe("input checks and reconfiguration", () => {
  it("refuses a lease that is not a finite number of ms, by field", async () => {
    const { lane } = await setup();
    await lane.put([job("a")]);
    await expect(lane.reserve({ ...now, leaseMs: Number.NaN })).rejects.toMatchObject({
      code: "CONFIG",
      field: "leaseMs",
    });
    const [a] = (await lane.reserve(now)).jobs;
    await expect(lane.extend([a!.lock], Number.POSITIVE_INFINITY)).rejects.toMatchObject({
      field: "leaseMs",
    });
  });

  it("with maxStalls 0 the first expired lease dead-letters the job", async () => {
    const { clock, lane } = await setup({ maxStalls: 0 });
    await lane.put([job("a")]);
    await lane.reserve({ ...now, leaseMs: 5 });
    await clock.advance(5);
    expect(await lane.counts()).toMatchObject({ failed: 1, waiting: 0, active: 0 });
    expect(await lane.retryFailed(["a", "nope"])).toBe(1);
    expect((await lane.reserve(now)).jobs[0]).toMatchObject({ id: "a", attempt: 1 });
  });

  it("re-opening a lane with a higher maxConcurrency serves a waiting long poll", async () => {
    const { adapter, lane } = await setup({ maxConcurrency: 1 });
    await lane.put([job("a"), job("b")]);
    await lane.reserve(now);
    let result: string[] | undefined;
    void lane.reserve({ ...now, waitMs: 10_000 }).then((r) => {
      result = r.jobs.map((j) => j.id);
    });
    await adapter.lane("q", { maxStalls: 1, historyLimit: 50, maxConcurrency: 2 });
    await Promise.resolve();
    await Promise.resolve();
    expect(result).toEqual(["b"]);
  });
});
