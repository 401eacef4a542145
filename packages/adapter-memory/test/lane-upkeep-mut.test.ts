import { getEventListeners } from "node:events";
import type { ReserveResult } from "@tasklane/core/adapter";
import { describe, expect, it } from "vitest";
import { errorOf, job, now, START, setup } from "./helpers.ts";

const DAY_MS = 86_400_000;

/** The (event, detail) pairs of a job's history. */
async function events(lane: Awaited<ReturnType<typeof setup>>["lane"], id: string) {
  const info = await lane.get(id);
  return info?.history?.map((e) => (e.detail === undefined ? e.event : `${e.event}:${e.detail}`));
}

describe("lease expiry: stalls, prefetched deliveries, expiry", () => {
  it("a prefetched delivery whose lease ends is skipped, noted as 'stalled: prefetched'", async () => {
    const { clock, lane } = await setup({ maxStalls: 5 });
    await lane.put([job("a"), job("b")]);
    const { jobs } = await lane.reserve({ ...now, limit: 2, leaseMs: 1000, startNow: 1 });
    expect(jobs.map((j) => [j.id, j.attempt])).toEqual([
      ["a", 1],
      ["b", 1],
    ]);
    await clock.advance(1000);
    expect(await lane.get("b")).toMatchObject({ state: "waiting", attempt: 0 });
    expect(await events(lane, "b")).toEqual(["published", "reserved", "stalled:prefetched"]);
    expect(await lane.get("a")).toMatchObject({ state: "waiting", attempt: 1 });
    expect(await events(lane, "a")).toEqual(["published", "reserved", "stalled"]);
  });

  it("a prefetched delivery whose lease ends past the job's expiry expires it", async () => {
    const { clock, lane } = await setup({ maxStalls: 5 });
    await lane.put([job("a"), job("b", { expiresAt: START + 1000 })]);
    await lane.reserve({ ...now, limit: 2, leaseMs: 1000, startNow: 1 });
    await clock.advance(1000);
    expect(await lane.get("b")).toMatchObject({ state: "expired", finishedAt: START + 1000 });
    expect(await events(lane, "b")).toEqual([
      "published",
      "reserved",
      "stalled:prefetched",
      "expired",
    ]);
    expect((await lane.counts()).expired).toBe(1);
  });

  it("a started job whose lease ends at or past its expiry expires; before it, it waits again", async () => {
    const { clock, lane } = await setup({ maxStalls: 5 });
    await lane.put([job("a", { expiresAt: START + 1500 })]);
    await lane.reserve({ ...now, leaseMs: 1000 });
    await clock.advance(1000);
    expect(await lane.get("a")).toMatchObject({ state: "waiting", attempt: 1 });
    const { jobs } = await lane.reserve({ ...now, leaseMs: 500 });
    expect(jobs.map((j) => j.id)).toEqual(["a"]);
    await clock.advance(500);
    expect(await lane.get("a")).toMatchObject({ state: "expired", finishedAt: START + 1500 });
    expect(await events(lane, "a")).toEqual([
      "published",
      "reserved",
      "stalled",
      "reserved",
      "stalled",
      "expired",
    ]);
    expect(await lane.counts()).toMatchObject({ waiting: 0, active: 0, expired: 1 });
  });

  it("a skipped job's next stall counts twice, the ones after it once", async () => {
    const { clock, lane } = await setup({ maxStalls: 3 });
    await lane.put([job("a")]);
    // prefetched: skipped when its lease ends
    await lane.reserve({ ...now, limit: 1, leaseMs: 1000, startNow: 0 });
    await clock.advance(1000);
    // stalls: 2 (the skipped delivery counts), then 3 (= maxStalls: waits again), then 4
    for (let i = 0; i < 2; i++) {
      const { jobs } = await lane.reserve({ ...now, limit: 1, leaseMs: 1000, startNow: 0 });
      expect(jobs.map((j) => j.id)).toEqual(["a"]);
      await clock.advance(1000);
      expect((await lane.get("a"))?.state).toBe("waiting");
    }
    await lane.reserve({ ...now, limit: 1, leaseMs: 1000 });
    await clock.advance(1000);
    const info = await lane.get("a");
    expect(info).toMatchObject({
      state: "failed",
      finishedAt: START + 4000,
      error: {
        name: "StalledError",
        message: "Job a stalled 4 times (maxStalls 3)",
        reason: "stalled",
      },
    });
    expect((await events(lane, "a"))?.slice(-3)).toEqual(["reserved", "stalled", "failed:stalled"]);
    expect((await lane.stats("2026-01-01"))?.failures).toBe(1);
  });
});

