import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";
import { bucketIndex, type JobInfo } from "@tasklane/core/adapter";
import { describe, expect, it } from "vitest";
import { job, now, START, setup } from "./helpers.ts";

setFlagsFromString("--expose-gc");
const collectGarbage = runInNewContext("gc") as () => void;

async function ids(iterable: AsyncIterable<JobInfo>): Promise<string[]> {
  const out: string[] = [];
  for await (const info of iterable) out.push(info.id);
  return out;
}

describe("get, list, counts, retention, history, stats", () => {
  it("get returns the job's full picture", async () => {
    const { lane } = await setup();
    await lane.put([job("a", { appData: '{"k":1}', priority: 3, runAt: START + 10 })]);
    expect(await lane.get("a")).toEqual({
      id: "a",
      lane: "q",
      task: "t",
      payload: '{"id":"a"}',
      appData: '{"k":1}',
      priority: 3,
      state: "delayed",
      attempt: 0,
      publishedAt: START,
      runAt: START + 10,
      changedAt: START,
      history: [{ at: START, event: "published" }],
    });
    expect(await lane.get("nope")).toBeUndefined();
  });

  it("lists one state in pages", async () => {
    const { lane } = await setup();
    await lane.put(Array.from({ length: 25 }, (_, i) => job(`j${i}`)));
    await lane.reserve({ ...now, limit: 5 });
    const waiting = await ids(lane.list({ state: "waiting", pageSize: 7 }));
    expect(waiting).toEqual(Array.from({ length: 20 }, (_, i) => `j${i + 5}`));
    expect(await ids(lane.list({ state: "active" }))).toHaveLength(5);
    expect(await ids(lane.list({ state: "failed" }))).toEqual([]);
  });

  it("tolerates jobs changing state during iteration: no repeats, no misses of stayers", async () => {
    const { lane } = await setup();
    await lane.put(Array.from({ length: 10 }, (_, i) => job(`j${i}`)));
    const seen: string[] = [];
    for await (const info of lane.list({ state: "waiting", pageSize: 3 })) {
      seen.push(info.id);
      if (info.id === "j1") {
        // Mid-page (j0..j2 already fetched): remove jobs not yet visited, add new ones, and
        // make j3 leave and re-enter the state: it re-entered after the iteration began.
        await lane.delete(["j4"]);
        await lane.cancel(["j7"]);
        await lane.put([job("new1"), job("new2")]);
        const { jobs } = await lane.reserve({ ...now, limit: 4 });
        const j3 = jobs.filter((j) => j.id === "j3");
        await lane.release(j3.map((j) => ({ lock: j.lock, uncounted: true as const })));
      }
    }
    expect(seen).toEqual(["j0", "j1", "j2", "j5", "j6", "j8", "j9"]);
  });

  it("takes the cursor of an iterator dropped half-way out of the list once it is garbage", async () => {
    const { lane } = await setup();
    await lane.put([job("a"), job("b"), job("c")]);
    const waiting = (lane as unknown as { lists: { waiting: { cursors: number } } }).lists.waiting;
    // driven by hand, never ended: its finally block does not run
    await (async () => {
      const iterator = lane.list({ state: "waiting", pageSize: 1 })[Symbol.asyncIterator]();
      expect((await iterator.next()).value?.id).toBe("a");
    })();
    expect(waiting.cursors).toBe(1);
    for (let i = 0; i < 50 && waiting.cursors > 0; i++) {
      collectGarbage();
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    expect(waiting.cursors).toBe(0);
    // an iterator that ends takes its cursor out itself
    expect(await ids(lane.list({ state: "waiting", pageSize: 1 }))).toEqual(["a", "b", "c"]);
    expect(waiting.cursors).toBe(0);
  });

  it("ends cleanly when the consumer breaks out early", async () => {
    const { lane } = await setup();
    await lane.put([job("a"), job("b"), job("c")]);
    for await (const info of lane.list({ state: "waiting", pageSize: 1 })) {
      expect(info.id).toBe("a");
      break;
    }
    expect(await ids(lane.list({ state: "waiting" }))).toEqual(["a", "b", "c"]);
    expect(await lane.counts()).toEqual({
      waiting: 3,
      delayed: 0,
      blocked: 0,
      active: 0,
      succeeded: 0,
      failed: 0,
      canceled: 0,
      expired: 0,
    });
  });

  it("removes finished jobs by count, oldest first", async () => {
    const { lane } = await setup({ retention: { succeeded: { maxCount: 2 } } });
    await lane.put([job("a"), job("b"), job("c")]);
    const { jobs } = await lane.reserve(now);
    for (const j of jobs) await lane.ack([j.lock]);
    expect(await ids(lane.list({ state: "succeeded" }))).toEqual(["b", "c"]);
    // Retention frees the id.
    expect(await lane.put([job("a")])).toEqual([{ id: "a", status: "created" }]);
  });

  it("removes finished jobs by age as the clock moves", async () => {
    const { clock, lane } = await setup({
      retention: { failed: { maxAgeMs: 60_000 }, canceled: { maxAgeMs: 0 } },
    });
    await lane.put([job("a"), job("b"), job("c")]);
    const { jobs } = await lane.reserve({ ...now, limit: 1 });
    const error = { name: "Error", message: "x", reason: "error" as const };
    await lane.nack([{ lock: jobs[0]!.lock, dead: true, error }]);
    await clock.advance(30_000);
    const more = await lane.reserve({ ...now, limit: 1 });
    await lane.nack([{ lock: more.jobs[0]!.lock, dead: true, error }]);
    await lane.cancel(["c"]);
    expect(await lane.counts()).toMatchObject({ failed: 2, canceled: 0 });
    await clock.advance(30_000);
    expect(await ids(lane.list({ state: "failed" }))).toEqual(["b"]);
    await clock.advance(60 * 60_000);
    expect(await lane.counts()).toMatchObject({ failed: 0 });
    expect(await lane.get("a")).toBeUndefined();
  });

  it("bounds each job's history to historyLimit, newest kept", async () => {
    const { clock, lane } = await setup({ historyLimit: 3, maxStalls: 10 });
    await lane.put([job("a")]);
    for (let i = 0; i < 3; i++) {
      await lane.reserve({ ...now, leaseMs: 10 });
      await clock.advance(10);
    }
    const history = (await lane.get("a"))?.history ?? [];
    expect(history.map((e) => e.event)).toEqual(["stalled", "reserved", "stalled"]);
    expect(history.at(-1)?.at).toBe(START + 30);
  });

  it("keeps daily wait and run stats with the core helpers", async () => {
    const { clock, lane } = await setup();
    await lane.put([job("a"), job("b")]);
    await clock.advance(250);
    const { jobs } = await lane.reserve(now);
    await clock.advance(40);
    await lane.ack(jobs.map((j) => j.lock));
    const day = await lane.stats("2026-01-01");
    expect(day?.wait).toMatchObject({ count: 2, mean: 250 });
    expect(day?.run).toMatchObject({ count: 2, mean: 40 });
    expect(day?.run.histogram).toEqual({ [bucketIndex(40)]: 2 });
    expect(await lane.stats("2026-01-02")).toBeUndefined();
    // A day later, samples land on the new day.
    await clock.advance(86_400_000);
    await lane.put([job("c")]);
    await lane.reserve(now);
    expect((await lane.stats("2026-01-02"))?.wait.count).toBe(1);
    expect((await lane.stats("2026-01-01"))?.wait.count).toBe(2);
  });
});
