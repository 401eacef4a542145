import type { StandardSchemaV1 } from "@standard-schema/spec";
import { createManualClock, createMemoryAdapter } from "@tasklane/adapter-memory";
import { afterEach, describe, expect, it } from "vitest";
import type { Adapter } from "../src/adapter.ts";
import {
  ClosedError,
  ConfigError,
  createTasklane,
  defineTask,
  type Tasklane,
  type TasklaneEvents,
  UnsupportedError,
} from "../src/index.ts";
import { bend } from "./bent-adapter.ts";
import { other, T0, tick } from "./schedule-fixtures.ts";

const open: Tasklane[] = [];
afterEach(async () => {
  await Promise.all(open.splice(0).map((tl) => tl.close({ graceMs: 0 })));
});

const every = { everyMs: 60_000 };

function setup(adapter?: (memory: ReturnType<typeof createMemoryAdapter>) => Adapter) {
  const clock = createManualClock(T0);
  const memory = createMemoryAdapter({ clock });
  const tl = createTasklane({
    adapter: adapter ? adapter(memory) : memory,
    clock,
    lanes: [{ name: "cron" }, { name: "side" }],
    tasks: [tick, other],
  });
  open.push(tl);
  return { clock, memory, tl };
}

async function rejection(promise: Promise<unknown>): Promise<unknown> {
  return promise.then(
    () => {
      throw new Error("expected a rejection");
    },
    (err: unknown) => err,
  );
}

describe("tl.schedules' refusals", () => {
  it("refuses every call once the client is closed", async () => {
    const { tl } = setup();
    await tl.schedules.upsert("a", every, tick, { n: 1 });
    await tl.close();
    for (const call of [
      () => tl.schedules.upsert("a", every, tick, { n: 1 }),
      () => tl.schedules.get("a"),
      () => tl.schedules.list(),
      () => tl.schedules.remove("a"),
      () => tl.schedules.pause("a"),
      () => tl.schedules.resume("a"),
      () => tl.schedules.fireDue(),
    ]) {
      expect(await rejection(call())).toBeInstanceOf(ClosedError);
    }
  });

  it("checks the id of every call: 1 to 100 characters", async () => {
    const { tl } = setup();
    for (const id of ["", "x".repeat(101), 7]) {
      for (const call of [
        () => tl.schedules.get(id as string),
        () => tl.schedules.remove(id as string),
        () => tl.schedules.pause(id as string),
        () => tl.schedules.resume(id as string),
      ]) {
        const err = await rejection(call());
        expect(err).toBeInstanceOf(ConfigError);
        expect(err).toMatchObject({
          field: "id",
          value: id,
          message: expect.stringContaining("must be a string of 1-100 characters"),
        });
      }
    }
    const longest = "x".repeat(100);
    expect(await tl.schedules.upsert(longest, every, tick, { n: 1 })).toMatchObject({
      id: longest,
    });
  });

  it("refuses job options that are not an object, naming an unknown one", async () => {
    const { tl } = setup();
    for (const jobOptions of [null, "fast", 5]) {
      expect(
        await rejection(tl.schedules.upsert("a", every, tick, { n: 1 }, jobOptions as never)),
      ).toMatchObject({
        field: "jobOptions",
        message: expect.stringContaining("must be an object"),
      });
    }
    expect(
      await rejection(tl.schedules.upsert("a", every, tick, { n: 1 }, { runAt: 5 } as never)),
    ).toMatchObject({
      field: "jobOptions.runAt",
      value: 5,
      message: expect.stringContaining(
        "unknown option (a schedule's runs take priority, appData, tags, expiresInMs, group)",
      ),
    });
    const all = { priority: 2, appData: { a: 1 }, tags: ["t"], expiresInMs: 1_000 };
    expect((await tl.schedules.upsert("a", every, tick, { n: 1 }, all)).jobOptions).toEqual(all);
  });

  it("is refused by an adapter that declares schedules but cannot fire them", async () => {
    const { tl } = setup((memory) =>
      bend(memory, { name: "half", lane: () => ({ fireSchedule: undefined }) }),
    );
    const err = await rejection(tl.schedules.upsert("a", every, tick, { n: 1 }));
    expect(err).toBeInstanceOf(UnsupportedError);
    expect((err as Error).message).toBe(
      "The half adapter does not support recurring schedules (no fireSchedule)",
    );
  });
});

