import { describe, expect, it } from "vitest";
import { JobRecord } from "../src/job-record.ts";
import { job, now, START, setup } from "./helpers.ts";

describe("JobRecord", () => {
  it("a priority that is no finite number is 0", () => {
    for (const priority of [Number.NaN, Number.POSITIVE_INFINITY, Number.NEGATIVE_INFINITY]) {
      expect(new JobRecord(job("a", { priority }), 1, "waiting", START).priority).toBe(0);
    }
    expect(new JobRecord(job("a", { priority: -3 }), 1, "waiting", START).priority).toBe(-3);
  });

  it("copy keeps appData, traceContext and group", () => {
    const r = new JobRecord(
      job("a", { appData: '{"k":1}', traceContext: "tc", group: "g", priority: 4 }),
      1,
      "delayed",
      START + 5,
    );
    r.attempt = 2;
    const c = JobRecord.copy(r, 9, "waiting", START + 7);
    expect([c.id, c.task, c.payload, c.appData, c.traceContext, c.group, c.priority]).toEqual([
      "a",
      "t",
      '{"id":"a"}',
      '{"k":1}',
      "tc",
      "g",
      4,
    ]);
    expect([c.seq, c.state, c.dueAt, c.attempt]).toEqual([9, "waiting", START + 7, 2]);
    const bare = JobRecord.copy(new JobRecord(job("b"), 2, "waiting", START), 3, "waiting", START);
    expect([bare.appData, bare.traceContext, bare.group]).toEqual([
      undefined,
      undefined,
      undefined,
    ]);
  });

  it("through the lane: a moved job keeps its appData and group", async () => {
    const { adapter, lane } = await setup();
    const other = await adapter.lane("other", { maxStalls: 1, historyLimit: 50 });
    await lane.put([job("a", { appData: '{"k":1}', group: "g", runAt: START + 100 })]);
    expect(await lane.setPriority(["a"], 3)).toEqual(["ok"]);
    expect(await lane.move(["a"], other)).toEqual(["moved"]);
    const info = await other.get("a");
    expect([info?.appData, info?.group, info?.priority]).toEqual(['{"k":1}', "g", 3]);
    expect(await other.promote(["a"])).toEqual(["ok"]);
    const { jobs } = await other.reserve(now);
    expect(jobs.map((j) => [j.id, j.appData])).toEqual([["a", '{"k":1}']]);
  });
});
