import { createManualClock, createMemoryAdapter } from "@tasklane/adapter-memory";
import { afterEach, describe, expect, it } from "vitest";
import { z } from "zod";
import type { LaneStore } from "../src/adapter.ts";
import {
  createTasklane,
  defineTask,
  type JobContext,
  LockLostError,
  PayloadTooLargeError,
  type Tasklane,
  UnrecoverableError,
  ValidationError,
} from "../src/index.ts";
import { bend } from "./bent-adapter.ts";

const open: Tasklane[] = [];
afterEach(async () => {
  await Promise.all(open.splice(0).map((tl) => tl.close({ graceMs: 0 })));
});

/**
 * Run one job of a task whose handler is `run`, on a lane keeping `logLimit` lines, until
 * it succeeds or fails; returns the job as stored.
 */
async function runOne(
  run: (ctx: JobContext) => unknown,
  options: { logLimit?: number; reportMs?: number; gate?: Promise<void> } = {},
) {
  const clock = createManualClock();
  const task = defineTask({
    name: "t",
    lane: "q",
    schema: z.object({}),
    retry: { maxAttempts: 1 },
    run: (_p, ctx) => run(ctx),
  });
  const tl = createTasklane({
    adapter: createMemoryAdapter({ clock }),
    clock,
    lanes: [{ name: "q", logLimit: options.logLimit ?? 100 }],
    tasks: [task],
  });
  open.push(tl);
  let ended = false;
  tl.events.on("succeeded", () => {
    ended = true;
  });
  tl.events.on("failed", () => {
    ended = true;
  });
  const { id } = await tl.publish(task, {});
  await tl.worker(options.reportMs ? { reportMs: options.reportMs } : {}).start();
  const job = async () => {
    const info = await tl.getJob(id);
    if (!info) throw new Error("job gone");
    return info;
  };
  const until = async (done: () => boolean | Promise<boolean>) => {
    for (let i = 0; i < 200 && !(await done()); i++) await clock.advance(5);
  };
  if (options.gate === undefined) await until(() => ended);
  return { job, until, ended: () => ended };
}

const lines = (n: number, from = 1) => Array.from({ length: n }, (_, i) => `line ${from + i}`);

describe("a job's log", () => {
  it("keeps the last logLimit lines and counts the ones dropped", async () => {
    for (const logged of [3, 4, 6, 7, 13]) {
      const { job } = await runOne(
        (ctx) => {
          for (const line of lines(logged)) ctx.log(line);
        },
        { logLimit: 3 },
      );
      const info = await job();
      expect(info.state).toBe("succeeded");
      expect(info.logs?.map((l) => l.message)).toEqual(lines(3, logged - 2));
      expect(info.logsDropped ?? 0).toBe(logged - 3);
    }
  });

  it("keeps no lines with logLimit 0, counting them all", async () => {
    const { job } = await runOne(
      (ctx) => {
        for (const line of lines(5)) ctx.log(line);
      },
      { logLimit: 0 },
    );
    const info = await job();
    expect(info.logs ?? []).toEqual([]);
    expect(info.logsDropped).toBe(5);
  });

  it("stores a line of 1000 characters whole and cuts a longer one, naming how much", async () => {
    const exact = "x".repeat(1_000);
    const { job } = await runOne((ctx) => {
      ctx.log(exact);
      ctx.log("y".repeat(1_001));
      ctx.log("z".repeat(100_000));
    });
    const messages = (await job()).logs?.map((l) => l.message);
    expect(messages).toEqual([
      exact,
      `${"y".repeat(984)} …[cut 17 chars]`,
      `${"z".repeat(981)} …[cut 99019 chars]`,
    ]);
  });

  it("never cuts a line between the halves of a surrogate pair", async () => {
    const { job } = await runOne((ctx) => ctx.log(`${"y".repeat(982)}😀${"y".repeat(100)}`));
    expect((await job()).logs?.[0]?.message).toBe(`${"y".repeat(982)} …[cut 102 chars]`);
  });
});

describe("a job's reports", () => {
  it("stores a failed attempt's last progress and lines with its failure", async () => {
    const { job } = await runOne((ctx) => {
      ctx.progress({ at: 3 });
      ctx.log("about to fail");
      throw new UnrecoverableError("no");
    });
    const info = await job();
    expect(info.state).toBe("failed");
    expect(info.progress).toEqual({ at: 3 });
    expect(info.logs?.map((l) => l.message)).toEqual(["about to fail"]);
    expect(info.logsDropped ?? 0).toBe(0);
  });

  it("stores what a handler returns, with or without a report", async () => {
    const quiet = await runOne(() => ({ ok: true }));
    const info = await quiet.job();
    expect(info.result).toEqual({ ok: true });
    expect(info.progress).toBeUndefined();
    expect(info.logs ?? []).toEqual([]);
    const talkative = await runOne((ctx) => {
      ctx.progress(1);
      return 2;
    });
    expect(await talkative.job()).toMatchObject({ result: 2, progress: 1 });
  });

  it("sends reports while the job runs, then only what is new with the outcome", async () => {
    let release = () => {};
    const gate = new Promise<void>((resolve) => {
      release = resolve;
    });
    const run = await runOne(
      async (ctx) => {
        ctx.progress("half");
        for (const line of lines(5)) ctx.log(line);
        await gate;
        ctx.log("line 6");
      },
      { logLimit: 3, reportMs: 100, gate },
    );
    await run.until(async () => (await run.job()).logs !== undefined);
    const running = await run.job();
    expect(running).toMatchObject({ state: "active", progress: "half", logsDropped: 2 });
    expect(running.logs?.map((l) => l.message)).toEqual(lines(3, 3));
    release();
    await run.until(run.ended);
    const done = await run.job();
    expect(done.state).toBe("succeeded");
    expect(done.progress).toBe("half");
    expect(done.logs?.map((l) => l.message)).toEqual(lines(3, 4));
    expect(done.logsDropped).toBe(3);
  });
});

