import { ConfigError, LaneFullError } from "@tasklane/core/adapter";
import { describe, expect, it } from "vitest";
import { createMemoryAdapter } from "../src/index.ts";
import { job, now, START, setup } from "./helpers.ts";

describe("putFlow on memory", () => {
  it("refuses a lane of another adapter, and a bad onFailure, with a ConfigError naming it", async () => {
    const { adapter, lane } = await setup();
    const foreign = await createMemoryAdapter().lane("q", { maxStalls: 1, historyLimit: 1 });
    const error = await adapter.putFlow([{ lane: foreign, job: job("a") }]).catch((e) => e);
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as ConfigError).field).toBe("items[0].lane");
    const bad = await adapter
      .putFlow([
        { lane, job: job("c") },
        {
          lane,
          job: job("p", { dependsOn: [{ lane: "q", id: "c", onFailure: "later" as never }] }),
        },
      ])
      .catch((e) => e);
    expect((bad as ConfigError).field).toBe("items[1].job.dependsOn[0].onFailure");
    expect(await lane.counts()).toMatchObject({ waiting: 0, blocked: 0 });
  });

  it("a dependency on a later item is missing (children first: no cycles)", async () => {
    const { adapter, lane } = await setup();
    expect(
      await adapter.putFlow([
        { lane, job: job("p", { dependsOn: [{ lane: "q", id: "c", onFailure: "fail" }] }) },
        { lane, job: job("c") },
      ]),
    ).toEqual({ status: "missing", lane: "q", id: "c" });
    expect(await lane.counts()).toMatchObject({ waiting: 0, blocked: 0 });
  });

  it("a flow that does not fit a lane's maxJobs is LaneFullError, nothing written; blocked jobs count", async () => {
    const { adapter, lane } = await setup({}, { maxJobs: 3 });
    const other = await adapter.lane("r", { maxStalls: 1, historyLimit: 1 });
    await lane.put([job("x")]);
    const flow = (suffix: string) => [
      { lane: other, job: job(`c${suffix}`) },
      { lane, job: job(`a${suffix}`) },
      {
        lane,
        job: job(`p${suffix}`, {
          dependsOn: [
            { lane: "r", id: `c${suffix}`, onFailure: "fail" as const },
            { lane: "q", id: `a${suffix}`, onFailure: "fail" as const },
          ],
        }),
      },
    ];
    expect(await adapter.putFlow(flow("1"))).toEqual({ status: "created" });
    // q holds x, a1 and the blocked p1: full
    await expect(adapter.putFlow(flow("2"))).rejects.toBeInstanceOf(LaneFullError);
    expect(await other.counts()).toMatchObject({ waiting: 1 });
    expect(await lane.counts()).toMatchObject({ waiting: 2, blocked: 1 });
  });

  it("a blocked job's priority changes in place; promote answers wrong_state", async () => {
    const { adapter, lane } = await setup();
    await adapter.putFlow([
      { lane, job: job("c") },
      { lane, job: job("p", { dependsOn: [{ lane: "q", id: "c", onFailure: "fail" }] }) },
    ]);
    expect(await lane.setPriority(["p"], 7)).toEqual(["ok"]);
    expect(await lane.promote(["p"])).toEqual(["wrong_state"]);
    const [c] = (await lane.reserve(now)).jobs;
    await lane.ack([c?.lock as never]);
    expect(await lane.get("p")).toMatchObject({ state: "waiting", priority: 7 });
  });

  it("a dependency that expired before it was depended upon fails the job at once", async () => {
    const { adapter, clock, lane } = await setup();
    await lane.put([job("e", { expiresAt: START + 1_000 })]);
    await clock.advance(1_000);
    expect(await lane.get("e")).toMatchObject({ state: "expired" });
    expect(
      await adapter.putFlow([
        { lane, job: job("p", { dependsOn: [{ lane: "q", id: "e", onFailure: "fail" }] }) },
      ]),
    ).toEqual({ status: "created" });
    const parent = await lane.get("p");
    expect(parent).toMatchObject({ state: "failed", error: { reason: "dependency_failed" } });
    expect(parent?.dependencies?.map((d) => d.state)).toEqual(["expired"]);
  });

  it("time is applied in a dependency's own lane first: a lease that ran out there is seen", async () => {
    // The dependency's lane holds no other call between its lease's end and the flow:
    // without that lane's step of time the job would still look active, and the flow's
    // job blocked on it.
    const { adapter, clock, lane } = await setup({ maxStalls: 0 });
    const deps = await adapter.lane("d", { maxStalls: 0, historyLimit: 10 });
    await deps.put([job("c")]);
    await deps.reserve({ ...now, leaseMs: 1_000 });
    await clock.advance(1_000);
    await adapter.putFlow([
      { lane, job: job("p", { dependsOn: [{ lane: "d", id: "c", onFailure: "fail" }] }) },
    ]);
    expect(await lane.get("p")).toMatchObject({
      state: "failed",
      dependencies: [{ lane: "d", id: "c", onFailure: "fail", state: "failed", task: "t" }],
    });
  });
});