describe("expiry sweep", () => {
  it("a deleted job's expiry entry does nothing when it comes", async () => {
    const { clock, lane } = await setup();
    await lane.put([job("a", { expiresAt: START + 100 }), job("b")]);
    expect(await lane.delete(["a"])).toBe(1);
    await clock.advance(100);
    expect(await lane.counts()).toMatchObject({ waiting: 1, expired: 0 });
    expect(await lane.get("a")).toBeUndefined();
  });

  it("on a lane with fair groups, an expired or canceled waiting job is never handed out", async () => {
    const { clock, lane } = await setup({ groups: {} });
    await lane.put([
      job("a", { group: "g", expiresAt: START + 100 }),
      job("b", { group: "g" }),
      job("c", { group: "h" }),
    ]);
    expect(await lane.cancel(["b"])).toEqual(["canceled"]);
    await clock.advance(100);
    const { jobs } = await lane.reserve(now);
    expect(jobs.map((j) => j.id)).toEqual(["c"]);
    expect(await lane.counts()).toMatchObject({ waiting: 0, active: 1, canceled: 1, expired: 1 });
  });
});

describe("maxJobs counts waiting, delayed and active jobs", () => {
  it("refuses a put when waiting + delayed + active reach maxJobs", async () => {
    const { lane } = await setup({}, { maxJobs: 3 });
    await lane.put([job("d", { runAt: START + 10_000 }), job("b"), job("c")]);
    const { jobs } = await lane.reserve({ ...now, limit: 1 });
    expect(await lane.counts()).toMatchObject({ waiting: 1, delayed: 1, active: 1 });
    const err = await errorOf(() => lane.put([job("x")]));
    expect(err).toMatchObject({ code: "LANE_FULL", limit: 3 });
    expect(await lane.ack([(jobs[0] as (typeof jobs)[0]).lock])).toEqual(["ok"]);
    expect(await lane.put([job("x")])).toEqual([{ id: "x", status: "created" }]);
  });
});

describe("failure groups and retention", () => {
  it("a succeeded job joins no failure group", async () => {
    const { lane } = await setup();
    await lane.put([job("a")]);
    const { jobs } = await lane.reserve(now);
    await lane.ack(jobs.map((j) => j.lock));
    expect(await lane.failures()).toEqual([]);
  });

  it("a retention rule for one state leaves the others alone", async () => {
    const { lane } = await setup({ retention: { succeeded: { maxCount: 1 } } });
    await lane.put([job("a"), job("b")]);
    const { jobs } = await lane.reserve(now);
    await lane.ack(jobs.map((j) => j.lock));
    expect((await lane.counts()).succeeded).toBe(1);
    expect(await lane.get("a")).toBeUndefined();
    expect((await lane.get("b"))?.state).toBe("succeeded");
  });

  for (const [name, rule] of [
    ["maxCount", { maxCount: 0 }],
    ["maxAgeMs", { maxAgeMs: 1 }],
  ] as const) {
    it(`retention by ${name} drops at most 256 jobs per pass`, async () => {
      const { adapter, clock, lane } = await setup({ historyLimit: 0 });
      await lane.put(Array.from({ length: 300 }, (_, i) => job(`j${i}`)));
      const { jobs } = await lane.reserve({ ...now, limit: 300 });
      expect(await lane.ack(jobs.map((j) => j.lock))).toHaveLength(300);
      await clock.advance(1);
      await adapter.lane("q", { maxStalls: 1, historyLimit: 0, retention: { succeeded: rule } });
      expect((await lane.counts()).succeeded).toBe(44);
      expect((await lane.counts()).succeeded).toBe(0);
    });
  }
});

