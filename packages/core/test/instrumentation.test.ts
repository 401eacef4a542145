/**
 * The instrumentation hooks as core calls them, recorded by a plain object (no telemetry
 * library): what each publish, delivery and settle reports, in order, and that a client
 * without instrumentation stores no trace context.
 */
import { createManualClock, createMemoryAdapter } from "@tasklane/adapter-memory";
import { afterEach, describe, expect, it } from "vitest";
import { z } from "zod";
import type { LaneStore, ReservedJob } from "../src/adapter-kit.ts";
import {
  createTasklane,
  defineTask,
  type Instrumentation,
  type JobSettling,
  type Tasklane,
  UnrecoverableError,
  type WorkerView,
} from "../src/index.ts";

const open: Tasklane[] = [];
afterEach(async () => {
  await Promise.all(open.splice(0).map((tl) => tl.close({ graceMs: 0 })));
});

interface Recorder extends Instrumentation {
  log: string[];
  jobs: ReservedJob[];
  workers: WorkerView[];
  attached: Tasklane[];
  calls: Map<string, number>;
  /** The `running` count each handler saw of its worker, while it ran. */
  runningSeen: number[];
}

/** Records every hook call as a line, e.g. `job q 1`, `settling retry timeout`. */
function recorder(traceContext: string | undefined): Recorder {
  const r: Recorder = {
    log: [],
    jobs: [],
    workers: [],
    attached: [],
    calls: new Map(),
    runningSeen: [],
    attach: (client) => void r.attached.push(client),
    wrapLane: (store, lane) =>
      new Proxy(store, {
        get(target, prop, receiver) {
          const v = Reflect.get(target, prop, receiver);
          if (typeof v !== "function") return v;
          return (...args: unknown[]) => {
            const key = `${lane}.${String(prop)}`;
            r.calls.set(key, (r.calls.get(key) ?? 0) + 1);
            return v.apply(target, args);
          };
        },
      }) as LaneStore,
    publish(lane, task, jobs) {
      r.log.push(`publish ${lane} ${task} ${jobs.length}`);
      return {
        traceContext,
        end: (results, error) =>
          r.log.push(
            error === undefined
              ? `published ${results?.map((x) => x.status).join(",")}`
              : `publish failed ${(error as Error).name}`,
          ),
      };
    },
    worker: (view) => void r.workers.push(view),
    job(lane, job) {
      r.jobs.push(job);
      r.log.push(`job ${lane} ${job.attempt}`);
      return {
        run(handler) {
          r.log.push("run");
          return handler();
        },
        settling(outcome: JobSettling) {
          const detail = outcome.kind === "retry" || outcome.kind === "dead";
          r.log.push(`settling ${outcome.kind}${detail ? ` ${outcome.error.reason}` : ""}`);
        },
        end: (status) => void r.log.push(`end ${status}`),
      };
    },
  };
  return r;
}

async function until(clock: ReturnType<typeof createManualClock>, done: () => boolean) {
  for (let i = 0; i < 200 && !done(); i++) await clock.advance(10);
  expect(done()).toBe(true);
}

