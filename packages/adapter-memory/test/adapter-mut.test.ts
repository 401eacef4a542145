import type { JobFinishedEvent, JobRef, WorkerRegistration } from "@tasklane/core/adapter";
import { describe, expect, it } from "vitest";
import { createManualClock, createMemoryAdapter, type MemoryAdapterOptions } from "../src/index.ts";
import { errorOf, job, now, START, setup } from "./helpers.ts";

function worker(id: string, startedAt: number): WorkerRegistration {
  return {
    id,
    host: "h",
    pid: 1,
    lanes: ["q"],
    concurrency: 1,
    held: 0,
    running: 0,
    jobs: [],
    startedAt,
    version: "0",
  };
}

/** Reserve job `id` (the only waiting one) and ack it: it finishes as succeeded. */
async function succeed(lane: Awaited<ReturnType<typeof setup>>["lane"], id: string) {
  await lane.put([job(id)]);
  const { jobs } = await lane.reserve(now);
  expect(jobs.map((j) => j.id)).toEqual([id]);
  expect(await lane.ack([(jobs[0] as (typeof jobs)[0]).lock])).toEqual(["ok"]);
  // watchers are told in a microtask after the operation
  await Promise.resolve();
}

describe("memory adapter options", () => {
  it("refuses options that are not an object, naming them", async () => {
    for (const bad of [null, "fast", 3]) {
      const err = await errorOf(() => createMemoryAdapter(bad as unknown as MemoryAdapterOptions));
      expect(err).toMatchObject({ code: "CONFIG", field: "options", value: bad });
      expect(err.message).toMatch(/^Invalid option options = .*: must be an object$/);
    }
  });
});

describe("memory adapter: closed", () => {
  it("every call after close rejects with ClosedError naming the memory adapter", async () => {
    const { adapter } = await setup();
    await adapter.close();
    await adapter.close(); // twice is fine
    const calls: Array<() => Promise<unknown>> = [
      () => adapter.lane("q", { maxStalls: 1, historyLimit: 0 }),
      () => adapter.subscribe(() => {}),
      () => adapter.watch([{ lane: "q", jobId: "a" }], () => {}),
      () => adapter.registerWorker(worker("w", START), 1000),
      () => adapter.deregisterWorker("w"),
      () => adapter.workers(),
    ];
    for (const call of calls) {
      const err = await errorOf(call);
      expect(err).toMatchObject({ code: "CLOSED", message: "memory adapter is closed" });
    }
  });

  it("a lane's calls after close reject with ClosedError naming the lane", async () => {
    const { adapter, lane } = await setup();
    await adapter.close();
    expect(await errorOf(() => lane.put([job("a")]))).toMatchObject({
      code: "CLOSED",
      message: 'memory lane "q" is closed',
    });
    expect(await errorOf(() => lane.reserve(now))).toMatchObject({
      code: "CLOSED",
      message: 'memory lane "q" is closed',
    });
  });

  it("close drops lifecycle events not yet delivered", async () => {
    const { adapter, lane } = await setup();
    const events: string[] = [];
    await adapter.subscribe((e) => events.push(`${e.type} ${e.jobId}`));
    await lane.put([job("a")]);
    // delivered in a microtask; the put of b is closed over before that
    const put = lane.put([job("b")]);
    await adapter.close();
    await put;
    await Promise.resolve();
    expect(events).toEqual(["published a"]);
  });
});

describe("memory adapter: subscribe", () => {
  it("a subscriber sees no event of an operation made before it subscribed", async () => {
    const { adapter, lane } = await setup();
    const events: string[] = [];
    // the put's event is due in a microtask; the subscription comes before that
    const put = lane.put([job("a")]);
    await adapter.subscribe((e) => events.push(`${e.type} ${e.jobId}`));
    await put;
    await lane.put([job("b")]);
    await Promise.resolve();
    expect(events).toEqual(["published b"]);
  });
});