describe("a job that leaves the lane leaves nothing behind", () => {
  it("deleting or retention-dropping a job with extras forgets its extras", async () => {
    const { lane } = await setup({ retention: { succeeded: { maxCount: 0 } } });
    const extras = (lane as unknown as { extras: { map: Map<unknown, unknown> } }).extras.map;
    await lane.put([job("a", { tags: ["x"] }), job("b", { tags: ["y"] })]);
    expect(extras.size).toBe(2);
    expect(await lane.delete(["a"])).toBe(1);
    expect(extras.size).toBe(1);
    const { jobs } = await lane.reserve(now);
    await lane.ack(jobs.map((j) => j.lock));
    expect(await lane.get("b")).toBeUndefined();
    expect(extras.size).toBe(0);
  });
});

describe("history", () => {
  it("keeps the last historyLimit events", async () => {
    const { lane } = await setup({ historyLimit: 2 });
    await lane.put([job("a")]);
    expect(await events(lane, "a")).toEqual(["published"]);
    const { jobs } = await lane.reserve(now);
    expect(await events(lane, "a")).toEqual(["published", "reserved"]);
    await lane.ack(jobs.map((j) => j.lock));
    expect(await events(lane, "a")).toEqual(["reserved", "succeeded"]);
  });
});

describe("day stats", () => {
  it("a new UTC day starts at midnight exactly", async () => {
    const { clock, lane } = await setup();
    await lane.put([job("a")]);
    await lane.reserve({ ...now, leaseMs: 2 * DAY_MS });
    await clock.setTime(START + DAY_MS - 1);
    await lane.put([job("b", { publishedAt: START + DAY_MS - 1 })]);
    await lane.reserve({ ...now, leaseMs: 2 * DAY_MS });
    await clock.advance(1);
    await lane.put([job("c", { publishedAt: START + DAY_MS })]);
    await lane.reserve(now);
    expect((await lane.stats("2026-01-01"))?.wait.count).toBe(2);
    expect((await lane.stats("2026-01-02"))?.wait.count).toBe(1);
  });

  it("keeps the stats of the last 400 days", async () => {
    const { clock, lane } = await setup({ historyLimit: 0 });
    for (let d = 0; d < 401; d++) {
      await clock.setTime(START + d * DAY_MS);
      await lane.put([job(`j${d}`, { publishedAt: START + d * DAY_MS })]);
      const { jobs } = await lane.reserve(now);
      await lane.ack(jobs.map((j) => j.lock));
    }
    expect(await lane.stats("2026-01-01")).toBeUndefined();
    expect((await lane.stats("2026-01-02"))?.wait.count).toBe(1);
    expect((await lane.stats("2027-02-05"))?.wait.count).toBe(1);
  });
});

describe("job info carries only the fields a job has", () => {
  it("a plain job: no optional keys, history entries without detail", async () => {
    const { lane } = await setup();
    await lane.put([job("a")]);
    const info = await lane.get("a");
    expect(Object.keys(info ?? {}).sort()).toEqual(
      [
        "attempt",
        "changedAt",
        "history",
        "id",
        "lane",
        "payload",
        "priority",
        "publishedAt",
        "runAt",
        "state",
        "task",
      ].sort(),
    );
    expect(info?.history?.map((e) => Object.keys(e))).toEqual([["at", "event"]]);
  });

  it("a tagged job: tags, and none of the other extras", async () => {
    const { lane } = await setup();
    await lane.put([job("a", { tags: ["x"] })]);
    const { jobs } = await lane.reserve(now);
    const info = await lane.get("a");
    expect(info?.tags).toEqual(["x"]);
    for (const key of [
      "expiresAt",
      "result",
      "progress",
      "logs",
      "logsDropped",
      "appData",
      "group",
    ]) {
      expect(Object.keys(info ?? {})).not.toContain(key);
    }
    await lane.ack(jobs.map((j) => j.lock));
    expect(Object.keys((await lane.get("a")) ?? {})).toContain("finishedAt");
  });
});