describe("tl.schedules", () => {
  it("lists every lane's schedules by id", async () => {
    const { tl } = setup();
    for (const [id, task] of [
      ["m", tick],
      ["b", other],
      ["z", tick],
      ["a", other],
    ] as const) {
      await tl.schedules.upsert(id, every, task, { n: 1 });
    }
    expect((await tl.schedules.list()).map((s) => s.id)).toEqual(["a", "b", "m", "z"]);
  });

  it("shows a schedule that never ran without a last slot, and one that ran with it", async () => {
    const { clock, tl } = setup();
    const fresh = await tl.schedules.upsert("a", every, tick, { n: 1 });
    expect(fresh).not.toHaveProperty("lastSlotAt");
    expect(fresh).toMatchObject({ runs: 0, paused: false, createdAt: T0, updatedAt: T0 });
    await tl.schedules.fireDue();
    await clock.advance(1_000);
    const ran = await tl.schedules.get("a");
    expect(ran).toMatchObject({ runs: 1, lastSlotAt: T0 });
    // an edit keeps its creation time and count
    const edited = await tl.schedules.upsert("a", { everyMs: 120_000 }, tick, { n: 2 });
    expect(edited).toMatchObject({ runs: 1, createdAt: T0, updatedAt: T0 + 1_000 });
  });

  it("keeps a paused schedule paused through an edit", async () => {
    const { tl } = setup();
    await tl.schedules.upsert("a", every, tick, { n: 1 });
    await tl.schedules.pause("a");
    expect(await tl.schedules.upsert("a", every, tick, { n: 2 })).toMatchObject({
      paused: true,
      nextAt: null,
    });
  });

  it("resumes after the later of its last slot and now", async () => {
    const { clock, tl } = setup();
    await tl.schedules.upsert("a", every, tick, { n: 1 });
    await tl.schedules.fireDue(); // T0
    await tl.schedules.pause("a");
    // resumed at once: the slot it ran is not run again
    expect(await tl.schedules.resume("a")).toMatchObject({ nextAt: T0 + 60_000 });
    await clock.advance(90_000);
    expect(await tl.schedules.resume("a")).toMatchObject({ nextAt: T0 + 120_000 });
  });

  it("announces each run it puts as published", async () => {
    const { tl } = setup();
    const seen: Array<TasklaneEvents["published"]> = [];
    tl.events.on("published", (e) => seen.push(e));
    await tl.schedules.upsert("a", every, tick, { n: 1 });
    expect(await tl.schedules.fireDue()).toEqual({
      created: 1,
      duplicates: 0,
      skipped: 0,
      stale: 0,
    });
    expect(seen).toEqual([{ lane: "cron", jobId: `a@${T0}`, task: "tick", status: "created" }]);
  });

  it("counts a run whose job id exists already as a duplicate", async () => {
    const { tl } = setup();
    await tl.publish(tick, { n: 0 }, { jobId: `a@${T0}` });
    await tl.schedules.upsert("a", every, tick, { n: 1 });
    expect(await tl.schedules.fireDue("cron")).toMatchObject({ created: 0, duplicates: 1 });
    expect((await tl.schedules.get("a"))?.runs).toBe(1);
  });

  it("names the lane and schedule of unreadable data in its error", async () => {
    const { tl, memory } = setup();
    const store = await memory.lane("cron", { maxStalls: 1, historyLimit: 10 });
    await store.putSchedule({ id: "bad", data: '{"v":2,"task":"tick"}', nextAt: T0 - 1 });
    await store.putSchedule({ id: "worse", data: '{"v":1}', nextAt: T0 - 1 });
    const errors: Array<TasklaneEvents["error"]> = [];
    tl.events.on("error", (e) => errors.push(e));
    await tl.schedules.fireDue();
    expect(errors.map((e) => [e.during, e.lane, (e.error as Error).message])).toEqual([
      ["schedule", "cron", 'schedule "bad" in lane "cron" has unreadable data'],
      ["schedule", "cron", 'schedule "worse" in lane "cron" has unreadable data'],
    ]);
    expect(await tl.schedules.get("bad")).toBeUndefined();
    expect(await tl.schedules.list()).toEqual([]);
    await expect(tl.schedules.pause("bad")).rejects.toMatchObject({
      field: "id",
      message: expect.stringContaining("names a schedule whose stored data is unreadable"),
    });
  });

  it("validates the payload with an asynchronous schema, storing its output", async () => {
    const doubled: StandardSchemaV1<{ n: number }, { n: number }> = {
      "~standard": {
        version: 1,
        vendor: "test",
        validate: async (v) => ({ value: { n: (v as { n: number }).n * 2 } }),
      },
    };
    const task = defineTask({ name: "async", lane: "cron", schema: doubled, run: () => {} });
    const clock = createManualClock(T0);
    const tl = createTasklane({
      adapter: createMemoryAdapter({ clock }),
      clock,
      lanes: [{ name: "cron" }],
      tasks: [task],
    });
    open.push(tl);
    expect((await tl.schedules.upsert("a", every, task, { n: 2 })).payload).toEqual({ n: 4 });
  });
});

describe("a worker's schedule ticker", () => {
  it("reports a lane whose schedules cannot be read as an error, and fires once it can", async () => {
    let failures = 1;
    const { clock, tl } = setup((memory) =>
      bend(memory, {
        lane: (store) =>
          store.name !== "cron"
            ? {}
            : {
                nextScheduleAt: async () => {
                  if (failures-- > 0) throw new Error("node down");
                  return store.nextScheduleAt?.();
                },
              },
      }),
    );
    const errors: Array<TasklaneEvents["error"]> = [];
    tl.events.on("error", (e) => errors.push(e));
    await tl.schedules.upsert("s", { everyMs: 5_000, startAt: T0 + 1_000 }, tick, { n: 1 });
    const worker = tl.worker({ schedulePollMs: 2_000, lanes: ["cron"], concurrency: 1 });
    await worker.start();
    await clock.advance(0);
    expect(errors.map((e) => [e.during, e.lane, (e.error as Error).message])).toEqual([
      ["schedule", "cron", "node down"],
    ]);
    // the next poll (2 s) reads it, and fires the slot at 1 s
    await clock.advance(2_000);
    expect((await tl.schedules.get("s"))?.runs).toBe(1);
    await worker.stop({ graceMs: 0 });
  });

  it("fires nothing of a lane the worker does not serve, even after an upsert there", async () => {
    const { clock, tl } = setup();
    await tl.schedules.upsert("s", every, tick, { n: 1 });
    const worker = tl.worker({ schedulePollMs: 1_000, lanes: ["side"], concurrency: 1 });
    await worker.start();
    await clock.advance(5_000);
    // an upsert on a lane the worker does not serve does not wake it
    await tl.schedules.upsert("s", { everyMs: 1_000 }, tick, { n: 2 });
    await clock.advance(5_000);
    expect((await tl.schedules.get("s"))?.runs).toBe(0);
    await worker.stop({ graceMs: 0 });
  });
});
