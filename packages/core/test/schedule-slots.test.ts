import { describe, expect, it } from "vitest";
import {
  firstSlot,
  MAX_CATCH_UP_RUNS,
  planFire,
  resolveScheduleSpec,
  type SlotRule,
  slotAfter,
  slotsBetween,
} from "../src/schedule.ts";

const T0 = Date.UTC(2026, 0, 5, 12, 0, 0); // a Monday, 12:00:00 UTC
const rule = (spec: object, anchorAt = T0): SlotRule => ({
  spec: resolveScheduleSpec(spec),
  anchorAt,
});

describe("resolveScheduleSpec", () => {
  it("fills catchUp one and a grace of 60 s, and keeps only the fields given", () => {
    expect(resolveScheduleSpec({ everyMs: 60_000 })).toStrictEqual({
      everyMs: 60_000,
      catchUp: "one",
      graceMs: 60_000,
    });
    expect(
      resolveScheduleSpec({
        cron: "0 * * * *",
        timezone: "Asia/Tokyo",
        startAt: 1,
        endAt: 2,
        limit: 3,
        catchUp: "skip",
        graceMs: 0,
      }),
    ).toStrictEqual({
      cron: "0 * * * *",
      timezone: "Asia/Tokyo",
      startAt: 1,
      endAt: 2,
      limit: 3,
      catchUp: "skip",
      graceMs: 0,
    });
  });

  it("takes a cron pattern with spaces around and between its fields, and @ nicknames", () => {
    expect(resolveScheduleSpec({ cron: "  0  12 * *   1 " }).cron).toBe("0  12 * *   1");
    expect(resolveScheduleSpec({ cron: "@hourly" }).cron).toBe("@hourly");
    expect(() => resolveScheduleSpec({ cron: "hourly@" })).toThrow();
  });

  it("takes an end equal to the start, or one of them alone", () => {
    expect(resolveScheduleSpec({ everyMs: 1_000, startAt: 5, endAt: 5 })).toMatchObject({
      startAt: 5,
      endAt: 5,
    });
    expect(resolveScheduleSpec({ everyMs: 1_000, endAt: 5 }).endAt).toBe(5);
    expect(resolveScheduleSpec({ everyMs: 1_000, startAt: 5 }).startAt).toBe(5);
  });
});

describe("slotAfter", () => {
  it("reads a cron pattern in UTC unless a time zone is given", () => {
    expect(slotAfter(rule({ cron: "0 13 * * *" }), T0)).toBe(T0 + 3_600_000);
    expect(slotAfter(rule({ cron: "0 13 * * *", timezone: "Europe/Berlin" }), T0)).toBe(
      Date.UTC(2026, 0, 6, 12),
    );
  });

  it("starts at startAt, counting it, and ends at endAt, counting it", () => {
    const cron = rule({ cron: "0 * * * *", startAt: T0 + 3_600_000, endAt: T0 + 7_200_000 });
    expect(slotAfter(cron, T0 - 1)).toBe(T0 + 3_600_000);
    expect(slotAfter(cron, T0 + 3_600_000)).toBe(T0 + 7_200_000);
    expect(slotAfter(cron, T0 + 7_200_000)).toBeUndefined();
    const every = rule({ everyMs: 60_000, startAt: T0 + 60_000 }, T0);
    expect(slotAfter(every, T0)).toBe(T0 + 60_000);
    expect(slotAfter(every, T0 + 59_999)).toBe(T0 + 60_000);
  });
});

describe("slotsBetween", () => {
  it("lists the slots from..to, both counted", () => {
    expect(slotsBetween(rule({ everyMs: 60_000 }), T0, T0 + 120_000, 10)).toEqual({
      slots: [T0, T0 + 60_000, T0 + 120_000],
      total: 3,
    });
    expect(slotsBetween(rule({ everyMs: 60_000 }), T0 + 1, T0 + 59_999, 10)).toEqual({
      slots: [],
      total: 0,
    });
  });

  it("keeps the latest max slots, in order, when there are more, within startAt and endAt", () => {
    expect(slotsBetween(rule({ everyMs: 60_000 }), T0, T0 + 600_000, 3)).toEqual({
      slots: [T0 + 480_000, T0 + 540_000, T0 + 600_000],
      total: 4,
    });
    expect(slotsBetween(rule({ everyMs: 60_000 }), T0, T0 + 180_000, 3)).toEqual({
      slots: [T0 + 60_000, T0 + 120_000, T0 + 180_000],
      total: 4,
    });
    const bounded = rule({ everyMs: 60_000, endAt: T0 + 300_000 }, T0);
    expect(slotsBetween(bounded, T0, T0 + 600_000, 3).slots).toEqual([
      T0 + 180_000,
      T0 + 240_000,
      T0 + 300_000,
    ]);
    const cron = rule({ cron: "* * * * *", endAt: T0 + 600_000 });
    expect(slotsBetween(cron, T0, T0 + 3_600_000, 2)).toEqual({
      slots: [T0 + 540_000, T0 + 600_000],
      total: 3,
    });
    const late = rule({ cron: "* * * * *", startAt: T0 + 60_000 });
    expect(slotsBetween(late, T0 - 600_000, T0 + 120_000, 1)).toEqual({
      slots: [T0 + 120_000],
      total: 2,
    });
  });

  it("keeps nothing when asked for none", () => {
    expect(slotsBetween(rule({ everyMs: 60_000 }), T0, T0 + 120_000, 0)).toEqual({
      slots: [],
      total: 1,
    });
  });
});

describe("planFire and firstSlot", () => {
  it("catches up all of a cron schedule's missed slots, at most MAX_CATCH_UP_RUNS, the latest", () => {
    const r = rule({ cron: "* * * * * *", catchUp: "all" });
    const now = T0 + 2 * 3_600_000;
    const plan = planFire(r, { runs: 0 }, T0, now);
    expect(plan.slots).toHaveLength(MAX_CATCH_UP_RUNS);
    expect(plan.slots[0]).toBe(now - (MAX_CATCH_UP_RUNS - 1) * 1_000);
    expect(plan.slots.at(-1)).toBe(now);
    expect(plan.nextAt).toBe(now + 1_000);
  });

  it("runs no more than the limit leaves, and plans the next slot after now", () => {
    const r = rule({ everyMs: 60_000, catchUp: "all", limit: 5 });
    const plan = planFire(r, { runs: 3 }, T0, T0 + 600_000);
    expect(plan).toEqual({
      slots: [T0, T0 + 60_000],
      skipped: 9,
      runs: 5,
      lastSlotAt: T0 + 600_000,
      nextAt: null,
    });
    const open = planFire(rule({ everyMs: 60_000 }), { runs: 0 }, T0, T0 + 90_000);
    expect(open).toMatchObject({ slots: [T0 + 60_000], runs: 1, nextAt: T0 + 120_000 });
    const early = planFire(rule({ everyMs: 60_000 }), { runs: 4, lastSlotAt: 7 }, T0, T0 - 1);
    expect(early).toEqual({ slots: [], skipped: 0, runs: 4, lastSlotAt: 7, nextAt: T0 });
  });

  it("has no first slot once the limit is reached", () => {
    const r = rule({ everyMs: 60_000, limit: 2 });
    expect(firstSlot(r, { runs: 1 }, T0)).toBe(T0);
    expect(firstSlot(r, { runs: 2 }, T0)).toBeUndefined();
    expect(firstSlot(rule({ everyMs: 60_000 }), { runs: 9 }, T0)).toBe(T0);
  });
});
