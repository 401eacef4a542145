import { createMemoryAdapter } from "@tasklane/adapter-memory";
import { describe, expectTypeOf, it } from "vitest";
import { z } from "zod";
import { createTasklane, defineTask, type JobContext } from "../src/index.ts";

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
