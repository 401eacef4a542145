import { createManualClock, createMemoryAdapter } from "@tasklane/adapter-memory";
import { afterEach, describe, expect, it } from "vitest";
import { z } from "zod";
import {
  type Adapter,
  createTasklane,
  defineTask,
  type JobError,
  type Tasklane,
} from "../src/index.ts";

const open: Tasklane[] = [];
afterEach(async () => {
  await Promise.all(open.splice(0).map((tl) => tl.close({ graceMs: 0 })));
});

/** The error a job failed with when its handler calls ctx.retryAfter(ms) on `adapter`. */
async function failureOf(adapter: Adapter, ms: number): Promise<JobError> {
  const clock = createManualClock(Date.UTC(2026, 0, 1));
  const task = defineTask({
    name: "t",
    lane: "l",
    schema: z.object({}),
    retry: { maxAttempts: 1 },
    run: async (_p, ctx) => {
      throw ctx.retryAfter(ms);
    },
  });
  const tl = createTasklane({ adapter, clock, lanes: [{ name: "l" }], tasks: [task] });
  open.push(tl);
  const failed = new Promise<JobError>((resolve) =>
    tl.events.once("failed", (e) => resolve(e.error)),
  );
  await tl.publish(task, {});
  await tl.worker().start();
  for (let i = 0; i < 10; i++) await clock.advance(100);
  return failed;
}

describe("ctx.retryAfter", () => {
  it("refuses a bad delay with a ConfigError naming ms (the job fails as any throw does)", async () => {
    const clock = createManualClock(Date.UTC(2026, 0, 1));
    const error = await failureOf(createMemoryAdapter({ clock }), -1);
    expect(error).toMatchObject({ name: "ConfigError", reason: "error" });
    expect(error.message).toContain("Invalid option ms = -1");
  });

  it("throws UnsupportedError where the adapter lacks capability retryAfter", async () => {
    const clock = createManualClock(Date.UTC(2026, 0, 1));
    const inner = createMemoryAdapter({ clock });
    const adapter: Adapter = {
      name: "plain",
      capabilities: Object.freeze({ ...inner.capabilities, retryAfter: false }),
      lane: (name, options) => inner.lane(name, options),
      close: () => inner.close(),
    };
    const error = await failureOf(adapter, 1_000);
    expect(error).toMatchObject({ name: "UnsupportedError" });
    expect(error.message).toContain("ctx.retryAfter");
  });
});