describe("memory adapter: watch", () => {
  it("refuses jobs that are not an array, naming the field", async () => {
    const { adapter } = await setup();
    const err = await errorOf(() => adapter.watch("a" as unknown as JobRef[], () => {}));
    expect(err).toMatchObject({ code: "CONFIG", field: "jobs", value: "a" });
    expect(err.message).toBe('Invalid option jobs = "a": must be an array of { lane, jobId }');
  });

  it("two watches of one job are both told", async () => {
    const { adapter, lane } = await setup();
    const seen: string[] = [];
    const ref = { lane: "q", jobId: "a" };
    await adapter.watch([ref], (e) => seen.push(`first ${e.jobId} ${e.state}`));
    await adapter.watch([ref], (e) => seen.push(`second ${e.jobId} ${e.state}`));
    await succeed(lane, "a");
    expect(seen).toEqual(["first a succeeded", "second a succeeded"]);
  });

  it("each unwatch of a job watched twice ends only its own watch", async () => {
    const { adapter, lane } = await setup();
    const seen: string[] = [];
    const ref = { lane: "q", jobId: "a" };
    const unwatchFirst = await adapter.watch([ref], (e) =>
      seen.push(`first ${e.jobId} ${e.state}`),
    );
    await adapter.watch([ref], (e) => seen.push(`second ${e.jobId} ${e.state}`));
    await unwatchFirst();
    await succeed(lane, "a");
    expect(seen).toEqual(["second a succeeded"]);
  });

  it("an unwatched job's finish is not reported; other watches go on", async () => {
    const { adapter, lane } = await setup();
    const seen: JobFinishedEvent[] = [];
    const unwatchA = await adapter.watch([{ lane: "q", jobId: "a" }], (e) => seen.push(e));
    await adapter.watch([{ lane: "q", jobId: "b" }], (e) => seen.push(e));
    await unwatchA();
    await succeed(lane, "a");
    await succeed(lane, "b");
    expect(seen).toEqual([{ lane: "q", jobId: "b", state: "succeeded" }]);
  });

  it("unwatch is idempotent, also for a job listed twice", async () => {
    const { adapter, lane } = await setup();
    const seen: string[] = [];
    const ref = { lane: "q", jobId: "a" };
    const unwatch = await adapter.watch([ref, ref], (e) => seen.push(e.jobId));
    await unwatch();
    await unwatch();
    await succeed(lane, "a");
    expect(seen).toEqual([]);
  });
});

describe("memory adapter: worker registry", () => {
  it("refuses a worker without a non-empty string id, naming worker.id", async () => {
    const { adapter } = await setup();
    for (const bad of [null, {}, { id: "" }, { id: 7 }]) {
      const err = await errorOf(() =>
        adapter.registerWorker(bad as unknown as WorkerRegistration, 1000),
      );
      const value = (bad as { id?: unknown } | null)?.id;
      expect(err).toMatchObject({ code: "CONFIG", field: "worker.id", value });
      expect(err.message).toMatch(/: must be a non-empty string$/);
    }
    expect(await adapter.workers()).toEqual([]);
  });

  it("refuses a ttl that is not a positive finite number of ms, naming ttlMs", async () => {
    const { adapter } = await setup();
    for (const bad of [0, -1, Number.NaN, Number.POSITIVE_INFINITY]) {
      const err = await errorOf(() => adapter.registerWorker(worker("w", START), bad));
      expect(err).toMatchObject({ code: "CONFIG", field: "ttlMs" });
      expect(err.message).toMatch(/^Invalid option ttlMs = .*: must be a positive number of ms$/);
    }
    expect(await adapter.workers()).toEqual([]);
    await adapter.registerWorker(worker("w", START), 0.5);
    expect((await adapter.workers()).map((w) => w.id)).toEqual(["w"]);
  });

  it("lists live workers by start time, then id; a worker lapses at its expiresAt", async () => {
    const clock = createManualClock(START);
    const adapter = createMemoryAdapter({ clock });
    await adapter.registerWorker(worker("late", START + 20), 1000);
    await adapter.registerWorker(worker("b", START + 10), 1000);
    await adapter.registerWorker(worker("c", START + 10), 1000);
    await adapter.registerWorker(worker("a", START + 10), 1000);
    await adapter.registerWorker(worker("early", START + 5), 1000);
    expect((await adapter.workers()).map((w) => w.id)).toEqual(["early", "a", "b", "c", "late"]);
    await clock.advance(999);
    await adapter.registerWorker(worker("b", START + 10), 1000);
    expect((await adapter.workers())[0]).toMatchObject({
      id: "early",
      lastHeartbeatAt: START,
      expiresAt: START + 1000,
    });
    await clock.advance(1);
    expect((await adapter.workers()).map((w) => w.id)).toEqual(["b"]);
    await adapter.deregisterWorker("b");
    expect(await adapter.workers()).toEqual([]);
  });
});
