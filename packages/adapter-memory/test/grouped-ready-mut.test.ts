import type { NewJob } from "@tasklane/core/adapter";
import { describe, expect, it } from "vitest";
import { GroupedReady } from "../src/grouped-ready.ts";
import { JobRecord } from "../src/job-record.ts";
import { job, now, roomOf, setup } from "./helpers.ts";

let seq = 0;
/** A waiting record of `group` (undefined: none). */
function rec(id: string, group?: string): JobRecord {
  const j: NewJob = { id, task: "t", payload: "{}", priority: 0, publishedAt: 0 };
  if (group !== undefined) j.group = group;
  return new JobRecord(j, ++seq, "waiting", 0);
}

const none = new Map<string, number>();
const popAll = (q: GroupedReady) => {
  const out: string[] = [];
  for (let r = q.pop(roomOf(none, 9)); r !== undefined; r = q.pop(roomOf(none, 9))) out.push(r.id);
  return out;
};

describe("GroupedReady, more", () => {
  it("jobs without a group are the group '': its active count limits them, remove finds them", () => {
    const q = new GroupedReady();
    const u1 = rec("u1");
    q.push(u1);
    q.push(rec("u2"));
    q.push(rec("a1", "a"));
    const active = new Map([["", 1]]);
    expect(q.takeable(roomOf(active, 1))).toBe(1);
    expect(q.pop(roomOf(active, 1))?.id).toBe("a1");
    expect(q.pop(roomOf(active, 1))).toBeUndefined();
    q.remove(u1);
    expect(q.size).toBe(1);
    expect(q.takeable(roomOf(none, 1))).toBe(1);
    expect(popAll(q)).toEqual(["u2"]);
  });

  it("removing a job of a group that has left the ring changes nothing", () => {
    const q = new GroupedReady();
    const a1 = rec("a1", "a");
    q.push(a1);
    q.push(rec("b1", "b"));
    expect(q.pop(roomOf(none, 9))?.id).toBe("a1");
    q.remove(rec("x1", "x"));
    expect(q.size).toBe(1);
    expect(popAll(q)).toEqual(["b1"]);
  });

  it("a group that ran out leaves the ring at once: back with a new job, it is served after the groups that joined meanwhile", () => {
    const q = new GroupedReady();
    for (const r of [
      rec("b1", "b"),
      rec("a1", "a"),
      rec("c1", "c"),
      rec("b2", "b"),
      rec("c2", "c"),
    ]) {
      q.push(r);
    }
    expect(q.pop(roomOf(none, 9))?.id).toBe("b1");
    expect(q.pop(roomOf(none, 9))?.id).toBe("a1"); // a's last: a leaves
    q.push(rec("d1", "d"));
    q.push(rec("a2", "a"));
    expect(popAll(q)).toEqual(["c1", "d1", "a2", "b2", "c2"]);
  });

  it("after drain, a group seen before takes its turn again", () => {
    const q = new GroupedReady();
    q.push(rec("a1", "a"));
    q.push(rec("b1", "b"));
    expect(q.drain()).toHaveLength(2);
    q.push(rec("a2", "a"));
    q.push(rec("b2", "b"));
    expect(q.size).toBe(2);
    expect(popAll(q)).toEqual(["a2", "b2"]);
  });

  it("through the lane: a lane reconfigured without groups and back serves every job", async () => {
    const { adapter, lane } = await setup({ groups: { concurrency: 1 } });
    await lane.put([
      job("a1", { group: "a" }),
      job("a2", { group: "a" }),
      job("b1", { group: "b" }),
    ]);
    expect((await lane.reserve(now)).jobs.map((j) => j.id)).toEqual(["a1", "b1"]);
    const plain = await adapter.lane("q", { maxStalls: 1, historyLimit: 50 });
    expect(plain).toBe(lane);
    await lane.put([job("a3", { group: "a" })]);
    await adapter.lane("q", { maxStalls: 1, historyLimit: 50, groups: { concurrency: 1 } });
    await lane.put([job("c1", { group: "c" })]);
    expect((await lane.reserve(now)).jobs.map((j) => j.id)).toEqual(["c1"]);
  });
});
