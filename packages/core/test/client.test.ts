import { createManualClock, createMemoryAdapter } from "@tasklane/adapter-memory";
import { afterEach, describe, expect, it } from "vitest";
import { z } from "zod";
import type { Adapter, Capabilities, NewJob, PutResult } from "../src/adapter.ts";
import {
  ClosedError,
  ConfigError,
  createTasklane,
  defineTask,
  type Instrumentation,
  type Tasklane,
  type TasklaneEvents,
  UnsupportedError,
} from "../src/index.ts";
import { bend } from "./bent-adapter.ts";

const task = defineTask({
  name: "t",
  lane: "q",
  schema: z.object({ n: z.number() }),
  run: () => {},
});
const other = defineTask({ name: "o", lane: "r", schema: z.object({}), run: () => {} });

const open: Tasklane[] = [];
afterEach(async () => {
  await Promise.all(open.splice(0).map((tl) => tl.close({ graceMs: 0 })));
});

/** The memory adapter, declaring some capabilities otherwise. */
function partial(inner: Adapter, caps: Partial<Capabilities>): Adapter {
  return bend(inner, { name: "partial", caps });
}

function client(options: { adapter?: Adapter; instrumentation?: Instrumentation } = {}) {
  const clock = createManualClock();
  const memory = createMemoryAdapter({ clock });
  const tl = createTasklane({
    adapter: options.adapter ?? memory,
    clock,
    lanes: [{ name: "q" }, { name: "r" }],
    tasks: [task, other],
    ...(options.instrumentation ? { instrumentation: options.instrumentation } : {}),
  });
  open.push(tl);
  return { tl, clock, memory };
}

async function rejection(promise: Promise<unknown>): Promise<unknown> {
  return promise.then(
    () => {
      throw new Error("expected a rejection");
    },
    (err: unknown) => err,
  );
}

describe("a closed client", () => {
  it("refuses every call with ClosedError, and a second close is a no-op", async () => {
    const { tl } = client();
    const lane = tl.lane("q");
    await tl.close();
    await tl.close();
    const calls: Array<() => Promise<unknown>> = [
      () => tl.publish(task, { n: 1 }),
      () => tl.publishMany(task, [{ payload: { n: 1 } }]),
      () => tl.waitFor("j"),
      () => tl.getJob("j"),
      () => tl.workers(),
      () => tl.failures(),
      () => tl.subscribe(() => {}),
      () => lane.counts(),
      async () => tl.worker(),
    ];
    for (const call of calls) {
      const err = await rejection(call());
      expect(err).toBeInstanceOf(ClosedError);
      expect((err as Error).message).toBe("tasklane client is closed");
    }
  });

  it("stops its workers and closes the adapter, unless closeAdapter is false", async () => {
    const { tl, memory } = client();
    const worker = tl.worker();
    await worker.start();
    expect(worker.running).toBe(true);
    await tl.close({ graceMs: 0 });
    expect(worker.running).toBe(false);
    await expect(memory.lane("q", { maxStalls: 1, historyLimit: 1 })).rejects.toBeInstanceOf(
      ClosedError,
    );

    const kept = createMemoryAdapter();
    const tl2 = createTasklane({
      adapter: kept,
      closeAdapter: false,
      lanes: [{ name: "q" }],
      tasks: [task],
    });
    await tl2.publish(task, { n: 1 });
    await tl2.close();
    const store = await kept.lane("q", { maxStalls: 1, historyLimit: 1 });
    expect((await store.counts()).waiting).toBe(1);
    await kept.close();
  });

  it("checks close's options before stopping anything", async () => {
    const { tl } = client();
    await expect(tl.close({ graceMs: -1 })).rejects.toBeInstanceOf(ConfigError);
    await expect(tl.publish(task, { n: 1 })).resolves.toMatchObject({ status: "created" });
  });
});

