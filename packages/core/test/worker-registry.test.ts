import { hostname } from "node:os";
import { createManualClock, createMemoryAdapter } from "@tasklane/adapter-memory";
import { afterEach, describe, expect, it } from "vitest";
import { z } from "zod";
import type { Adapter, Capabilities } from "../src/adapter.ts";
import { createTasklane, defineTask, type Tasklane } from "../src/index.ts";

const open: Tasklane[] = [];
afterEach(async () => {
  await Promise.all(open.splice(0).map((tl) => tl.close({ graceMs: 0 })));
});

type Memory = ReturnType<typeof createMemoryAdapter>;

/** The memory adapter with capabilities declared otherwise, or registry calls that throw. */
function wrap(memory: Memory, options: { caps?: Partial<Capabilities>; failing?: boolean } = {}) {
  const fail = async () => {
    throw new Error("registry down");
  };
  return {
    name: "wrapped",
    capabilities: { ...memory.capabilities, ...options.caps },
    close: () => memory.close(),
    lane: (name, laneOptions) => memory.lane(name, laneOptions),
    registerWorker: options.failing ? fail : (w, ttl) => memory.registerWorker(w, ttl),
    deregisterWorker: options.failing ? fail : (id) => memory.deregisterWorker(id),
    workers: () => memory.workers(),
  } satisfies Adapter;
}

function client(adapter: Adapter, clock: ReturnType<typeof createManualClock>, namespace = "a") {
  const task = defineTask({ name: "t", lane: "q", schema: z.object({}), run: () => {} });
  const tl = createTasklane({ adapter, clock, namespace, lanes: [{ name: "q" }], tasks: [task] });
  open.push(tl);
  return tl;
}

describe("the worker registry", () => {
  it("names a worker by host, pid and a short random part", () => {
    const clock = createManualClock();
    const tl = client(createMemoryAdapter({ clock }), clock);
    const id = tl.worker().id;
    expect(id).toMatch(new RegExp(`^${hostname()}:${process.pid}:[0-9a-f]{8}$`));
    expect(tl.worker().id).not.toBe(id);
  });

  it("lists at most 100 of the jobs a worker holds", async () => {
    const clock = createManualClock();
    let release = () => {};
    const gate = new Promise<void>((resolve) => {
      release = resolve;
    });
    const task = defineTask({ name: "t", lane: "q", schema: z.object({}), run: () => gate });
    const tl = createTasklane({
      adapter: createMemoryAdapter({ clock }),
      clock,
      lanes: [{ name: "q", batchSize: 200 }],
      tasks: [task],
    });
    open.push(tl);
    await tl.publishMany(
      task,
      Array.from({ length: 120 }, () => ({ payload: {} })),
    );
    const worker = tl.worker({ concurrency: 120, prefetch: 0, heartbeatMs: 1_000 });
    await worker.start();
    for (let i = 0; i < 20 && worker.held < 120; i++) await clock.advance(10);
    expect(worker.held).toBe(120);
    await clock.advance(1_000); // a heartbeat renews the entry with the jobs held
    const [me] = await tl.workers();
    expect(me?.held).toBe(120);
    expect(me?.jobs).toHaveLength(100);
    release();
  });

  it("lists only the workers of the client's own lanes", async () => {
    const clock = createManualClock();
    const memory = createMemoryAdapter({ clock });
    const mine = client(memory, clock, "a");
    const theirs = client(memory, clock, "b");
    const worker = mine.worker();
    await worker.start();
    await theirs.worker().start();
    expect((await mine.workers()).map((w) => w.id)).toEqual([worker.id]);
    expect(await memory.workers()).toHaveLength(2);
  });

  it("registers nothing on an adapter without the workers capability", async () => {
    const clock = createManualClock();
    const memory = createMemoryAdapter({ clock });
    const tl = client(wrap(memory, { caps: { workers: false } }), clock);
    await tl.worker().start();
    expect(await memory.workers()).toEqual([]);
  });

  it("reports a registry that fails as error events; the worker runs and stops all the same", async () => {
    const clock = createManualClock();
    const tl = client(wrap(createMemoryAdapter({ clock }), { failing: true }), clock);
    const errors: string[] = [];
    tl.events.on("error", (e) => errors.push(e.during));
    const worker = tl.worker();
    await worker.start();
    expect(worker.running).toBe(true);
    await worker.stop();
    expect(worker.running).toBe(false);
    expect(errors).toEqual(["register", "deregister"]);
  });

  it("keeps a stopped worker out of the registry: no later heartbeat registers it again", async () => {
    const clock = createManualClock();
    const tl = client(createMemoryAdapter({ clock }), clock);
    const worker = tl.worker({ heartbeatMs: 1_000 });
    await worker.start();
    expect((await tl.workers()).map((w) => w.id)).toEqual([worker.id]);
    await worker.stop();
    await clock.advance(5_000);
    expect(await tl.workers()).toEqual([]);
  });
});
