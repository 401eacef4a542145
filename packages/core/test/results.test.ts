import type { StandardSchemaV1 } from "@standard-schema/spec";
import { createManualClock, createMemoryAdapter } from "@tasklane/adapter-memory";
import { afterEach, describe, expect, it } from "vitest";
import { z } from "zod";
import { createTasklane, defineTask, type Tasklane } from "../src/index.ts";

const open: Tasklane[] = [];
afterEach(async () => {
  await Promise.all(open.splice(0).map((tl) => tl.close({ graceMs: 0 })));
});

/** Run one job whose handler returns `value`, checked by `result` if given; the job as stored. */
async function runOne(
  value: () => unknown,
  options: { result?: StandardSchemaV1; maxResultBytes?: number } = {},
) {
  const clock = createManualClock();
  const task = defineTask({
    name: "t",
    lane: "q",
    schema: z.object({}),
    ...(options.result ? { result: options.result } : {}),
    run: () => value(),
  } as never);
  const tl = createTasklane({
    adapter: createMemoryAdapter({ clock }),
    clock,
    lanes: [{ name: "q" }],
    tasks: [task],
    ...(options.maxResultBytes ? { maxResultBytes: options.maxResultBytes } : {}),
  });
  open.push(tl);
  let ended = false;
  tl.events.on("succeeded", () => {
    ended = true;
  });
  tl.events.on("failed", () => {
    ended = true;
  });
  const { id } = await tl.publish(task, {} as never);
  await tl.worker().start();
  for (let i = 0; i < 200 && !ended; i++) await clock.advance(5);
  const info = await tl.getJob(id);
  if (!info) throw new Error("job gone");
  return info;
}

/** An asynchronous schema: a number, doubled; refuses anything else. */
const asyncDoubled: StandardSchemaV1<number, number> = {
  "~standard": {
    version: 1,
    vendor: "test",
    validate: async (v) =>
      typeof v === "number" ? { value: v * 2 } : { issues: [{ message: "not a number" }] },
  },
};

describe("a handler's result", () => {
  it("is stored up to exactly maxResultBytes; one byte more fails the job as invalid_result", async () => {
    // "xxxxxxxx" encodes to 10 bytes with its quotes
    const fits = await runOne(() => "xxxxxxxx", { maxResultBytes: 10 });
    expect(fits).toMatchObject({ state: "succeeded", result: "xxxxxxxx" });
    const over = await runOne(() => "xxxxxxxxx", { maxResultBytes: 10 });
    expect(over.state).toBe("failed");
    expect(over.error).toMatchObject({
      name: "ResultTooLargeError",
      reason: "invalid_result",
      message: 'Result of task "t" is 11 bytes encoded, over the limit of 10 bytes',
    });
  });

  it("fails the job when it cannot be encoded as JSON", async () => {
    const info = await runOne(() => 10n);
    expect(info.state).toBe("failed");
    expect(info.error?.name).toBe("ValidationError");
    expect(info.error?.reason).toBe("invalid_result");
    expect(info.error?.message).toMatch(
      /^Result for task "t" failed its schema: \(root\): cannot be encoded as JSON \(TypeError: .*BigInt.*\)$/,
    );
  });

  it("stores nothing for a value JSON leaves out (a function), and succeeds", async () => {
    const info = await runOne(() => () => 1);
    expect(info.state).toBe("succeeded");
    expect(info).not.toHaveProperty("result");
  });

  it("stores the output of a result schema, also an asynchronous one", async () => {
    expect(await runOne(() => "5", { result: z.coerce.number() })).toMatchObject({
      state: "succeeded",
      result: 5,
    });
    expect(await runOne(() => 4, { result: asyncDoubled })).toMatchObject({
      state: "succeeded",
      result: 8,
    });
  });

  it("fails the job as invalid_result when its result schema refuses it, synchronously or not", async () => {
    const sync = await runOne(() => "x", { result: z.number() });
    expect(sync.state).toBe("failed");
    expect(sync.error).toMatchObject({ name: "ValidationError", reason: "invalid_result" });
    expect(sync.error?.message).toMatch(/^Result for task "t" failed its schema: \(root\): /);
    const later = await runOne(() => "x", { result: asyncDoubled });
    expect(later.error).toMatchObject({
      name: "ValidationError",
      reason: "invalid_result",
      message: 'Result for task "t" failed its schema: (root): not a number',
    });
  });

  it("fails the job as invalid_result when its result schema throws, synchronously or not", async () => {
    const throwing = (async: boolean): StandardSchemaV1 => ({
      "~standard": {
        version: 1,
        vendor: "test",
        validate: () => {
          if (async) return Promise.reject(new RangeError("schema broke"));
          throw new RangeError("schema broke");
        },
      },
    });
    for (const async of [false, true]) {
      const info = await runOne(() => 1, { result: throwing(async) });
      expect(info.state).toBe("failed");
      expect(info.error).toMatchObject({
        name: "RangeError",
        message: "schema broke",
        reason: "invalid_result",
      });
    }
  });
});