describe("reports", () => {
  it("stores progress alone: no log, no dropped count, one progress event", async () => {
    const { adapter, lane } = await setup();
    const seen: string[] = [];
    await adapter.subscribe((e) => {
      if (e.type === "progress") seen.push(e.jobId);
    });
    await lane.put([job("a")]);
    const { jobs } = await lane.reserve(now);
    const lock = (jobs[0] as (typeof jobs)[0]).lock;
    expect(await lane.report([{ lock }])).toEqual(["ok"]);
    expect(await lane.report([{ lock, logs: [], logsDropped: -3 }])).toEqual(["ok"]);
    // a caller outside core may send anything: a count that is not a number is ignored
    expect(await lane.report([{ lock, logsDropped: "5" as unknown as number }])).toEqual(["ok"]);
    await Promise.resolve();
    expect(seen).toEqual([]);
    expect(await lane.report([{ lock, progress: "1", logs: [], logsDropped: 0 }])).toEqual(["ok"]);
    await Promise.resolve();
    expect(seen).toEqual(["a"]);
    const info = await lane.get("a");
    expect(info?.progress).toBe("1");
    expect(Object.keys(info ?? {})).not.toContain("logs");
    expect(Object.keys(info ?? {})).not.toContain("logsDropped");
  });

  it("adds the worker's dropped count to the lines the log limit drops", async () => {
    const { lane } = await setup({ logLimit: 2 });
    await lane.put([job("a")]);
    const { jobs } = await lane.reserve(now);
    const lock = (jobs[0] as (typeof jobs)[0]).lock;
    const line = (message: string) => ({ at: START, attempt: 1, message });
    await lane.report([{ lock, progress: "1" }]);
    await lane.report([{ lock, logs: [line("a"), line("b")] }]);
    expect((await lane.get("a"))?.logsDropped).toBeUndefined();
    await lane.report([{ lock, logs: [line("c")], logsDropped: 4 }]);
    const info = await lane.get("a");
    expect(info?.logs?.map((l) => l.message)).toEqual(["b", "c"]);
    expect(info?.logsDropped).toBe(5);
  });
});

describe("leases", () => {
  it("a lease of 0 ms is valid; an infinite one is refused, naming leaseMs", async () => {
    const { lane } = await setup();
    await lane.put([job("a")]);
    for (const bad of [Number.POSITIVE_INFINITY, -1, Number.NaN]) {
      const err = await errorOf(() => lane.reserve({ ...now, leaseMs: bad }));
      expect(err).toMatchObject({ code: "CONFIG", field: "leaseMs" });
      expect(err.message).toMatch(/: must be a finite number of ms >= 0$/);
    }
    const { jobs } = await lane.reserve({ ...now, leaseMs: 0 });
    expect(jobs.map((j) => j.id)).toEqual(["a"]);
    const err = await errorOf(() =>
      lane.extend(
        jobs.map((j) => j.lock),
        Number.POSITIVE_INFINITY,
      ),
    );
    expect(err).toMatchObject({ code: "CONFIG", field: "leaseMs" });
  });
});

describe("schedule writes are checked", () => {
  it("refuses a bad id, data or nextAt, naming the field", async () => {
    const { lane } = await setup();
    const ok = { id: "s", data: "{}", nextAt: null };
    const cases: Array<[Record<string, unknown>, string, string]> = [
      [{ ...ok, id: "" }, "schedule.id", "must be a string of 1-128 characters"],
      [{ ...ok, id: "x".repeat(129) }, "schedule.id", "must be a string of 1-128 characters"],
      [{ ...ok, id: 7 }, "schedule.id", "must be a string of 1-128 characters"],
      [{ ...ok, data: 5 }, "schedule.data", "must be a string"],
      [{ ...ok, nextAt: Number.NaN }, "schedule.nextAt", "must be epoch ms or null"],
      [{ ...ok, nextAt: Number.POSITIVE_INFINITY }, "schedule.nextAt", "must be epoch ms or null"],
    ];
    for (const [record, field, problem] of cases) {
      const err = await errorOf(() => lane.putSchedule(record as never));
      expect(err).toMatchObject({ code: "CONFIG", field });
      expect(err.message).toMatch(new RegExp(`^Invalid option ${field} = .*: ${problem}$`));
    }
    expect((await lane.listSchedules()).records).toEqual([]);
    const long = "x".repeat(128);
    await lane.putSchedule({ id: long, data: "{}", nextAt: START });
    await lane.putSchedule({ ...ok, nextAt: null });
    expect((await lane.getSchedule(long))?.nextAt).toBe(START);
    expect((await lane.getSchedule("s"))?.nextAt).toBeNull();
  });
});

