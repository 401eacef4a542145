import { createMemoryAdapter } from "@tasklane/adapter-memory";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import type { Adapter, Capabilities } from "../src/adapter.ts";
import {
  clockSchema,
  count,
  functionSchema,
  MAX_TIMER_MS,
  nowSchema,
  parseOptions,
  randomSource,
  settingsObject,
  timerMs,
  wholeMs,
  wholeTimerMs,
} from "../src/adapter-kit.ts";
import {
  createManualClock,
  createTasklane,
  defineTask,
  type TasklaneOptions,
  UnsupportedError,
} from "../src/index.ts";
import { configError } from "./bent-adapter.ts";

/** The field, value and problem of parsing `input` with `schema` under `prefix`. */
function refused(schema: z.ZodType, input: unknown, prefix = "opts") {
  return configError(() => parseOptions(schema, input, prefix));
}

describe("parseOptions, the option check adapters share", () => {
  it("returns the parsed value", () => {
    expect(parseOptions(z.object({ a: count(1) }).strict(), { a: 2 }, "x")).toEqual({ a: 2 });
  });

  it("names nested fields with dots and array items with brackets, and the value there", () => {
    const schema = z.object({ lanes: z.array(z.object({ leaseMs: count(1) })) });
    expect(refused(schema, { lanes: [{ leaseMs: 1 }, { leaseMs: 0 }] })).toEqual({
      field: "opts.lanes[1].leaseMs",
      value: 0,
      message: "Invalid option opts.lanes[1].leaseMs = 0: must be an integer >= 1",
    });
    expect(refused(schema, { lanes: [{ leaseMs: 0 }] }, "")).toMatchObject({
      field: "lanes[0].leaseMs",
    });
    // a field under a value that is not an object has no value
    expect(refused(z.object({ a: z.object({ b: count(1) }) }), { a: 5 })).toMatchObject({
      field: "opts.a",
      value: 5,
    });
  });

  it("takes the issue of the union member that got furthest", () => {
    const schema = z.object({
      watermark: z.union([z.boolean(), z.object({ high: count(1), low: count(0) })]),
    });
    expect(refused(schema, { watermark: { high: 5, low: -1 } })).toMatchObject({
      field: "opts.watermark.low",
      value: -1,
    });
    // no member got past the top: the union's own message, at the union's field
    const top = refused(
      z.object({ s: z.union([z.boolean(), z.number()], "must be a boolean or a number") }),
      { s: "x" },
    );
    expect(top).toMatchObject({ field: "opts.s", value: "x" });
    expect(top.message).toContain("must be a boolean or a number");
  });

  it("names unknown keys, with a hint at fromKaleConfig for snake_case ones", () => {
    const schema = z.object({ leaseMs: count(1).optional() }).strict();
    const plain = refused(schema, { leaseMS: 5, other: 1 });
    expect(plain).toEqual({
      field: "opts",
      value: "leaseMS, other",
      message: 'Invalid option opts = "leaseMS, other": unknown option',
    });
    const kale = refused(schema, { lease_ms: 5, ok: 1 });
    expect(kale.message).toBe(
      `Invalid option opts = "lease_ms, ok": unknown option (Kale's snake_case keys go through fromKaleConfig() from @tasklane/core/kale)`,
    );
  });
});

describe("the option pieces", () => {
  it("bounds timer durations by min and the longest Node timer", () => {
    expect(refused(timerMs(10), 9).message).toContain("must be >= 10 ms");
    expect(parseOptions(timerMs(10), 10.5, "x")).toBe(10.5);
    expect(refused(timerMs(10), MAX_TIMER_MS + 1).message).toContain(
      `must be <= ${MAX_TIMER_MS} ms (the longest timer Node keeps)`,
    );
    expect(parseOptions(wholeTimerMs(1), MAX_TIMER_MS, "x")).toBe(MAX_TIMER_MS);
    expect(refused(wholeTimerMs(1), 1.5).message).toContain("must be a whole number of ms >= 1");
    expect(refused(wholeTimerMs(1), 0).message).toContain("must be >= 1 ms");
    expect(refused(wholeTimerMs(1), MAX_TIMER_MS + 1).message).toContain("the longest timer");
    expect(parseOptions(wholeMs(0), MAX_TIMER_MS * 10, "x")).toBe(MAX_TIMER_MS * 10);
    expect(refused(wholeMs(5), 4).message).toContain("must be >= 5 ms");
    expect(refused(wholeMs(5), 5.5).message).toContain("must be a whole number of ms >= 5");
    expect(refused(count(2), 1).message).toContain("must be an integer >= 2");
  });

  it("checks functions, settings objects, random sources and clocks", () => {
    const f = () => 0;
    expect(parseOptions(functionSchema(), f, "x")).toBe(f);
    expect(refused(functionSchema(), 5).message).toContain("must be a function");
    expect(refused(functionSchema("a predicate"), {}).message).toContain("must be a predicate");
    expect(parseOptions(settingsObject("ioredis options"), { a: 1 }, "x")).toEqual({ a: 1 });
    for (const bad of [null, [], "s", 5]) {
      expect(refused(settingsObject("ioredis options"), bad).message).toContain(
        "must be an object (ioredis options)",
      );
    }
    expect(parseOptions(randomSource, Math.random, "x")).toBe(Math.random);
    expect(refused(randomSource, 0.5).message).toContain("must be a function returning a number");
    const clock = createManualClock();
    expect(parseOptions(clockSchema, clock, "x")).toBe(clock);
    for (const bad of [null, { now: () => 0 }, { ...clock, clearTimeout: 1 }, "clock"]) {
      expect(refused(clockSchema, bad).message).toContain("must be a Clock");
    }
    expect(parseOptions(nowSchema, { now: () => 5 }, "x").now()).toBe(5);
    for (const bad of [null, {}, { now: 5 }, 5]) {
      expect(refused(nowSchema, bad).message).toContain("must have a now() returning epoch ms");
    }
  });
});

