import { createManualClock, createMemoryAdapter } from "@tasklane/adapter-memory";
import { afterEach, describe, expect, it } from "vitest";
import { z } from "zod";
import type { Adapter, Capabilities } from "../src/adapter.ts";
import {
  ConfigError,
  createTasklane,
  defineTask,
  type Tasklane,
  UnsupportedError,
} from "../src/index.ts";
import { bend } from "./bent-adapter.ts";

const task = defineTask({ name: "t", lane: "q", schema: z.object({}), run: () => {} });
const inR = defineTask({ name: "r", lane: "r", schema: z.object({}), run: () => {} });

const open: Tasklane[] = [];
afterEach(async () => {
  await Promise.all(open.splice(0).map((tl) => tl.close({ graceMs: 0 })));
});

function client(caps: Partial<Capabilities> = {}) {
  const clock = createManualClock();
  const memory = createMemoryAdapter({ clock });
  const adapter: Adapter = bend(memory, { name: "partial", caps });
  const tl = createTasklane({
    adapter,
    clock,
    lanes: [{ name: "q" }, { name: "r" }],
    tasks: [task, inR],
  });
  open.push(tl);
  return { tl, memory };
}

/** Publish `n` jobs of `errorName` to lane `lane` and fail them for good. */
async function failed(
  tl: Tasklane,
  memory: ReturnType<typeof createMemoryAdapter>,
  lane: "q" | "r",
  errorName: string,
  n: number,
): Promise<string[]> {
  const results = await tl.publishMany(
    lane === "q" ? task : inR,
    Array.from({ length: n }, () => ({ payload: {} })),
  );
  const store = await memory.lane(lane, { maxStalls: 3, historyLimit: 20 });
  const { jobs } = await store.reserve({ limit: n, leaseMs: 10_000, waitMs: 0 });
  await store.nack(
    jobs.map((j) => ({
      lock: j.lock,
      dead: true as const,
      error: { name: errorName, message: "boom", reason: "error" as const },
    })),
  );
  return results.map((r) => r.id);
}

