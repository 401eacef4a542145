import { createManualClock, createMemoryAdapter } from "@tasklane/adapter-memory";
import { afterEach, describe, expect, it } from "vitest";
import { z } from "zod";
import type { Adapter, Capabilities } from "../src/adapter.ts";
import { WAIT_POLL_MS } from "../src/client/wait-for.ts";
import {
  ConfigError,
  createTasklane,
  defineTask,
  JobFailedError,
  JobNotFoundError,
  type Tasklane,
  UnsupportedError,
  WaitTimeoutError,
} from "../src/index.ts";

const task = defineTask({
  name: "t",
  lane: "q",
  schema: z.object({ n: z.number() }),
  run: (p) => p.n * 2,
});

const open: Tasklane[] = [];
afterEach(async () => {
  await Promise.all(open.splice(0).map((tl) => tl.close({ graceMs: 0 })));
});

type Memory = ReturnType<typeof createMemoryAdapter>;

/**
 * A client on the manual clock. `adapter` may declare capabilities otherwise, or drop
 * `watch`'s events (a subscription that lost them: only the poll sees the job finish).
 */
function client(options: { caps?: Partial<Capabilities>; deaf?: boolean; noWatch?: boolean } = {}) {
  const clock = createManualClock();
  const memory = createMemoryAdapter({ clock });
  const adapter: Adapter = {
    name: "partial",
    capabilities: { ...memory.capabilities, ...options.caps },
    close: () => memory.close(),
    lane: (name, laneOptions) => memory.lane(name, laneOptions),
    ...(options.noWatch
      ? {}
      : {
          watch: options.deaf
            ? async () => async () => {}
            : (jobs, listener) => memory.watch(jobs, listener),
        }),
  };
  const tl = createTasklane({ adapter, clock, lanes: [{ name: "q" }], tasks: [task] });
  open.push(tl);
  return { tl, clock, memory };
}

/** Run the lane's next job to success with `result`, or fail it for good. */
async function finish(memory: Memory, outcome: { result: string } | { failWith: string }) {
  const store = await memory.lane("q", { maxStalls: 3, historyLimit: 20 });
  const { jobs } = await store.reserve({ limit: 1, leaseMs: 60_000, waitMs: 0 });
  const job = jobs[0];
  if (!job) throw new Error("nothing to finish");
  if ("result" in outcome) await store.ack([{ ...job.lock, result: outcome.result }]);
  else
    await store.nack([
      {
        lock: job.lock,
        dead: true,
        error: { name: outcome.failWith, message: "no", reason: "error" },
      },
    ]);
}

/** The promise's outcome once it settles, or "pending". */
function settled(promise: Promise<unknown>) {
  const state: { value?: unknown; error?: unknown; done: boolean } = { done: false };
  promise.then(
    (value) => Object.assign(state, { value, done: true }),
    (error) => Object.assign(state, { error, done: true }),
  );
  return state;
}

const turn = async (clock: ReturnType<typeof createManualClock>) => {
  for (let i = 0; i < 5; i++) await clock.advance(0);
};