const task = defineTask({ name: "t", lane: "q", schema: z.object({}), run: () => {} });

describe("createTasklane's options", () => {
  const adapter = createMemoryAdapter();
  const base: TasklaneOptions = { adapter, lanes: [{ name: "q" }], tasks: [task] };
  const partial = (caps: Partial<Capabilities>): Adapter => ({
    name: "partial",
    capabilities: { ...adapter.capabilities, ...caps },
    close: async () => {},
    lane: (name, options) => adapter.lane(name, options),
  });

  it("must be an object", () => {
    for (const bad of [undefined, null, "x"]) {
      expect(configError(() => createTasklane(bad as never))).toMatchObject({
        field: "options",
        message: expect.stringContaining("must be an object"),
      });
    }
  });

  it("refuses an adapter, selector or instrumentation of the wrong shape", () => {
    for (const bad of [null, {}, { lane: 5 }, "memory"]) {
      expect(configError(() => createTasklane({ ...base, adapter: bad as never })).field).toBe(
        "adapter",
      );
    }
    for (const bad of [null, {}, { select: 1 }]) {
      expect(configError(() => createTasklane({ ...base, selector: bad as never })).field).toBe(
        "selector",
      );
    }
    expect(() =>
      createTasklane({ ...base, selector: { select: () => "q" } as never }),
    ).not.toThrow();
    for (const bad of [null, "otel", { job: 5 }, { attach: () => {}, publish: "x" }]) {
      const err = configError(() => createTasklane({ ...base, instrumentation: bad as never }));
      expect(err.field).toBe("instrumentation");
      expect(err.message).toContain("hooks attach, wrapLane, publish, worker, job are functions");
    }
    expect(() =>
      createTasklane({ ...base, instrumentation: { job: () => {} } as never }),
    ).not.toThrow();
  });

  it("refuses a second lane of the same name", () => {
    expect(
      configError(() => createTasklane({ ...base, lanes: [{ name: "q" }, { name: "q" }] })),
    ).toMatchObject({
      field: "lanes[1].name",
      value: "q",
      message: expect.stringContaining("duplicate lane name"),
    });
  });

  it("refuses a lease over the adapter's maximum, accepting exactly the maximum", () => {
    const capped = partial({ maxLeaseMs: 30_000 });
    let err: unknown;
    try {
      createTasklane({ ...base, adapter: capped, lanes: [{ name: "q", leaseMs: 30_001 }] });
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(UnsupportedError);
    expect((err as Error).message).toBe(
      "The partial adapter does not support a lease of 30001 ms: lanes[0].leaseMs exceeds the maximum of 30000 ms",
    );
    expect(() =>
      createTasklane({ ...base, adapter: capped, lanes: [{ name: "q", leaseMs: 30_000 }] }),
    ).not.toThrow();
  });

  it("refuses maxConcurrency on an adapter without it", () => {
    const lanes = [{ name: "q", maxConcurrency: 2 }];
    expect(() => createTasklane({ ...base, lanes })).not.toThrow();
    expect(() =>
      createTasklane({ ...base, adapter: partial({ maxConcurrency: false }), lanes }),
    ).toThrow(new UnsupportedError("partial", "maxConcurrency", "lanes[0].maxConcurrency").message);
    expect(() =>
      createTasklane({ ...base, adapter: partial({ maxConcurrency: false }) }),
    ).not.toThrow();
  });

  it("refuses tasks not made by defineTask, twice-given names, unknown lanes and too long time limits", () => {
    expect(
      configError(() => createTasklane({ ...base, tasks: [{ name: "x" } as never] })),
    ).toMatchObject({
      field: "tasks[0]",
      message: expect.stringContaining("must be a task from defineTask()"),
    });
    expect(configError(() => createTasklane({ ...base, tasks: [null as never] })).field).toBe(
      "tasks[0]",
    );
    expect(configError(() => createTasklane({ ...base, tasks: [task, task] }))).toMatchObject({
      field: "tasks[1].name",
      value: "t",
      message: expect.stringContaining("duplicate task name"),
    });
    const stray = defineTask({ name: "s", lane: "nowhere", schema: z.object({}), run: () => {} });
    expect(
      configError(() =>
        createTasklane({ ...base, lanes: [{ name: "q" }, { name: "r" }], tasks: [stray] }),
      ),
    ).toMatchObject({
      field: "tasks[0].lane",
      value: "nowhere",
      message: expect.stringContaining("no such lane (configured: q, r)"),
    });
    const limited = (timeLimitMs: number) =>
      defineTask({ name: "l", lane: "q", schema: z.object({}), timeLimitMs, run: () => {} });
    const lanes = [{ name: "q", leaseMs: 5_000 }];
    expect(
      configError(() => createTasklane({ ...base, lanes, tasks: [limited(5_001)] })),
    ).toMatchObject({
      field: "tasks[0].timeLimitMs",
      value: 5_001,
      message: expect.stringContaining('must not exceed lane "q" leaseMs (5000)'),
    });
    expect(() => createTasklane({ ...base, lanes, tasks: [limited(5_000)] })).not.toThrow();
  });
});
