import { type AdapterEvent, ClosedError, ConfigError, LaneFullError } from "@tasklane/core/adapter";
import { describe, expect, it } from "vitest";
import { createManualClock, createMemoryAdapter } from "../src/index.ts";
import { job } from "./helpers.ts";

const lane = { maxStalls: 1, historyLimit: 10 };

/** The ConfigError `fn` throws, for its field. */
function configError(fn: () => unknown): ConfigError {
  try {
    fn();
  } catch (error) {
    if (error instanceof ConfigError) return error;
    throw error;
  }
  throw new Error("no ConfigError thrown");
}

describe("memory adapter options", () => {
  it("refuses a clock that lacks any of now, setTimeout and clearTimeout", () => {
    const real = createManualClock();
    const clocks: unknown[] = [
      "clock",
      {},
      { setTimeout: real.setTimeout, clearTimeout: real.clearTimeout },
      { now: real.now, clearTimeout: real.clearTimeout },
      { now: real.now, setTimeout: real.setTimeout },
    ];
    for (const clock of clocks) {
      const error = configError(() => createMemoryAdapter({ clock: clock as never }));
      expect([error.field, error.message]).toEqual([
        "clock",
        expect.stringContaining("must be a Clock (now, setTimeout, clearTimeout)"),
      ]);
    }
    expect(createMemoryAdapter({ clock: real }).name).toBe("memory");
  });

  it("refuses a maxJobs that is not a positive integer, and enforces one that is", async () => {
    for (const maxJobs of [0, -1, 1.5, Number.NaN]) {
      const error = configError(() => createMemoryAdapter({ maxJobs }));
      expect([error.field, error.value]).toEqual(["maxJobs", maxJobs]);
      expect(error.message).toMatch(/^Invalid option maxJobs = /);
    }
    const adapter = createMemoryAdapter({ maxJobs: 1, clock: createManualClock() });
    const q = await adapter.lane("q", lane);
    expect(await q.put([job("a")])).toEqual([{ id: "a", status: "created" }]);
    await expect(q.put([job("b")])).rejects.toBeInstanceOf(LaneFullError);
    expect(await q.put([job("a")])).toEqual([{ id: "a", status: "duplicate" }]);
  });

  it("refuses a lane name that is not a non-empty string", async () => {
    const adapter = createMemoryAdapter({ clock: createManualClock() });
    for (const name of ["", 42, undefined]) {
      await expect(adapter.lane(name as never, lane)).rejects.toMatchObject({
        code: "CONFIG",
        field: "name",
        message: expect.stringContaining("must be a non-empty string"),
      });
    }
    expect((await adapter.lane("ok", lane)).name).toBe("ok");
    expect(await adapter.lane("ok", lane)).toBe(await adapter.lane("ok", lane));
  });

  it("keeps delivering to the other listeners when one throws", async () => {
    const adapter = createMemoryAdapter({ clock: createManualClock() });
    const q = await adapter.lane("q", lane);
    const seen: string[] = [];
    await adapter.subscribe(() => {
      throw new Error("listener bug");
    });
    await adapter.subscribe((e) => seen.push(`${e.type} ${e.jobId}`));
    await q.put([job("a")]);
    await Promise.resolve();
    expect(seen).toEqual(["published a"]);
  });

  it("delivers a worker's subscription (lifecycle false) only the cancels of held jobs", async () => {
    const adapter = createMemoryAdapter({ clock: createManualClock() });
    const q = await adapter.lane("q", lane);
    const worker: AdapterEvent[] = [];
    const unsubscribe = await adapter.subscribe((e) => worker.push(e), { lifecycle: false });
    await q.put([job("a"), job("b")]);
    await q.reserve({ limit: 1, leaseMs: 10_000, waitMs: 0 });
    expect(await q.cancel(["a", "b"])).toEqual(["canceled", "canceled"]);
    await Promise.resolve();
    expect(worker).toEqual([{ type: "canceled", lane: "q", jobId: "a" }]);
    await unsubscribe();
    await q.put([job("c")]);
    await q.reserve({ limit: 1, leaseMs: 10_000, waitMs: 0 });
    await q.cancel(["c"]);
    expect(worker).toHaveLength(1);
  });

  it("closes once: listeners hear nothing more, and every call throws ClosedError", async () => {
    const adapter = createMemoryAdapter({ clock: createManualClock() });
    const q = await adapter.lane("q", lane);
    const seen: string[] = [];
    await adapter.subscribe((e) => seen.push(e.type));
    await adapter.close();
    await adapter.close();
    await expect(adapter.subscribe(() => {})).rejects.toBeInstanceOf(ClosedError);
    await expect(adapter.lane("r", lane)).rejects.toBeInstanceOf(ClosedError);
    await expect(q.counts()).rejects.toBeInstanceOf(ClosedError);
    expect(seen).toEqual([]);
  });
});
