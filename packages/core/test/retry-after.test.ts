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

  it("takes a delay from 0 to the adapter's maxDelayMs, refusing others", async () => {
    const clock = createManualClock(Date.UTC(2026, 0, 1));
    const inner = createMemoryAdapter({ clock });
    const adapter: Adapter = {
      name: "capped",
      capabilities: Object.freeze({ ...inner.capabilities, maxDelayMs: 60_000 }),
      lane: (name, options) => inner.lane(name, options),
      close: () => inner.close(),
    };
    const seen: Array<{ ms: unknown; outcome: unknown }> = [];
    const task = defineTask({
      name: "t",
      lane: "l",
      schema: z.object({}),
      run: (_p, ctx) => {
        for (const ms of [0, 60_000, 60_001, -0.5, Number.NaN, "5"]) {
          try {
            const error = ctx.retryAfter(ms as number);
            seen.push({
              ms,
              outcome: [(error as unknown as { runAt: number }).runAt - clock.now()],
            });
          } catch (error) {
            seen.push({ ms, outcome: (error as Error).message });
          }
        }
      },
    });
    const tl = createTasklane({ adapter, clock, lanes: [{ name: "l" }], tasks: [task] });
    open.push(tl);
    await tl.publish(task, {});
    await tl.worker().start();
    for (let i = 0; i < 10 && seen.length === 0; i++) await clock.advance(10);
    const refused = (shown: string) =>
      `Invalid option ms = ${shown}: must be a number of ms from 0 to 60000`;
    expect(seen).toEqual([
      { ms: 0, outcome: [0] },
      { ms: 60_000, outcome: [60_000] },
      { ms: 60_001, outcome: refused("60001") },
      { ms: -0.5, outcome: refused("-0.5") },
      { ms: Number.NaN, outcome: refused("null") },
      { ms: "5", outcome: refused('"5"') },
    ]);
  });
});
