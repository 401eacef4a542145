import { flushAsync } from "@tasklane/core";
import { describe, expect, it } from "vitest";
import { job, START, setup, track } from "./helpers.ts";

const poll = { limit: 10, leaseMs: 30_000, waitMs: 20_000 };

describe("long-poll reserve", () => {
  it("is woken by a put", async () => {
    const { lane } = await setup();
    const waiting = track(lane.reserve(poll));
    await flushAsync();
    expect(waiting.result).toBeUndefined();
    await lane.put([job("a")]);
    await flushAsync();
    expect(waiting.result?.jobs.map((j) => j.id)).toEqual(["a"]);
  });

  it("is woken when a delayed job falls due, with one timer and no polling", async () => {
    const { clock, lane } = await setup();
    await lane.put([job("later", { runAt: START + 5000 })]);
    const waiting = track(lane.reserve(poll));
    await flushAsync();
    // The waiter's deadline and the lane's wake-up: nothing per job, nothing repeating.
    expect(clock.pending()).toBe(2);
    await clock.advance(4999);
    expect(waiting.result).toBeUndefined();
    await clock.advance(1);
    expect(waiting.result?.jobs.map((j) => j.id)).toEqual(["later"]);
    expect(clock.pending()).toBe(0);
  });

  it("says, with nothing left to take, when a job falls due or a lease runs out next", async () => {
    const { lane } = await setup();
    await lane.put([job("a"), job("later", { runAt: START + 5000 })]);
    // a job is left: no due time
    expect(await lane.reserve({ ...poll, limit: 0, waitMs: 0 })).toEqual({ jobs: [], ready: 1 });
    const taken = await lane.reserve({ ...poll, leaseMs: 2000, waitMs: 0 });
    expect(taken.jobs.map((j) => j.id)).toEqual(["a"]);
    // the lease of "a" runs out first
    expect(taken).toMatchObject({ ready: 0, nextDueAt: START + 2000 });
    expect(await lane.ack(taken.jobs.map((j) => j.lock))).toEqual(["ok"]);
    expect(await lane.reserve({ ...poll, waitMs: 0 })).toEqual({
      jobs: [],
      ready: 0,
      nextDueAt: START + 5000,
    });
    await lane.pause();
    expect(await lane.reserve({ ...poll, waitMs: 0 })).toEqual({ jobs: [], ready: 0 });
  });

  it("is woken when an expired lease makes a job available again", async () => {
    const { clock, lane } = await setup({ maxStalls: 2 });
    await lane.put([job("a")]);
    await lane.reserve({ ...poll, leaseMs: 1000, waitMs: 0 });
    const waiting = track(lane.reserve(poll));
    await clock.advance(1000);
    expect(waiting.result?.jobs.map((j) => [j.id, j.attempt])).toEqual([["a", 2]]);
  });

  it("is woken by resume and by a freed concurrency slot", async () => {
    const { lane } = await setup({ maxConcurrency: 1 });
    await lane.put([job("a"), job("b")]);
    await lane.pause();
    const first = track(lane.reserve(poll));
    await flushAsync();
    expect(first.result).toBeUndefined();
    await lane.resume();
    await flushAsync();
    const [a] = first.result?.jobs ?? [];
    expect(a?.id).toBe("a");
    const second = track(lane.reserve(poll));
    await flushAsync();
    expect(second.result).toBeUndefined();
    await lane.ack([a!.lock]);
    await flushAsync();
    expect(second.result?.jobs.map((j) => j.id)).toEqual(["b"]);
  });

  it("returns empty after waitMs", async () => {
    const { clock, lane } = await setup();
    const waiting = track(lane.reserve(poll));
    await clock.advance(19_999);
    expect(waiting.result).toBeUndefined();
    await clock.advance(1);
    expect(waiting.result?.jobs).toEqual([]);
    expect(clock.pending()).toBe(0);
  });

  it("is ended at once by its AbortSignal, and does not wait when already aborted", async () => {
    const { clock, lane } = await setup();
    const controller = new AbortController();
    const waiting = track(lane.reserve({ ...poll, signal: controller.signal }));
    await flushAsync();
    controller.abort();
    await flushAsync();
    expect(waiting.result?.jobs).toEqual([]);
    expect(clock.pending()).toBe(0);
    const again = await lane.reserve({ ...poll, signal: controller.signal });
    expect(again.jobs).toEqual([]);
    // An aborted poll took nothing: a later put is there for the next reserve.
    await lane.put([job("a")]);
    expect(await lane.probe()).toBe(1);
  });

  it("serves several waiters in arrival order", async () => {
    const { lane } = await setup();
    const one = track(lane.reserve({ ...poll, limit: 1 }));
    const two = track(lane.reserve({ ...poll, limit: 1 }));
    await lane.put([job("a"), job("b")]);
    await flushAsync();
    expect(one.result?.jobs.map((j) => j.id)).toEqual(["a"]);
    expect(two.result?.jobs.map((j) => j.id)).toEqual(["b"]);
  });

  it("pending long polls return with no jobs when the adapter closes", async () => {
    const { adapter, clock, lane } = await setup();
    const waiting = track(lane.reserve(poll));
    await flushAsync();
    await adapter.close();
    await flushAsync();
    expect(waiting.result?.jobs).toEqual([]);
    expect(clock.pending()).toBe(0);
  });
});