describe("ctx.progress", () => {
  it("takes a value of up to 4096 bytes encoded, refusing a larger or unencodable one", async () => {
    const thrown: unknown[] = [];
    const attempt = (ctx: JobContext, value: unknown) => {
      try {
        ctx.progress(value);
      } catch (error) {
        thrown.push(error);
      }
    };
    const { job } = await runOne((ctx) => {
      attempt(ctx, "x".repeat(4_095)); // 4097 bytes with its quotes
      attempt(ctx, 10n);
      attempt(ctx, "y".repeat(4_094)); // 4096
    });
    const info = await job();
    expect(info.progress).toBe("y".repeat(4_094));
    expect(thrown).toHaveLength(2);
    expect(thrown[0]).toBeInstanceOf(PayloadTooLargeError);
    expect((thrown[0] as Error).message).toBe(
      `Progress of job ${info.id} is 4097 bytes encoded, over the limit of 4096 bytes`,
    );
    expect(thrown[1]).toBeInstanceOf(ValidationError);
    expect((thrown[1] as Error).message).toMatch(
      /^Progress for task "t" failed its schema: \(root\): cannot be encoded as JSON \(TypeError: /,
    );
  });

  it("stores undefined as null", async () => {
    const { job } = await runOne((ctx) => ctx.progress(undefined));
    const info = await job();
    expect(info.state).toBe("succeeded");
    expect(info.progress).toBeNull();
  });
});

describe("a report the backend does not take", () => {
  /** A client whose lanes answer `report` with `answer` (or throw it when it is an Error). */
  function client(answer: "lost" | Error) {
    const clock = createManualClock();
    const memory = createMemoryAdapter({ clock });
    const adapter = bend(memory, {
      lane: () => ({
        report: async (items: Parameters<NonNullable<LaneStore["report"]>>[0]) => {
          if (answer instanceof Error) throw answer;
          return items.map(() => answer);
        },
      }),
    });
    const seen: { aborted?: unknown; errors: Array<{ during: string; lane?: string }> } = {
      errors: [],
    };
    let release = () => {};
    const gate = new Promise<void>((resolve) => {
      release = resolve;
    });
    const task = defineTask({
      name: "t",
      lane: "q",
      schema: z.object({}),
      run: async (_p, ctx) => {
        ctx.signal.addEventListener("abort", () => {
          seen.aborted = ctx.signal.reason;
        });
        ctx.log("working");
        await gate;
        ctx.log("done");
      },
    });
    const tl = createTasklane({ adapter, clock, lanes: [{ name: "q" }], tasks: [task] });
    open.push(tl);
    tl.events.on("error", (e) => {
      seen.errors.push({ during: e.during, ...(e.lane ? { lane: e.lane } : {}) });
    });
    return { tl, clock, task, seen, release };
  }

  it("aborts the handler's signal when the backend answers that the lease is lost", async () => {
    const { tl, clock, task, seen, release } = client("lost");
    await tl.publish(task, {});
    await tl.worker({ reportMs: 100 }).start();
    for (let i = 0; i < 50 && seen.aborted === undefined; i++) await clock.advance(10);
    expect(seen.aborted).toBeInstanceOf(LockLostError);
    release();
  });

  it("reports a report call that throws as an error, the job going on to succeed with its lines", async () => {
    const { tl, clock, task, seen, release } = client(new Error("network"));
    let succeeded = 0;
    tl.events.on("succeeded", () => {
      succeeded++;
    });
    const { id } = await tl.publish(task, {});
    await tl.worker({ reportMs: 100 }).start();
    for (let i = 0; i < 50 && seen.errors.length === 0; i++) await clock.advance(10);
    expect(seen.errors).toEqual([{ during: "report", lane: "q" }]);
    expect(seen.aborted).toBeUndefined();
    release();
    for (let i = 0; i < 50 && succeeded === 0; i++) await clock.advance(10);
    expect((await tl.getJob(id))?.logs?.map((l) => l.message)).toEqual(["done"]);
  });
});
