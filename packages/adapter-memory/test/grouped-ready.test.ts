import { createSeededRandom } from "@tasklane/core";
import type { NewJob } from "@tasklane/core/adapter";
import { describe, expect, it } from "vitest";
import { GroupedReady } from "../src/grouped-ready.ts";
import { JobRecord } from "../src/job-record.ts";
import { roomOf } from "./helpers.ts";

let seq = 0;
/** A waiting record of `group` (undefined: none), with a priority. */
function rec(id: string, group?: string, priority = 0): JobRecord {
  const job: NewJob = { id, task: "t", payload: "{}", priority, publishedAt: 0 };
  if (group !== undefined) job.group = group;
  return new JobRecord(job, ++seq, "waiting", 0);
}

const none = new Map<string, number>();
const popAll = (q: GroupedReady, active = none, limit = Number.POSITIVE_INFINITY) => {
  const out: string[] = [];
  for (let r = q.pop(roomOf(active, limit)); r !== undefined; r = q.pop(roomOf(active, limit)))
    out.push(r.id);
  return out;
};

describe("GroupedReady", () => {
  it("takes one job per group per turn, each group by priority then put order", () => {
    const q = new GroupedReady();
    for (const r of [
      rec("a1", "a"),
      rec("a2", "a", 5),
      rec("b1", "b"),
      rec("u1"),
      rec("a3", "a"),
    ]) {
      q.push(r);
    }
    expect(q.size).toBe(5);
    // a (its priority-5 job first), b, the ungrouped, then a's rest
    expect(popAll(q)).toEqual(["a2", "b1", "u1", "a1", "a3"]);
    expect(q.size).toBe(0);
  });

  it("a group that runs out leaves the rotation without skipping the next group's turn", () => {
    const q = new GroupedReady();
    for (const r of [
      rec("a1", "a"),
      rec("b1", "b"),
      rec("b2", "b"),
      rec("c1", "c"),
      rec("c2", "c"),
    ]) {
      q.push(r);
    }
    // a leaves after a1; b is next, then c: not c before b
    expect(popAll(q)).toEqual(["a1", "b1", "c1", "b2", "c2"]);
  });

  it("a group whose jobs were all removed is passed over and dropped", () => {
    const q = new GroupedReady();
    const a1 = rec("a1", "a");
    q.push(a1);
    q.push(rec("b1", "b"));
    q.remove(a1);
    expect(q.size).toBe(1);
    expect(popAll(q)).toEqual(["b1"]);
    // a new job of the dropped group joins the rotation again, at its end
    q.push(rec("b2", "b"));
    q.push(rec("a2", "a"));
    expect(popAll(q)).toEqual(["b2", "a2"]);
  });

  it("skips a group at its limit, and counts only what can be taken", () => {
    const q = new GroupedReady();
    for (const r of [rec("a1", "a"), rec("a2", "a"), rec("a3", "a"), rec("b1", "b")]) q.push(r);
    const active = new Map([["a", 2]]);
    expect(q.takeable(roomOf(active, 2))).toBe(1);
    expect(q.takeable(roomOf(active, 3))).toBe(2);
    expect(q.takeable(roomOf(active, Number.POSITIVE_INFINITY))).toBe(4);
    expect(q.pop(roomOf(active, 2))?.id).toBe("b1");
    expect(q.pop(roomOf(active, 2))).toBeUndefined();
    expect(q.size).toBe(3);
    active.set("a", 1);
    expect(q.pop(roomOf(active, 2))?.id).toBe("a1");
  });

  it("drain hands back every job and empties it", () => {
    const q = new GroupedReady();
    for (const r of [rec("a1", "a"), rec("b1", "b"), rec("a2", "a")]) q.push(r);
    expect(
      q
        .drain()
        .map((r) => r.id)
        .sort(),
    ).toEqual(["a1", "a2", "b1"]);
    expect(q.size).toBe(0);
    expect(q.pop(roomOf(none, Number.POSITIVE_INFINITY))).toBeUndefined();
  });

  it("hands out every job exactly once through random pushes, removes and pops", () => {
    const random = createSeededRandom(7);
    const q = new GroupedReady();
    const waiting = new Map<string, JobRecord>();
    const out = new Set<string>();
    let n = 0;
    for (let step = 0; step < 3_000; step++) {
      const r = random();
      if (r < 0.5) {
        const x = rec(`j${n++}`, `g${Math.floor(random() * 7)}`, Math.floor(random() * 3));
        q.push(x);
        waiting.set(x.id, x);
      } else if (r < 0.6 && waiting.size > 0) {
        const [id, x] = [...waiting][Math.floor(random() * waiting.size)] as [string, JobRecord];
        q.remove(x);
        waiting.delete(id);
      } else {
        const x = q.pop(roomOf(none, Number.POSITIVE_INFINITY));
        if (x !== undefined) {
          expect(out.has(x.id)).toBe(false);
          expect(waiting.has(x.id)).toBe(true);
          out.add(x.id);
          waiting.delete(x.id);
        }
      }
      expect(q.size).toBe(waiting.size);
    }
    expect(new Set(popAll(q))).toEqual(new Set(waiting.keys()));
  });
});
