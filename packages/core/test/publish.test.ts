import type { StandardSchemaV1 } from "@standard-schema/spec";
import { createMemoryAdapter } from "@tasklane/adapter-memory";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { createTasklane, defineTask, ValidationError } from "../src/index.ts";

/**
 * A schema that answers synchronously for n < 2 and with a Promise from 2 on, and
 * multiplies n by 10 (its output differs from its input): publishMany's items switch from
 * the synchronous loop to the awaiting one in the middle of a call.
 */
const sometimesAsync: StandardSchemaV1<{ n: number }, { n: number }> = {
  "~standard": {
    version: 1,
    vendor: "test",
    validate(value) {
      const n = (value as { n?: unknown }).n;
      const result: StandardSchemaV1.Result<{ n: number }> =
        typeof n === "number"
          ? { value: { n: n * 10 } }
          : { issues: [{ message: "not a number", path: ["n"] }] };
      return typeof n === "number" && n < 2 ? result : Promise.resolve(result);
    },
  },
};

const client = (schema: StandardSchemaV1<{ n: number }, { n: number }>) => {
  const task = defineTask({ name: "t", lane: "q", schema, run: () => {} });
  const tl = createTasklane({
    adapter: createMemoryAdapter(),
    lanes: [{ name: "q" }],
    tasks: [task],
  });
  return { tl, task };
};

const payloads = async (tl: ReturnType<typeof client>["tl"], ids: string[]) =>
  Promise.all(ids.map(async (id) => JSON.parse((await tl.lane("q").get(id))?.payload ?? "null")));

describe("publishMany's validation errors", () => {
  it("name the item whose payload a synchronous schema refused, with nothing written", async () => {
    const { tl, task } = client(z.object({ n: z.number() }));
    const error = await tl
      .publishMany(task, [{ payload: { n: 1 } }, { payload: { n: "x" } }] as never)
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ValidationError);
    expect((error as ValidationError).issues.map((i) => i.path)).toEqual([[1, "n"]]);
    expect((error as ValidationError).message).toMatch(/1\.n: /);
    expect(await tl.lane("q").counts()).toMatchObject({ waiting: 0 });
    await tl.close();
  });
});

describe("publishMany with schemas that validate asynchronously", () => {
  it("keeps the items' order when validation turns asynchronous mid-call", async () => {
    const { tl, task } = client(sometimesAsync);
    const results = await tl.publishMany(
      task,
      [0, 1, 2, 3, 4].map((n) => ({ payload: { n } })),
    );
    expect(results.map((r) => r.status)).toEqual(Array(5).fill("created"));
    // the schema's output is stored, item by item, in the order given
    expect(
      await payloads(
        tl,
        results.map((r) => r.id),
      ),
    ).toEqual([0, 10, 20, 30, 40].map((n) => ({ n })));
    await tl.close();
  });

  it("refuses the call at an asynchronous item's error, naming the item, with nothing written", async () => {
    const { tl, task } = client(sometimesAsync);
    const error = await tl
      .publishMany(task, [
        { payload: { n: 0 } },
        { payload: { n: 2 } },
        { payload: { n: "x" } },
      ] as never)
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ValidationError);
    expect((error as ValidationError).issues).toEqual([
      { message: "not a number", path: [2, "n"] },
    ]);
    expect(await tl.lane("q").counts()).toMatchObject({ waiting: 0 });
    await tl.close();
  });

  it("validates a zod schema with an async refinement", async () => {
    const schema = z.object({ n: z.number() }).refine(async (v) => v.n >= 0, "must be >= 0");
    const { tl, task } = client(schema);
    const ok = await tl.publishMany(task, [{ payload: { n: 1 } }, { payload: { n: 2 } }]);
    expect(
      await payloads(
        tl,
        ok.map((r) => r.id),
      ),
    ).toEqual([{ n: 1 }, { n: 2 }]);
    const error = await tl
      .publishMany(task, [{ payload: { n: 3 } }, { payload: { n: -1 } }])
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ValidationError);
    expect((error as ValidationError).issues[0]?.path[0]).toBe(1);
    expect(await tl.lane("q").counts()).toMatchObject({ waiting: 2 });
    await tl.close();
  });
});