describe("timers: a long poll leaves none behind", () => {
  const poll = { limit: 10, leaseMs: 30_000, waitMs: 60_000 };

  it("a long poll on an empty lane arms only its own deadline", async () => {
    const { clock, lane } = await setup();
    const waiting = lane.reserve(poll);
    expect(clock.pending()).toBe(1);
    await lane.put([job("a")]);
    expect((await waiting).jobs.map((j) => j.id)).toEqual(["a"]);
    expect(clock.pending()).toBe(0);
  });

  it("one wake timer for the earliest due time, cleared when the poll is served", async () => {
    const { clock, lane } = await setup();
    await lane.put([job("late", { runAt: START + 500 })]);
    const waiting = lane.reserve(poll);
    expect(clock.pending()).toBe(2);
    await lane.put([job("soon", { runAt: START + 100 })]);
    expect(clock.pending()).toBe(2);
    await lane.put([job("now")]);
    expect((await waiting).jobs.map((j) => j.id)).toEqual(["now"]);
    expect(clock.pending()).toBe(0);
  });

  it("an aborted long poll clears its timers and its abort listener", async () => {
    const { clock, lane } = await setup();
    await lane.put([job("late", { runAt: START + 500 })]);
    const controller = new AbortController();
    const waiting = lane.reserve({ ...poll, signal: controller.signal });
    expect(clock.pending()).toBe(2);
    expect(getEventListeners(controller.signal, "abort")).toHaveLength(1);
    controller.abort();
    expect((await waiting).jobs).toEqual([]);
    expect(clock.pending()).toBe(0);
    expect(getEventListeners(controller.signal, "abort")).toHaveLength(0);
  });

  it("an aborted long poll leaves the wake timer of the polls still waiting", async () => {
    const { clock, lane } = await setup();
    await lane.put([job("late", { runAt: START + 500 })]);
    const controller = new AbortController();
    const aborted = lane.reserve({ ...poll, signal: controller.signal });
    let served: ReserveResult | undefined;
    void lane.reserve(poll).then((r) => {
      served = r;
    });
    expect(clock.pending()).toBe(3);
    controller.abort();
    expect((await aborted).jobs).toEqual([]);
    expect(clock.pending()).toBe(2);
    await clock.advance(500);
    expect(served?.jobs.map((j) => j.id)).toEqual(["late"]);
    expect(clock.pending()).toBe(0);
  });

  it("a served long poll takes its abort listener off the signal", async () => {
    const { lane } = await setup();
    const controller = new AbortController();
    const waiting = lane.reserve({ ...poll, signal: controller.signal });
    await lane.put([job("a")]);
    const result: ReserveResult = await waiting;
    expect(result.jobs.map((j) => j.id)).toEqual(["a"]);
    expect(getEventListeners(controller.signal, "abort")).toHaveLength(0);
  });

  it("close settles waiting polls with no jobs and clears every timer", async () => {
    const { adapter, clock, lane } = await setup();
    await lane.put([job("late", { runAt: START + 500 })]);
    const waiting = lane.reserve(poll);
    expect(clock.pending()).toBe(2);
    await adapter.close();
    expect((await waiting).jobs).toEqual([]);
    expect(clock.pending()).toBe(0);
  });
});