describe("a client's lanes and tasks", () => {
  it("lists lane handles in configuration order and the tasks given", () => {
    const { tl } = client();
    expect(tl.lanes().map((l) => l.name)).toEqual(["q", "r"]);
    expect(tl.lane("q")).toBe(tl.lane("q"));
    expect(tl.tasks()).toEqual([task, other]);
  });

  it("refuses a lane it was not given, naming the ones it has", () => {
    const { tl } = client();
    let err: unknown;
    try {
      tl.lane("nope");
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(ConfigError);
    expect(err).toMatchObject({ field: "lane", value: "nope" });
    expect((err as Error).message).toContain("no such lane (configured: q, r)");
  });

  it("refuses a task it was not given, also one of the same name", async () => {
    const { tl } = client();
    const twin = defineTask({
      name: "t",
      lane: "q",
      schema: z.object({ n: z.number() }),
      run: () => {},
    });
    for (const t of [
      twin,
      defineTask({ name: "x", lane: "q", schema: z.object({}), run: () => {} }),
    ]) {
      const err = await rejection(tl.publish(t as never, { n: 1 } as never));
      expect(err).toBeInstanceOf(ConfigError);
      expect(err).toMatchObject({ field: "task", value: t.name });
      expect((err as Error).message).toContain("is not one of this client's tasks");
    }
    expect(await tl.lane("q").counts()).toMatchObject({ waiting: 0 });
  });
});

describe("publishMany", () => {
  it("refuses items that are not an array, and writes nothing for none", async () => {
    const { tl } = client();
    const err = await rejection(tl.publishMany(task, { payload: { n: 1 } } as never));
    expect(err).toMatchObject({
      field: "items",
      message: expect.stringContaining("must be an array"),
    });
    const published: unknown[] = [];
    tl.events.on("published", (e) => published.push(e));
    expect(await tl.publishMany(task, [])).toEqual([]);
    expect(published).toEqual([]);
  });

  it("splits a call over the adapter's maxBatch into batches, keeping the order", async () => {
    const memory = createMemoryAdapter();
    const puts: number[] = [];
    const adapter = bend(memory, {
      name: "partial",
      caps: { maxBatch: 2 },
      lane: (store) => ({
        put: (jobs: NewJob[]) => {
          puts.push(jobs.length);
          return store.put(jobs);
        },
      }),
    });
    const { tl } = client({ adapter });
    const ids = ["a", "b", "c", "d", "e"];
    const results = await tl.publishMany(
      task,
      ids.map((jobId, n) => ({ payload: { n }, jobId })),
    );
    expect(results.map((r) => r.id)).toEqual(ids);
    expect(puts).toEqual([2, 2, 1]);
    expect(
      await tl.publishMany(task, [{ payload: { n: 9 } }, { payload: { n: 10 } }]),
    ).toHaveLength(2);
    expect(puts).toEqual([2, 2, 1, 2]);
    expect((await tl.lane("q").counts()).waiting).toBe(7);
  });
});

describe("the published event", () => {
  it("names the lane, job, task and status of every job written", async () => {
    const { tl } = client();
    const seen: Array<TasklaneEvents["published"]> = [];
    tl.events.on("published", (e) => seen.push(e));
    const { id } = await tl.publish(task, { n: 1 }, { jobId: "one" });
    await tl.publish(task, { n: 1 }, { jobId: "one" });
    await tl.publishMany(other, [{ payload: {}, jobId: "two" }]);
    expect(id).toBe("one");
    expect(seen).toEqual([
      { lane: "q", jobId: "one", task: "t", status: "created" },
      { lane: "q", jobId: "one", task: "t", status: "duplicate" },
      { lane: "r", jobId: "two", task: "o", status: "created" },
    ]);
  });
});

describe("getJob", () => {
  it("finds a job in any lane, named by its config name", async () => {
    const { tl } = client();
    const { id } = await tl.publish(other, {});
    const view = await tl.getJob(id);
    expect(view).toMatchObject({ id, lane: "r", task: "o", payload: {} });
    for (const key of ["appData", "result", "progress"]) expect(view).not.toHaveProperty(key);
    const withData = await tl.publish(task, { n: 1 }, { appData: { k: [1] } });
    expect((await tl.getJob(withData.id))?.appData).toEqual({ k: [1] });
    expect(await tl.getJob("nothing")).toBeUndefined();
  });

  it("shows text a foreign producer wrote that is not JSON as text", async () => {
    const { tl, memory } = client();
    const store = await memory.lane("q", { maxStalls: 1, historyLimit: 1 });
    await store.put([
      { id: "raw", task: "t", payload: "not json", appData: "{bad", priority: 0, publishedAt: 0 },
    ]);
    expect(await tl.getJob("raw")).toMatchObject({ payload: "not json", appData: "{bad" });
  });

  it("is refused by an adapter without get", async () => {
    const { tl } = client({ adapter: partial(createMemoryAdapter(), { get: false }) });
    const err = await rejection(tl.getJob("j"));
    expect(err).toBeInstanceOf(UnsupportedError);
    expect((err as Error).message).toBe("The partial adapter does not support get");
  });
});

describe("calls an adapter cannot serve", () => {
  it("refuses workers, subscribe and publishAndWait, the last before publishing", async () => {
    const memory = createMemoryAdapter();
    const { tl } = client({
      adapter: partial(memory, { workers: false, subscribe: false, waitFor: false }),
    });
    expect(((await rejection(tl.workers())) as Error).message).toBe(
      "The partial adapter does not support the worker registry (workers)",
    );
    expect(((await rejection(tl.subscribe(() => {}))) as Error).message).toBe(
      "The partial adapter does not support events from other processes (subscribe): watch jobs with lane(name).get(id) instead",
    );
    expect(((await rejection(tl.publishAndWait(task, { n: 1 }))) as Error).message).toBe(
      "The partial adapter does not support waiting for a job (publishAndWait)",
    );
    expect((await tl.lane("q").counts()).waiting).toBe(0);
  });
});

describe("instrumentation", () => {
  it("gets the client, wraps each lane once, and puts the publish's trace context on its jobs", async () => {
    const attached: Tasklane[] = [];
    const wrapped: string[] = [];
    const ended: Array<readonly PutResult[] | undefined> = [];
    let traceContext = "t".repeat(4_096);
    const instrumentation: Instrumentation = {
      attach: (c) => attached.push(c),
      wrapLane: (store, lane) => {
        wrapped.push(lane);
        return store;
      },
      publish: () => ({ traceContext, end: (results) => ended.push(results) }),
    };
    const { tl, memory } = client({ instrumentation });
    expect(attached).toEqual([tl]);
    await tl.publish(task, { n: 1 }, { jobId: "a" });
    traceContext = "t".repeat(4_097); // too long: dropped, the job is still written
    await tl.publish(task, { n: 1 }, { jobId: "b" });
    expect(wrapped).toEqual(["q"]);
    expect(ended.map((r) => r?.map((x) => x.id))).toEqual([["a"], ["b"]]);
    const store = await memory.lane("q", { maxStalls: 1, historyLimit: 1 });
    const { jobs } = await store.reserve({ limit: 2, leaseMs: 1_000, waitMs: 0 });
    const byId = new Map(jobs.map((j) => [j.id, j.traceContext]));
    expect(byId.get("a")).toHaveLength(4_096);
    expect(byId.get("b")).toBeUndefined();
  });
});