describe("instrumentation hooks", () => {
  it("reports a publish, and each delivery from its start to the backend's answer", async () => {
    const clock = createManualClock();
    const rec = recorder("00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01");
    let calls = 0;
    const flaky = defineTask({
      name: "flaky",
      lane: "q",
      schema: z.object({ n: z.number() }),
      retry: { maxAttempts: 3, baseMs: 100, jitter: 0 },
      run: async (p) => {
        rec.runningSeen.push(rec.workers[0]?.running ?? -1);
        if (p.n === 1 && ++calls < 2) throw new Error("once");
        if (p.n === 2) throw new UnrecoverableError("never");
      },
    });
    const tl = createTasklane({
      adapter: createMemoryAdapter({ clock }),
      clock,
      lanes: [{ name: "q" }],
      tasks: [flaky],
      instrumentation: rec,
    });
    open.push(tl);
    expect(rec.attached).toEqual([tl]);

    await tl.publish(flaky, { n: 1 });
    expect(rec.log).toEqual(["publish q flaky 1", "published created"]);
    const worker = tl.worker({ concurrency: 2 });
    expect(rec.workers).toHaveLength(1);
    expect(rec.workers[0]?.concurrency).toBe(2);
    expect(rec.workers[0]?.started).toBe(false);
    await worker.start();
    expect(rec.workers[0]?.started).toBe(true);
    await until(clock, () => rec.log.filter((l) => l === "end ok").length === 2);
    expect(rec.log.slice(2)).toEqual([
      "job q 1",
      "run",
      "settling retry error",
      "end ok",
      "job q 2",
      "run",
      "settling ack",
      "end ok",
    ]);
    // the context the publish gave is what every delivery of the job carries
    expect(rec.jobs.map((j) => j.traceContext)).toEqual([
      "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01",
      "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01",
    ]);
    expect(rec.runningSeen).toEqual([1, 1]);
    expect(rec.workers[0]?.running).toBe(0);
    expect(rec.workers[0]?.held).toBe(0);
    expect(rec.workers[0]?.metrics().jobs).toEqual({ q: 2 });

    rec.log.length = 0;
    await tl.publishMany(flaky, [{ payload: { n: 2 } }, { payload: { n: 3 } }]);
    await until(clock, () => rec.log.filter((l) => l.startsWith("end")).length === 2);
    expect(rec.log.slice(0, 2)).toEqual(["publish q flaky 2", "published created,created"]);
    expect(rec.log.filter((l) => l.startsWith("settling")).sort()).toEqual([
      "settling ack",
      "settling dead unrecoverable",
    ]);
    // every adapter call went through the wrapped store
    expect(rec.calls.get("q.put")).toBe(2);
    expect(rec.calls.get("q.ack")).toBeGreaterThanOrEqual(1);
    expect(rec.calls.get("q.nack")).toBe(2);
    expect(rec.calls.get("q.reserve")).toBeGreaterThanOrEqual(3);
    await worker.stop();
    expect(rec.workers[0]?.started).toBe(false);
  });

  it("reports a lost lease and a job dead before its handler ran", async () => {
    const clock = createManualClock();
    const rec = recorder(undefined);
    const slow = defineTask({
      name: "slow",
      lane: "q",
      schema: z.object({}),
      run: (_p, ctx) => new Promise((resolve) => ctx.signal.addEventListener("abort", resolve)),
    });
    const tl = createTasklane({
      adapter: createMemoryAdapter({ clock }),
      clock,
      lanes: [{ name: "q", leaseMs: 1_000 }],
      tasks: [slow],
      instrumentation: rec,
    });
    open.push(tl);
    // a job of a task no worker knows: dead at once, never run
    const store = await tl.adapter.lane("q", { maxStalls: 3, historyLimit: 20 });
    await store.put([{ id: "x", task: "gone", payload: "{}", priority: 0, publishedAt: 0 }]);
    await tl.publish(slow, {});
    const worker = tl.worker({ concurrency: 2 });
    await worker.start();
    await until(
      clock,
      () => rec.log.includes("settling dead unknown_task") && rec.log.includes("run"),
    );
    // the lease is taken away from the worker: its next heartbeat learns it
    await tl.lane("q").cancel([rec.jobs.find((j) => j.task === "slow")?.id ?? ""]);
    await until(clock, () => rec.log.includes("end canceled"));
    expect(rec.jobs.map((j) => j.traceContext)).toEqual([undefined, undefined]);
    const lines = rec.log.filter((l) => !l.startsWith("publish"));
    expect(lines.filter((l) => l !== "run").sort()).toEqual(
      ["job q 1", "job q 1", "settling dead unknown_task", "end ok", "end canceled"].sort(),
    );
  });

  it("stores no trace context when the client has no instrumentation", async () => {
    const clock = createManualClock();
    const seen: ReservedJob[] = [];
    const task = defineTask({ name: "t", lane: "q", schema: z.object({}), run: () => {} });
    const tl = createTasklane({
      adapter: createMemoryAdapter({ clock }),
      clock,
      lanes: [{ name: "q" }],
      tasks: [task],
    });
    open.push(tl);
    await tl.publish(task, {});
    const store = await tl.adapter.lane("q", { maxStalls: 3, historyLimit: 20 });
    seen.push(...(await store.reserve({ limit: 1, leaseMs: 1_000, waitMs: 0 })).jobs);
    expect(seen).toHaveLength(1);
    expect(seen[0]).not.toHaveProperty("traceContext");
  });
});
