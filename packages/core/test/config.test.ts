import { createMemoryAdapter } from "@tasklane/adapter-memory";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { DEFAULT_RETENTION, parseLaneConfig } from "../src/adapter-kit.ts";
import { ConfigError, createTasklane, defineTask } from "../src/index.ts";
import { fromKaleConfig } from "../src/kale.ts";

const task = defineTask({ name: "t", lane: "default", schema: z.object({}), run: () => {} });

function configError(fn: () => unknown): ConfigError {
  try {
    fn();
  } catch (err) {
    expect(err).toBeInstanceOf(ConfigError);
    return err as ConfigError;
  }
  throw new Error("expected a ConfigError");
}

describe("lane config", () => {
  it("fills Kale's defaults", () => {
    expect(parseLaneConfig({ name: "default" }, "q")).toMatchObject({
      name: "default",
      priority: 1,
      batchSize: 10,
      leaseMs: 60_000,
      longPollMs: 1_000,
      numIterations: 5,
      maxStalls: 3,
    });
  });

  it("keeps the default retention of the states a lane config leaves out", () => {
    const { retention } = parseLaneConfig(
      { name: "q", retention: { failed: { maxCount: 5 }, canceled: undefined } },
      "q",
    );
    expect(retention).toEqual({ ...DEFAULT_RETENTION, failed: { maxCount: 5 } });
  });

  it("names the field and the value of an invalid option", () => {
    const err = configError(() =>
      createTasklane({
        adapter: createMemoryAdapter(),
        tasks: [],
        lanes: [{ name: "a" }, { name: "b", batchSize: 0 }],
      }),
    );
    expect(err.field).toBe("lanes[1].batchSize");
    expect(err.value).toBe(0);
    expect(err.code).toBe("CONFIG");
    expect(err.message).toContain("lanes[1].batchSize");
  });

  it("refuses unknown keys and points Kale users at fromKaleConfig", () => {
    const err = configError(() =>
      createTasklane({
        adapter: createMemoryAdapter(),
        tasks: [],
        lanes: [{ name: "a", batch_size: 5 } as never],
      }),
    );
    expect(err.field).toBe("lanes[0]");
    expect(err.message).toContain("batch_size");
    expect(err.message).toContain("fromKaleConfig");
  });

  it("refuses priorities outside 1..1000", () => {
    expect(
      configError(() => parseLaneConfig({ name: "a", priority: 1001 }, "lanes[0]")).field,
    ).toBe("lanes[0].priority");
  });

  it("checks tasks against lanes", () => {
    const adapter = createMemoryAdapter();
    const orphan = defineTask({ name: "o", lane: "nowhere", schema: z.object({}), run: () => {} });
    expect(
      configError(() => createTasklane({ adapter, lanes: [{ name: "default" }], tasks: [orphan] }))
        .field,
    ).toBe("tasks[0].lane");
    expect(
      configError(() =>
        createTasklane({ adapter, lanes: [{ name: "default" }], tasks: [task, task] }),
      ).field,
    ).toBe("tasks[1].name");
    const long = defineTask({
      name: "l",
      lane: "default",
      schema: z.object({}),
      timeLimitMs: 120_000,
      run: () => {},
    });
    expect(
      configError(() =>
        createTasklane({ adapter, lanes: [{ name: "default", leaseMs: 60_000 }], tasks: [long] }),
      ).field,
    ).toBe("tasks[0].timeLimitMs");
  });

  it("checks client options", () => {
    const adapter = createMemoryAdapter();
    const base = { adapter, lanes: [{ name: "default" }], tasks: [task] };
    expect(configError(() => createTasklane({ ...base, namespace: "v1.2" })).field).toBe(
      "namespace",
    );
    expect(configError(() => createTasklane({ ...base, selector: "fastest" as never })).field).toBe(
      "selector",
    );
    expect(configError(() => createTasklane({ ...base, maxPayloadBytes: -1 })).field).toBe(
      "maxPayloadBytes",
    );
    expect(configError(() => createTasklane({ ...base, lanes: [] })).field).toBe("lanes");
    expect(configError(() => createTasklane(base).worker({ concurrency: 0 })).field).toBe(
      "worker.concurrency",
    );
    expect(configError(() => createTasklane(base).worker({ lanes: ["nope"] })).field).toBe(
      "worker.lanes[0]",
    );
  });

  it("checks task definitions", () => {
    expect(
      configError(() => defineTask({ name: "", lane: "q", schema: z.object({}), run: () => {} }))
        .field,
    ).toBe("task.name");
    expect(
      configError(() => defineTask({ name: "x", lane: "q", schema: {} as never, run: () => {} }))
        .field,
    ).toBe('task("x").schema');
    expect(
      configError(() =>
        defineTask({
          name: "x",
          lane: "q",
          schema: z.object({}),
          retry: { maxAttempts: 0 },
          run: () => {},
        }),
      ).field,
    ).toBe('task("x").retry.maxAttempts');
    expect(
      configError(() =>
        defineTask({ name: "x", lane: "q", schema: z.object({}), timeLimitMs: -5, run: () => {} }),
      ).field,
    ).toBe('task("x").timeLimitMs');
  });
});

describe("fromKaleConfig", () => {
  it("maps Kale's example queue YAML one to one", () => {
    const kale = {
      high_priority: {
        name: "high_priority",
        priority: 100,
        batch_size: 10,
        visibility_timeout_sec: 60,
        long_poll_time_sec: 1,
        num_iterations: 10,
      },
      default: {
        name: "default",
        priority: 40,
        batch_size: 10,
        visibility_timeout_sec: 60,
        long_poll_time_sec: 1,
        num_iterations: 5,
      },
      low_priority: {
        name: "low_priority",
        priority: 5,
        batch_size: 10,
        visibility_timeout_sec: 60,
        long_poll_time_sec: 5,
        num_iterations: 5,
      },
    };
    const lanes = fromKaleConfig(kale);
    expect(lanes).toEqual([
      {
        name: "high_priority",
        priority: 100,
        batchSize: 10,
        leaseMs: 60_000,
        longPollMs: 1_000,
        numIterations: 10,
      },
      {
        name: "default",
        priority: 40,
        batchSize: 10,
        leaseMs: 60_000,
        longPollMs: 1_000,
        numIterations: 5,
      },
      {
        name: "low_priority",
        priority: 5,
        batchSize: 10,
        leaseMs: 60_000,
        longPollMs: 5_000,
        numIterations: 5,
      },
    ]);
    // The result is valid tasklane config.
    expect(() =>
      createTasklane({ adapter: createMemoryAdapter(), lanes, tasks: [] }),
    ).not.toThrow();
  });

  it("takes the entry key as the name and refuses unknown keys", () => {
    expect(fromKaleConfig({ q: { priority: 3 } })).toEqual([{ name: "q", priority: 3 }]);
    expect(
      configError(() => fromKaleConfig({ q: { priority: 3, visibility: 5 } as never })).field,
    ).toBe("kale.q.visibility");
  });

  it("names a list's entries by index, and copies only the keys given", () => {
    expect(
      fromKaleConfig([{ name: "a" }, { name: "b", batch_size: 5, num_iterations: 2 }]),
    ).toStrictEqual([{ name: "a" }, { name: "b", batchSize: 5, numIterations: 2 }]);
    expect(fromKaleConfig({ q: {} })).toStrictEqual([{ name: "q" }]);
    const err = configError(() => fromKaleConfig([{ name: "a" }, { name: "b", x: 1 } as never]));
    expect(err.field).toBe("kale.1.x");
    expect(err.message).toContain("unknown Kale queue key");
  });
});
