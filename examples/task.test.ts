/**
 * Unit-testing a task with the memory adapter and the manual clock: retries with backoff
 * happen without waiting, and the test sees exactly what a production worker would do.
 *
 *   npx vitest run --project examples
 */
import { createManualClock, createMemoryAdapter } from "@tasklane/adapter-memory";
import { createTasklane, defineTask } from "@tasklane/core";
import { expect, it } from "vitest";
import { z } from "zod";

it("charges a card, retrying a declined attempt an hour later", async () => {
  const clock = createManualClock();
  const attempts: number[] = [];
  const charge = defineTask({
    name: "charge-card",
    lane: "billing",
    schema: z.object({ customerId: z.string(), cents: z.number().int().positive() }),
    retry: { maxAttempts: 3, baseMs: 3_600_000, jitter: 0 },
    async run(_payload, ctx) {
      attempts.push(ctx.attempt);
      if (ctx.attempt === 1) throw new Error("card declined");
    },
  });
  const tl = createTasklane({
    adapter: createMemoryAdapter({ clock }),
    clock,
    lanes: [{ name: "billing" }],
    tasks: [charge],
  });
  const succeeded: string[] = [];
  tl.events.on("succeeded", (e) => succeeded.push(e.jobId));

  const { id } = await tl.publish(charge, { customerId: "c_1", cents: 500 });
  await tl.worker().start();

  await clock.advance(1_000);
  expect(attempts).toEqual([1]); // failed once, scheduled an hour out

  await clock.advance(60 * 60_000); // an hour passes, instantly
  expect(attempts).toEqual([1, 2]);
  expect(succeeded).toEqual([id]);
  expect((await tl.lane("billing").get(id))?.state).toBe("succeeded");
  await tl.close();
});