describe("waitFor", () => {
  it("resolves with the decoded result, and leaves no timer behind", async () => {
    const { tl, clock, memory } = client();
    const { id } = await tl.publish(task, { n: 1 });
    const before = clock.pending();
    const waiting = settled(tl.waitFor(id, { timeoutMs: 60_000 }));
    await turn(clock);
    expect(waiting.done).toBe(false);
    await finish(memory, { result: '{"v":2}' });
    await turn(clock);
    expect(waiting).toMatchObject({ done: true, value: { v: 2 } });
    expect(clock.pending()).toBe(before);
  });

  it("resolves undefined for a job that returned nothing", async () => {
    const { tl, clock, memory } = client();
    const { id } = await tl.publish(task, { n: 1 });
    const store = await memory.lane("q", { maxStalls: 3, historyLimit: 20 });
    const { jobs } = await store.reserve({ limit: 1, leaseMs: 60_000, waitMs: 0 });
    const lock = jobs[0]?.lock;
    if (!lock) throw new Error("nothing reserved");
    await store.ack([lock]);
    await turn(clock);
    await expect(tl.waitFor(id)).resolves.toBeUndefined();
  });

  it("rejects with JobFailedError naming the lane and the stored error", async () => {
    const { tl, clock, memory } = client();
    const { id } = await tl.publish(task, { n: 1 });
    const waiting = settled(tl.waitFor(id));
    await turn(clock);
    await finish(memory, { failWith: "TypeError" });
    await turn(clock);
    expect(waiting.error).toBeInstanceOf(JobFailedError);
    expect(waiting.error).toMatchObject({
      jobId: id,
      lane: "q",
      state: "failed",
      error: { name: "TypeError", message: "no" },
    });
    expect(clock.pending()).toBe(0);
  });

  it("sees a finish whose event was lost at the next poll, every WAIT_POLL_MS", async () => {
    const { tl, clock, memory } = client({ deaf: true });
    const { id } = await tl.publish(task, { n: 1 });
    const waiting = settled(tl.waitFor(id));
    await turn(clock);
    await clock.advance(WAIT_POLL_MS); // a first poll: still running
    expect(waiting.done).toBe(false);
    await finish(memory, { result: "7" });
    await clock.advance(WAIT_POLL_MS - 1);
    expect(waiting.done).toBe(false);
    await clock.advance(1);
    await turn(clock);
    expect(waiting).toMatchObject({ done: true, value: 7 });
    expect(clock.pending()).toBe(0);
  });

  it("rejects with WaitTimeoutError after timeoutMs, the job going on; 0 gives up at once", async () => {
    const { tl, clock } = client();
    const { id } = await tl.publish(task, { n: 1 });
    const waiting = settled(tl.waitFor(id, { timeoutMs: 1_000 }));
    await turn(clock);
    await clock.advance(999);
    expect(waiting.done).toBe(false);
    await clock.advance(1);
    expect(waiting.error).toBeInstanceOf(WaitTimeoutError);
    expect(waiting.error).toMatchObject({ jobId: id, timeoutMs: 1_000 });
    expect((await tl.getJob(id))?.state).toBe("waiting");
    const now = settled(tl.waitFor(id, { timeoutMs: 0 }));
    await turn(clock);
    expect(now.error).toBeInstanceOf(WaitTimeoutError);
    expect(clock.pending()).toBe(0);
  });

  it("stops at its signal with the signal's reason, and not at all when already aborted", async () => {
    const { tl, clock } = client();
    const { id } = await tl.publish(task, { n: 1 });
    const controller = new AbortController();
    const waiting = settled(tl.waitFor(id, { signal: controller.signal, timeoutMs: 60_000 }));
    await turn(clock);
    expect(waiting.done).toBe(false);
    const reason = new Error("enough");
    controller.abort(reason);
    await turn(clock);
    expect(waiting).toMatchObject({ done: true, error: reason });
    expect(clock.pending()).toBe(0);
    await expect(tl.waitFor(id, { signal: AbortSignal.abort("early") })).rejects.toBe("early");
  });

  it("rejects with JobNotFoundError for a job no lane holds", async () => {
    const { tl } = client();
    const err = await tl.waitFor("ghost").catch((e: unknown) => e);
    expect(err).toBeInstanceOf(JobNotFoundError);
    expect(err).toMatchObject({ jobId: "ghost" });
  });

  it("refuses a bad job id or timeout", async () => {
    const { tl } = client();
    for (const jobId of ["", 5]) {
      const err = await tl.waitFor(jobId as never).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(ConfigError);
      expect(err).toMatchObject({ field: "jobId", message: expect.stringContaining("non-empty") });
    }
    for (const timeoutMs of [-1, Number.NaN, Number.POSITIVE_INFINITY]) {
      const err = await tl.waitFor("j", { timeoutMs }).catch((e: unknown) => e);
      expect(err).toMatchObject({
        field: "options.timeoutMs",
        message: expect.stringContaining("must be a finite number of ms >= 0"),
      });
    }
  });

  it("is refused by an adapter without waitFor, get or watch", async () => {
    for (const options of [
      { caps: { waitFor: false } },
      { caps: { get: false } },
      { noWatch: true },
    ]) {
      const { tl } = client(options);
      const err = await tl.waitFor("j").catch((e: unknown) => e);
      expect(err).toBeInstanceOf(UnsupportedError);
      expect((err as Error).message).toBe(
        "The partial adapter does not support waiting for a job (waitFor)",
      );
    }
  });
});

describe("publishAndWait", () => {
  it("hands its timeout and signal to the wait", async () => {
    const { tl, clock } = client();
    const timed = settled(tl.publishAndWait(task, { n: 1 }, { timeoutMs: 500 }));
    await turn(clock);
    await clock.advance(500);
    expect(timed.error).toBeInstanceOf(WaitTimeoutError);
    const controller = new AbortController();
    const signaled = settled(tl.publishAndWait(task, { n: 1 }, { signal: controller.signal }));
    await turn(clock);
    controller.abort("stop");
    await turn(clock);
    expect(signaled).toMatchObject({ done: true, error: "stop" });
    expect((await tl.lane("q").counts()).waiting).toBe(2);
  });

  it("is refused before publishing by an adapter without watch", async () => {
    const { tl } = client({ noWatch: true });
    await expect(tl.publishAndWait(task, { n: 1 })).rejects.toBeInstanceOf(UnsupportedError);
    expect((await tl.lane("q").counts()).waiting).toBe(0);
  });
});
