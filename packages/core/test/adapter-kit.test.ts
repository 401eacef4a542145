import { describe, expect, it } from "vitest";
import {
  type AdapterEvent,
  ConfigError,
  isLifecycleEvent,
  type LaneStoreOptions,
  LIFECYCLE_EVENT_TYPES,
  sleep,
  validateLaneStoreOptions,
} from "../src/adapter-kit.ts";
import { createManualClock, systemClock } from "../src/index.ts";

function refusal(options: unknown) {
  try {
    validateLaneStoreOptions(options as LaneStoreOptions);
  } catch (err) {
    expect(err).toBeInstanceOf(ConfigError);
    const { field, value, message } = err as ConfigError;
    return { field, value, message };
  }
  throw new Error("expected a ConfigError");
}

describe("validateLaneStoreOptions, the check of the options core opens a lane with", () => {
  const base: LaneStoreOptions = { maxStalls: 3, historyLimit: 20 };

  it("accepts the options core passes, with zero limits and every retention state", () => {
    expect(() =>
      validateLaneStoreOptions({
        ...base,
        maxStalls: 0,
        historyLimit: 0,
        logLimit: 0,
        maxConcurrency: 1,
        retention: {
          succeeded: { maxAgeMs: 0, maxCount: 0 },
          failed: {},
          canceled: { maxAgeMs: 1.5 },
          expired: { maxCount: 10 },
        },
      }),
    ).not.toThrow();
  });

  it("names the field and value it refuses", () => {
    for (const bad of [null, "x", 5]) {
      expect(refusal(bad)).toMatchObject({ field: "options", value: bad });
    }
    expect(refusal({ ...base, maxStalls: -1 })).toMatchObject({ field: "maxStalls", value: -1 });
    expect(refusal({ ...base, groups: { rateLimit: { max: 0, durationMs: 10 } } })).toMatchObject({
      field: "groups.rateLimit.max",
      value: 0,
    });
    expect(refusal({ ...base, groups: { rateLimit: { max: 1, durationMs: -1 } } })).toMatchObject({
      field: "groups.rateLimit.durationMs",
      value: -1,
    });
    expect(refusal({ ...base, groups: { rateLimit: 3 } })).toMatchObject({
      field: "groups.rateLimit",
      value: 3,
    });
    expect(refusal({ ...base, rateLimit: { max: 1.5, durationMs: 10 } })).toMatchObject({
      field: "rateLimit.max",
    });
    expect(refusal({ ...base, maxStalls: 1.5 })).toMatchObject({ field: "maxStalls" });
    for (const historyLimit of [-1, 2.5, undefined]) {
      expect(refusal({ ...base, historyLimit })).toMatchObject({
        field: "historyLimit",
        value: historyLimit,
        message: expect.stringContaining("must be an integer >= 0"),
      });
    }
    for (const logLimit of [-1, 0.5]) {
      expect(refusal({ ...base, logLimit })).toMatchObject({
        field: "logLimit",
        message: expect.stringContaining("must be an integer >= 0"),
      });
    }
    for (const maxConcurrency of [0, 1.5]) {
      expect(refusal({ ...base, maxConcurrency })).toMatchObject({
        field: "maxConcurrency",
        value: maxConcurrency,
        message: expect.stringContaining("must be a positive integer"),
      });
    }
    expect(refusal({ ...base, retention: { failed: { maxAgeMs: -1 } } })).toMatchObject({
      field: "retention.failed.maxAgeMs",
      value: -1,
      message: expect.stringContaining("must be a number >= 0"),
    });
    expect(refusal({ ...base, retention: { expired: { maxAgeMs: Number.NaN } } })).toMatchObject({
      field: "retention.expired.maxAgeMs",
    });
    for (const maxCount of [-1, 0.5]) {
      expect(refusal({ ...base, retention: { canceled: { maxCount } } })).toMatchObject({
        field: "retention.canceled.maxCount",
        value: maxCount,
        message: expect.stringContaining("must be an integer >= 0"),
      });
    }
  });
});

describe("isLifecycleEvent", () => {
  it("is true for the lifecycle events and false for cancel and put, which stop handlers", () => {
    for (const type of LIFECYCLE_EVENT_TYPES) {
      expect(isLifecycleEvent({ type, lane: "q", jobId: "j" } as AdapterEvent)).toBe(true);
    }
    expect(isLifecycleEvent({ type: "canceled", lane: "q", jobId: "j" })).toBe(false);
    expect(isLifecycleEvent({ type: "put", lane: "q", jobId: "j" } as AdapterEvent)).toBe(false);
  });
});

describe("the manual clock", () => {
  it("fires timers in time order, and timers due at the same time in the order set", async () => {
    const clock = createManualClock(1_000);
    const fired: string[] = [];
    clock.setTimeout(() => fired.push("late"), 30);
    clock.setTimeout(() => fired.push("a"), 10);
    clock.setTimeout(() => fired.push("b"), 10);
    clock.setTimeout(() => fired.push("early"), 5);
    clock.setTimeout(() => fired.push("c"), 10);
    await clock.advance(10);
    expect(fired).toEqual(["early", "a", "b", "c"]);
    expect(clock.now()).toBe(1_010);
    expect(clock.pending()).toBe(1);
    await clock.advance(20);
    expect(fired.at(-1)).toBe("late");
  });

  it("refuses to go back in time", async () => {
    const clock = createManualClock(1_000);
    await expect(clock.setTime(999)).rejects.toThrow("ManualClock cannot go back from 1000 to 999");
    await clock.setTime(1_000);
    expect(clock.now()).toBe(1_000);
  });
});

describe("the system clock", () => {
  it("fires timers, a cleared one never, and keeps no process alive for them", async () => {
    const fired: string[] = [];
    const cleared = systemClock.setTimeout(() => fired.push("cleared"), 0);
    systemClock.clearTimeout(cleared);
    const handle = systemClock.setTimeout(() => {}, 60_000) as { hasRef?: () => boolean };
    expect(handle.hasRef?.()).toBe(false);
    systemClock.clearTimeout(handle);
    await new Promise<void>((resolve) => {
      systemClock.setTimeout(() => {
        fired.push("late");
        resolve();
      }, 5);
    });
    expect(fired).toEqual(["late"]);
  });
});

describe("sleep", () => {
  it("resolves after ms on the clock given", async () => {
    const clock = createManualClock();
    let woke = false;
    void sleep(clock, 100).then(() => {
      woke = true;
    });
    await clock.advance(99);
    expect(woke).toBe(false);
    await clock.advance(1);
    expect(woke).toBe(true);
  });

  it("rejects with the signal's reason, at once when already aborted, and leaves no timer", async () => {
    const clock = createManualClock();
    await expect(sleep(clock, 100, AbortSignal.abort("early"))).rejects.toBe("early");
    expect(clock.pending()).toBe(0);
    const controller = new AbortController();
    const sleeping = sleep(clock, 100, controller.signal);
    expect(clock.pending()).toBe(1);
    controller.abort("stop");
    await expect(sleeping).rejects.toBe("stop");
    expect(clock.pending()).toBe(0);
  });
});