async function configError(promise: Promise<unknown>) {
  const err = await promise.then(
    () => {
      throw new Error("expected a ConfigError");
    },
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(ConfigError);
  const { field, value, message } = err as ConfigError;
  return { field, value, message };
}

describe("a lane handle's failures and retries", () => {
  it("groups failures by error name under the config name; the client sorts all lanes' by count", async () => {
    const { tl, memory } = client();
    await failed(tl, memory, "q", "TypeError", 1);
    await failed(tl, memory, "r", "RangeError", 3);
    await failed(tl, memory, "q", "SyntaxError", 2);
    expect((await tl.lane("q").failures()).map((g) => [g.lane, g.group, g.count])).toEqual(
      expect.arrayContaining([
        ["q", "TypeError", 1],
        ["q", "SyntaxError", 2],
      ]),
    );
    expect((await tl.failures()).map((g) => [g.lane, g.group, g.count])).toEqual([
      ["r", "RangeError", 3],
      ["q", "SyntaxError", 2],
      ["q", "TypeError", 1],
    ]);
  });

  it("retries failed jobs by id, by { ids }, by group up to a limit (in batches of maxBatch), or all", async () => {
    const { tl, memory } = client({ maxBatch: 2 });
    const ids = await failed(tl, memory, "q", "TypeError", 6);
    const lane = tl.lane("q");
    expect(await lane.retryFailed([ids[0] as string])).toBe(1);
    expect(await lane.retryFailed({ ids: [ids[1] as string] })).toBe(1);
    expect(await lane.retryFailed({ group: "TypeError", limit: 3 })).toBe(3);
    expect(await lane.retryFailed({ group: "TypeError", limit: 0 })).toBe(0);
    expect(await lane.retryFailed({ group: "NoSuchError" })).toBe(0);
    expect(await lane.retryFailed()).toBe(1);
    expect(await lane.counts()).toMatchObject({ failed: 0, waiting: 6 });
  });

  it("refuses retry targets of the wrong shape, naming the field", async () => {
    const { tl } = client();
    const lane = tl.lane("q");
    expect(await configError(lane.retryFailed(["a", 5] as never))).toMatchObject({
      field: "jobIds",
      message: expect.stringContaining("must be an array of job ids"),
    });
    expect(await configError(lane.retryFailed({ ids: "a" } as never))).toMatchObject({
      field: "target.ids",
    });
    for (const target of [null, "TypeError", 5]) {
      expect(await configError(lane.retryFailed(target as never))).toMatchObject({
        field: "target",
        message: expect.stringContaining("must be job ids, { ids } or { group, limit }"),
      });
    }
    for (const group of ["", 5, undefined]) {
      expect(await configError(lane.retryFailed({ group } as never))).toMatchObject({
        field: "target.group",
        message: expect.stringContaining("must be a failure group's name"),
      });
    }
    for (const limit of [-1, 1.5, "2"]) {
      expect(await configError(lane.retryFailed({ group: "E", limit } as never))).toMatchObject({
        field: "target.limit",
        value: limit,
        message: expect.stringContaining("must be an integer >= 0"),
      });
    }
  });
});

describe("a lane handle's job changes", () => {
  it("sets priorities from -1000 to 1000, refusing others before the call", async () => {
    const { tl } = client();
    const { id } = await tl.publish(task, {});
    const lane = tl.lane("q");
    for (const priority of [-1001, 1001, 0.5]) {
      expect(await configError(lane.setPriority([id], priority))).toMatchObject({
        field: "priority",
        value: priority,
        message: expect.stringContaining("must be an integer from -1000 to 1000"),
      });
    }
    await lane.setPriority([id], 1000);
    expect((await lane.get(id))?.priority).toBe(1000);
    await lane.setPriority([id], -1000);
    expect((await lane.get(id))?.priority).toBe(-1000);
    expect(await configError(lane.setPriority("x" as never, 1))).toMatchObject({ field: "jobIds" });
  });

  it("moves jobs only to another lane of the client", async () => {
    const { tl } = client();
    const { id } = await tl.publish(task, {});
    const lane = tl.lane("q");
    for (const toLane of ["elsewhere", 5]) {
      expect(await configError(lane.move([id], toLane as never))).toMatchObject({
        field: "toLane",
        value: toLane,
        message: expect.stringContaining("is not one of this client's lanes"),
      });
    }
    expect(await configError(lane.move([id], "q"))).toMatchObject({
      field: "toLane",
      message: expect.stringContaining("is the lane the jobs are in"),
    });
    await lane.move([id], "r");
    expect((await tl.getJob(id))?.lane).toBe("r");
  });

  it("deletes the jobs a filter matches, up to its limit, in batches of the adapter's maxBatch", async () => {
    const { tl } = client({ maxBatch: 2 });
    await tl.publishMany(
      task,
      Array.from({ length: 5 }, () => ({ payload: {} })),
    );
    const lane = tl.lane("q");
    expect(await lane.deleteJobs({ state: "waiting", limit: 3 })).toBe(3);
    expect(await lane.count({ state: "waiting" })).toBe(2);
    expect(await lane.deleteJobs({ state: "waiting" })).toBe(2);
    expect(await lane.count()).toBe(0);
  });
});

describe("a delete filter", () => {
  it("deletes a failure group's jobs, refusing states and error names that contradict it", async () => {
    const { tl, memory } = client();
    await failed(tl, memory, "q", "TypeError", 2);
    await failed(tl, memory, "q", "RangeError", 1);
    const lane = tl.lane("q");
    expect(
      await configError(lane.deleteJobs({ group: "TypeError", state: "waiting" })),
    ).toMatchObject({
      field: "filter.state",
      value: "waiting",
      message: expect.stringContaining("a failure group holds failed jobs only"),
    });
    expect(
      await configError(lane.deleteJobs({ group: "TypeError", errorName: "RangeError" })),
    ).toMatchObject({
      field: "filter.errorName",
      value: "RangeError",
      message: expect.stringContaining("give group or errorName, not both"),
    });
    expect(await configError(lane.deleteJobs({ state: "active" }))).toMatchObject({
      field: "filter.state",
      value: "active",
      message: expect.stringContaining("active jobs cannot be deleted: cancel them"),
    });
    expect(
      await lane.deleteJobs({ group: "TypeError", state: "failed", errorName: "TypeError" }),
    ).toBe(2);
    expect(await lane.count({ state: "failed" })).toBe(1);
  });

  it("names a tag filter an adapter without tags cannot serve", async () => {
    const { tl } = client({ tags: false });
    const lane = tl.lane("q");
    const message = "The partial adapter does not support tags: filter.tag";
    await expect(lane.count({ tag: "x" })).rejects.toThrow(message);
    await expect(lane.deleteJobs({ tag: "x" })).rejects.toThrow(message);
    await expect(lane.listPage({ tag: "x" })).rejects.toThrow(message);
    expect(await lane.count({ state: "waiting" })).toBe(0);
  });
});

describe("a lane handle's listing", () => {
  it("refuses a cursor that is not a string", async () => {
    const { tl } = client();
    expect(await configError(tl.lane("q").listPage({}, 5 as never))).toMatchObject({
      field: "cursor",
      message: expect.stringContaining("must be a cursor returned by listPage"),
    });
  });

  it("lists and counts by state alone without the search capability; other filters are refused", async () => {
    const { tl } = client({ search: false });
    const a = await tl.publish(task, {});
    const b = await tl.publish(task, {}, { delayMs: 1_000 });
    const lane = tl.lane("q");
    const listed = [];
    for await (const job of lane.list({ state: "waiting", pageSize: 1 })) listed.push(job.id);
    expect(listed).toEqual([a.id]);
    expect(await lane.count({ state: "delayed" })).toBe(1);
    expect(await lane.count({ state: "failed" })).toBe(0);
    expect(await lane.count()).toBe(2);
    expect(b.status).toBe("created");
    await expect(lane.count({ task: "t" })).rejects.toThrow(
      new UnsupportedError("partial", "count").message,
    );
    const iterate = async (filter: object) => {
      for await (const _ of lane.list(filter as never)) {
        // drain
      }
    };
    await expect(iterate({ task: "t" })).rejects.toBeInstanceOf(UnsupportedError);
    await expect(iterate({ state: "waiting", fields: "summary" })).rejects.toBeInstanceOf(
      UnsupportedError,
    );
  });

  it("is refused without the list capability", async () => {
    const { tl } = client({ list: false });
    const iterate = async () => {
      for await (const _ of tl.lane("q").list({ state: "waiting" })) {
        // drain
      }
    };
    await expect(iterate()).rejects.toThrow("The partial adapter does not support list");
  });
});
