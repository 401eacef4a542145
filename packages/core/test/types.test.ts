import { createMemoryAdapter } from "@tasklane/adapter-memory";
import { describe, expectTypeOf, it } from "vitest";
import { z } from "zod";
import {
  createTasklane,
  defineTask,
  type JobContext,
  type JobView,
  type TaskResult,
} from "../src/index.ts";

// These assertions are checked by the compiler (`npm run typecheck`); @ts-expect-error
// lines fail the typecheck if the wrong payload would compile.
describe("payload types", () => {
  it("flow from the schema into run and publish", () => {
    const task = defineTask({
      name: "email",
      lane: "default",
      schema: z.object({ to: z.string(), retries: z.number().default(0) }),
      run: (payload, ctx) => {
        expectTypeOf(payload).toEqualTypeOf<{ to: string; retries: number }>();
        expectTypeOf(ctx).toEqualTypeOf<JobContext>();
      },
    });
    const tl = createTasklane({
      adapter: createMemoryAdapter(),
      lanes: [{ name: "default" }],
      tasks: [task],
    });
    const ok = () => tl.publish(task, { to: "a@example.com" }); // `retries` has a default: optional at publish
    // @ts-expect-error: `to` must be a string
    const wrongType = () => tl.publish(task, { to: 42 });
    // @ts-expect-error: `to` is required
    const missing = () => tl.publish(task, {});
    // @ts-expect-error: publishMany items are typed too
    const wrongMany = () => tl.publishMany(task, [{ payload: { to: 1 } }]);
    expectTypeOf(ok).returns.resolves.toHaveProperty("status");
    void [wrongType, missing, wrongMany];
  });
});

describe("result types", () => {
  it("flow from the result schema into run, publishAndWait and TaskResult", () => {
    const sum = defineTask({
      name: "sum",
      lane: "default",
      schema: z.object({ a: z.number(), b: z.number() }),
      result: z.object({ sum: z.number() }),
      run: ({ a, b }) => ({ sum: a + b }),
    });
    const asyncSum = defineTask({
      name: "async-sum",
      lane: "default",
      schema: z.object({ a: z.number() }),
      result: z.number(),
      run: async ({ a }) => a,
    });
    const plain = defineTask({
      name: "plain",
      lane: "default",
      schema: z.object({}),
      run: () => 42,
    });
    const wrong = () =>
      defineTask({
        name: "wrong",
        lane: "default",
        schema: z.object({}),
        result: z.object({ ok: z.boolean() }),
        // @ts-expect-error: run must return the result schema's input
        run: () => ({ ok: "yes" }),
      });
    expectTypeOf<TaskResult<typeof sum>>().toEqualTypeOf<{ sum: number }>();
    expectTypeOf<TaskResult<typeof asyncSum>>().toEqualTypeOf<number>();
    expectTypeOf<TaskResult<typeof plain>>().toEqualTypeOf<unknown>();
    const tl = createTasklane({
      adapter: createMemoryAdapter(),
      lanes: [{ name: "default" }],
      tasks: [sum, asyncSum, plain],
    });
    const waited = () => tl.publishAndWait(sum, { a: 1, b: 2 }, { timeoutMs: 1_000 });
    expectTypeOf(waited).returns.resolves.toEqualTypeOf<{ sum: number }>();
    // @ts-expect-error: the payload is typed as for publish
    const badPayload = () => tl.publishAndWait(sum, { a: "1", b: 2 });
    const view = () => tl.getJob<{ sum: number }>("id");
    expectTypeOf(view).returns.resolves.toEqualTypeOf<JobView<{ sum: number }> | undefined>();
    void [wrong, badPayload];
  });
});
