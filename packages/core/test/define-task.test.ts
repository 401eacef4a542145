import type { StandardSchemaV1 } from "@standard-schema/spec";
import { createMemoryAdapter } from "@tasklane/adapter-memory";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { createTasklane, defineTask, ValidationError } from "../src/index.ts";
import { configError } from "./bent-adapter.ts";

const base = { name: "x", lane: "q", schema: z.object({}), run: () => {} };

describe("defineTask's checks", () => {
  it("needs a non-empty string name before anything else", () => {
    for (const options of [undefined, {}, { ...base, name: 5 }, { ...base, name: "" }]) {
      expect(configError(() => defineTask(options as never))).toMatchObject({
        field: "task.name",
        message: expect.stringContaining("must be a non-empty string"),
      });
    }
  });

  it("needs Standard Schema validators for schema and result", () => {
    for (const bad of [null, {}, { "~standard": {} }, { "~standard": { validate: 1 } }, "z"]) {
      expect(configError(() => defineTask({ ...base, schema: bad as never }))).toMatchObject({
        field: 'task("x").schema',
        message: expect.stringContaining("must be a Standard Schema validator"),
      });
      expect(configError(() => defineTask({ ...base, result: bad } as never))).toMatchObject({
        field: 'task("x").result',
      });
    }
    expect(defineTask({ ...base, run: () => 1, result: z.number() }).result).toBeDefined();
  });

  it("needs a run function and a lane", () => {
    expect(configError(() => defineTask({ ...base, run: "go" as never }))).toMatchObject({
      field: 'task("x").run',
      message: expect.stringContaining("must be a function"),
    });
    expect(configError(() => defineTask({ ...base, lane: "" }))).toMatchObject({
      field: 'task("x").lane',
    });
  });
});

describe("a payload's validation errors", () => {
  it("name the path of every issue, also where a schema gives path segments as objects", async () => {
    const keyed: StandardSchemaV1<unknown, unknown> = {
      "~standard": {
        version: 1,
        vendor: "test",
        validate: () => ({
          issues: [{ message: "bad", path: [{ key: "items" }, { key: 2 }, "name"] }],
        }),
      },
    };
    const task = defineTask({ name: "k", lane: "q", schema: keyed, run: () => {} });
    const tl = createTasklane({
      adapter: createMemoryAdapter(),
      lanes: [{ name: "q" }],
      tasks: [task],
    });
    const err = await tl.publish(task, {}).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ValidationError);
    expect((err as ValidationError).issues).toEqual([
      { message: "bad", path: ["items", 2, "name"] },
    ]);
    expect((err as ValidationError).message).toBe(
      'Payload for task "k" failed its schema: items.2.name: bad',
    );
    const many = await tl.publishMany(task, [{ payload: {} }]).catch((e: unknown) => e);
    expect((many as ValidationError).issues[0]?.path).toEqual([0, "items", 2, "name"]);
    await tl.close();
  });

  it("come from an asynchronous schema as from a synchronous one", async () => {
    const task = defineTask({
      name: "a",
      lane: "q",
      schema: z.object({ n: z.number() }).refine(async () => true),
      run: () => {},
    });
    const tl = createTasklane({
      adapter: createMemoryAdapter(),
      lanes: [{ name: "q" }],
      tasks: [task],
    });
    const err = await tl.publish(task, { n: "x" } as never).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ValidationError);
    expect((err as ValidationError).issues[0]?.path).toEqual(["n"]);
    await expect(tl.publish(task, { n: 1 })).resolves.toMatchObject({ status: "created" });
    await tl.close();
  });
});
