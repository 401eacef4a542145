import { type JobError, LaneFullError, type ReservedJob } from "@tasklane/core/adapter";
import { describe, expect, it } from "vitest";
import { job, now, START, setup } from "./helpers.ts";

const err: JobError = { name: "Error", message: "boom", reason: "error" };
const ids = (jobs: ReservedJob[]) => jobs.map((j) => j.id);
const window = (key: string) =>
  ({ debounce: { key, until: START + 60_000, keep: "first" } }) as const;

describe("lane options re-applied", () => {
  it("turning fair groups on keeps the waiting jobs, now served by group", async () => {
    const { adapter, lane } = await setup();
    await lane.put([
      job("x1", { group: "x" }),
      job("x2", { group: "x" }),
      job("y1", { group: "y", priority: 1 }),
    ]);
    await adapter.lane("q", { maxStalls: 1, historyLimit: 50, groups: {} });
    expect(ids((await lane.reserve(now)).jobs)).toEqual(["y1", "x1", "x2"]);
  });

  it("re-applying fair groups to a grouped lane keeps its waiting jobs", async () => {
    const { adapter, lane } = await setup({ groups: {} });
    await lane.put([
      job("x1", { group: "x" }),
      job("x2", { group: "x" }),
      job("y1", { group: "y" }),
    ]);
    await adapter.lane("q", { maxStalls: 1, historyLimit: 50, groups: { concurrency: 5 } });
    expect(ids((await lane.reserve(now)).jobs)).toEqual(["x1", "y1", "x2"]);
  });

  it("turning fair groups off puts the waiting jobs back in lane order", async () => {
    const { adapter, lane } = await setup({ groups: {} });
    await lane.put([
      job("x1", { group: "x" }),
      job("x2", { group: "x" }),
      job("y1", { group: "y" }),
    ]);
    await adapter.lane("q", { maxStalls: 1, historyLimit: 50 });
    expect(ids((await lane.reserve(now)).jobs)).toEqual(["x1", "x2", "y1"]);
  });
});

describe("put", () => {
  it("reclaims expired leases before counting the lane's room", async () => {
    const { clock, lane } = await setup({ maxStalls: 0 }, { maxJobs: 1 });
    await lane.put([job("a")]);
    await lane.reserve({ ...now, leaseMs: 1000 });
    await clock.advance(1000);
    expect(await lane.put([job("b")])).toEqual([{ id: "b", status: "created" }]);
    expect((await lane.get("a"))?.state).toBe("failed");
  });

  it("a batch of duplicates fits a full lane; one new job among them does not", async () => {
    const { lane } = await setup({}, { maxJobs: 1 });
    await lane.put([job("a")]);
    expect(await lane.put([job("a"), job("a")])).toEqual([
      { id: "a", status: "duplicate" },
      { id: "a", status: "duplicate" },
    ]);
    await expect(lane.put([job("a"), job("c")])).rejects.toBeInstanceOf(LaneFullError);
    expect(await lane.counts()).toMatchObject({ waiting: 1 });
    expect(await lane.get("c")).toBeUndefined();
  });

  it("an empty tags list and a non-finite expiresAt store nothing extra", async () => {
    const { clock, lane } = await setup();
    expect(await lane.put([job("a", { tags: [] }), job("b", { expiresAt: Number.NaN })])).toEqual([
      { id: "a", status: "created" },
      { id: "b", status: "created" },
    ]);
    await clock.advance(1000);
    expect(ids((await lane.reserve(now)).jobs)).toEqual(["a", "b"]);
  });
});

describe("debounce windows", () => {
  it("a job handed out and retried no longer takes puts of its window", async () => {
    const { lane } = await setup();
    await lane.put([job("k1", window("w"))]);
    const { jobs } = await lane.reserve(now);
    await lane.nack([{ lock: (jobs[0] as ReservedJob).lock, runAt: START, error: err }]);
    expect((await lane.get("k1"))?.state).toBe("waiting");
    expect(await lane.put([job("k2", window("w"))])).toEqual([{ id: "k2", status: "created" }]);
    expect(await lane.put([job("k3", window("w"))])).toEqual([{ id: "k2", status: "debounced" }]);
  });

  it("a deleted job no longer takes puts of its window", async () => {
    const { lane } = await setup();
    await lane.put([job("k1", window("w"))]);
    expect(await lane.delete(["k1"])).toBe(1);
    expect(await lane.put([job("k2", window("w"))])).toEqual([{ id: "k2", status: "created" }]);
  });

  it("a canceled job no longer takes puts of its window", async () => {
    const { lane } = await setup();
    await lane.put([job("k1", window("w"))]);
    expect(await lane.cancel(["k1"])).toEqual(["canceled"]);
    expect(await lane.put([job("k2", window("w"))])).toEqual([{ id: "k2", status: "created" }]);
  });

  it("open windows survive the sweep that runs once there are many", async () => {
    const { lane } = await setup();
    const many = Array.from({ length: 1024 }, (_, i) => job(`j${i}`, window(`w${i}`)));
    expect((await lane.put(many)).every((r) => r.status === "created")).toBe(true);
    expect(await lane.put([job("again", window("w0")), job("more", window("w1023"))])).toEqual([
      { id: "j0", status: "debounced" },
      { id: "j1023", status: "debounced" },
    ]);
  });
});
