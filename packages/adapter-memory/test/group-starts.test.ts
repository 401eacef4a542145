import { describe, expect, it } from "vitest";
import { GroupStarts } from "../src/group-starts.ts";
import { job, now, START, setup } from "./helpers.ts";

describe("GroupStarts (each group's window)", () => {
  it("counts each group's starts in (now - durationMs, now], apart from the others'", () => {
    const starts = new GroupStarts({ max: 2, durationMs: 100 });
    expect(starts.room("a", 0)).toBe(2);
    starts.add("a", 10);
    starts.add("a", 20);
    starts.add("b", 20);
    expect(starts.room("a", 20)).toBe(0);
    expect(starts.room("b", 20)).toBe(1);
    // The full window opens when its oldest start leaves it.
    expect(starts.openAt("a", 20)).toBe(110);
    expect(starts.openAt("b", 20)).toBe(Number.POSITIVE_INFINITY);
    expect(starts.room("a", 109)).toBe(0);
    expect(starts.room("a", 110)).toBe(1);
    expect(starts.room("a", 120)).toBe(2);
    expect(starts.openAt("a", 120)).toBe(Number.POSITIVE_INFINITY);
  });

  it("a group back after its window has passed starts afresh, after any number of others", () => {
    const starts = new GroupStarts({ max: 1, durationMs: 10 });
    starts.add("old", 0);
    // Many groups, each once (the sweep runs as their number grows).
    for (let i = 0; i < 500; i++) starts.add(`g${i}`, 100 + i);
    expect(starts.room("old", 600)).toBe(1);
    expect(starts.room("g499", 600)).toBe(0);
    expect(starts.room("g499", 610)).toBe(1);
  });

  it("keeps logs only for groups with a start in their window: a read drops a passed one, and a sweep runs as logs double", () => {
    const starts = new GroupStarts({ max: 2, durationMs: 10 });
    starts.add("a", 0);
    starts.add("a", 5);
    expect(starts.groups).toBe(1);
    // One start left the window: the log stays, with the other.
    expect(starts.room("a", 12)).toBe(1);
    expect(starts.groups).toBe(1);
    // Both left: read, the log goes.
    expect(starts.room("a", 15)).toBe(2);
    expect(starts.groups).toBe(0);
    // Groups that start once and never come back: never more than 64 logs at a time
    // (10 of them in the window at most), however many there were.
    for (let i = 0; i < 500; i++) {
      starts.add(`g${i}`, 100 + i);
      expect(starts.groups).toBeLessThanOrEqual(64);
    }
    // Many groups at once in the window: the next sweep comes when their number doubles.
    const busy = new GroupStarts({ max: 1, durationMs: 1_000_000 });
    for (let i = 0; i < 200; i++) busy.add(`g${i}`, i);
    expect(busy.groups).toBe(200);
  });

  it("sameLimit tells a changed limit from the same one", () => {
    const starts = new GroupStarts({ max: 2, durationMs: 100 });
    expect(starts.sameLimit({ max: 2, durationMs: 100 })).toBe(true);
    expect(starts.sameLimit({ max: 3, durationMs: 100 })).toBe(false);
    expect(starts.sameLimit({ max: 2, durationMs: 50 })).toBe(false);
  });
});

describe("a lane's groups.rateLimit across lane() calls", () => {
  it("opening the lane again with the same limit keeps the windows; a new limit starts new ones", async () => {
    const groups = { rateLimit: { max: 1, durationMs: 1000 } };
    const { adapter, lane } = await setup({ groups });
    await lane.put([job("a1", { group: "a" }), job("a2", { group: "a" })]);
    expect((await lane.reserve(now)).jobs.map((j) => j.id)).toEqual(["a1"]);
    const again = await adapter.lane("q", { maxStalls: 1, historyLimit: 50, groups });
    expect((await again.reserve(now)).jobs).toEqual([]);
    const wider = await adapter.lane("q", {
      maxStalls: 1,
      historyLimit: 50,
      groups: { rateLimit: { max: 2, durationMs: 1000 } },
    });
    expect((await wider.reserve(now)).jobs.map((j) => j.id)).toEqual(["a2"]);
  });

  it("a group whose jobs are all gone does not set nextDueAt by its full window", async () => {
    const { clock, lane } = await setup({ groups: { rateLimit: { max: 1, durationMs: 1000 } } });
    await lane.put([job("x1", { group: "x" }), job("x2", { group: "x" })]);
    expect((await lane.reserve(now)).jobs.map((j) => j.id)).toEqual(["x1"]);
    // x's window is full until START + 1000; its last waiting job is canceled.
    expect(await lane.cancel?.(["x2"])).toEqual(["canceled"]);
    await clock.advance(500);
    await lane.put([job("y1", { group: "y" }), job("y2", { group: "y" })]);
    // One job: the ring's turn stops at y, before it meets x's emptied group.
    const one = await lane.reserve({ ...now, limit: 1 });
    expect(one.jobs.map((j) => j.id)).toEqual(["y1"]);
    // Only y has a job waiting: the answer is when y's window opens, not x's.
    expect(one.ready).toBe(0);
    expect(one.nextDueAt).toBe(START + 1500);
    const idle = await lane.reserve(now);
    expect(idle.jobs).toEqual([]);
    expect(idle.nextDueAt).toBe(START + 1500);
  });

  it("without groups.rateLimit any more, the group's jobs all start", async () => {
    const { adapter, lane } = await setup({ groups: { rateLimit: { max: 1, durationMs: 1000 } } });
    await lane.put([job("a1", { group: "a" }), job("a2", { group: "a" })]);
    expect((await lane.reserve(now)).jobs).toHaveLength(1);
    const free = await adapter.lane("q", { maxStalls: 1, historyLimit: 50, groups: {} });
    expect((await free.reserve(now)).jobs.map((j) => j.id)).toEqual(["a2"]);
  });
});
