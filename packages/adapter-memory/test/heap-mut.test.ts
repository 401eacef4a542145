import type { NewJob } from "@tasklane/core/adapter";
import { describe, expect, it } from "vitest";
import { RecordHeap } from "../src/heap.ts";
import { JobRecord } from "../src/job-record.ts";

const base: NewJob = { id: "", task: "t", payload: "{}", priority: 0, publishedAt: 0 };

function record(i: number): JobRecord {
  return new JobRecord({ ...base, id: `j${i}` }, i, "waiting", 0);
}

/** The heap's slots: in use (stale ones included), stale, and the record array. */
function slots(heap: RecordHeap) {
  return heap as unknown as { n: number; stale: number; recs: (JobRecord | undefined)[] };
}

function drain(heap: RecordHeap): string[] {
  const out: string[] = [];
  for (let rec = heap.pop(); rec !== undefined; rec = heap.pop()) out.push(rec.id);
  return out;
}

describe("RecordHeap (lazy): compaction bounds the stale slots", () => {
  it("compacts on the remove that makes stale entries more than 64 and more than the live ones", () => {
    const heap = new RecordHeap(false);
    const recs = Array.from({ length: 200 }, (_, i) => record(i));
    for (const rec of recs) heap.push(rec, rec.seq, 0, 0);
    // removes from the far end: never the top, so only compaction drops them
    for (let i = 199; i >= 100; i--) heap.remove(recs[i] as JobRecord);
    expect(slots(heap)).toMatchObject({ n: 200, stale: 100 });
    heap.remove(recs[99] as JobRecord);
    expect(slots(heap)).toMatchObject({ n: 99, stale: 0 });
    // a compacted heap holds no removed record
    const held = slots(heap).recs.filter((r) => r !== undefined);
    expect(held).toHaveLength(99);
    expect(held.every((r) => r.seq < 99)).toBe(true);
    expect(heap.size).toBe(99);
    expect(drain(heap)).toEqual(recs.slice(0, 99).map((r) => r.id));
  });

  it("never compacts for 64 stale entries or fewer", () => {
    const heap = new RecordHeap(false);
    const recs = Array.from({ length: 100 }, (_, i) => record(i));
    for (const rec of recs) heap.push(rec, rec.seq, 0, 0);
    for (let i = 99; i >= 36; i--) heap.remove(recs[i] as JobRecord);
    expect(slots(heap)).toMatchObject({ n: 100, stale: 64 });
    heap.remove(recs[35] as JobRecord);
    expect(slots(heap)).toMatchObject({ n: 35, stale: 0 });
    expect(drain(heap)).toEqual(recs.slice(0, 35).map((r) => r.id));
  });

  it("a small heap keeps its stale entries until they reach the top", () => {
    const heap = new RecordHeap(false);
    const recs = Array.from({ length: 10 }, (_, i) => record(i));
    for (const rec of recs) heap.push(rec, rec.seq, 0, 0);
    for (let i = 9; i >= 3; i--) heap.remove(recs[i] as JobRecord);
    expect(slots(heap)).toMatchObject({ n: 10, stale: 7 });
    expect(drain(heap)).toEqual(["j0", "j1", "j2"]);
    expect(slots(heap)).toMatchObject({ n: 0, stale: 0 });
  });

  it("compaction re-heapifies: an odd count of survivors in scrambled order pops sorted", () => {
    const heap = new RecordHeap(false);
    // keys descending with the push order, so survivors sit far from heap order
    const recs = Array.from({ length: 300 }, (_, i) => record(i));
    for (const rec of recs) heap.push(rec, 1000 - rec.seq, rec.seq % 7, rec.seq);
    const kept = recs.filter((r) => r.seq % 3 === 1);
    for (const rec of recs) if (rec.seq % 3 !== 1) heap.remove(rec);
    expect(slots(heap).stale).toBeLessThan(101);
    const expected = [...kept].sort((a, b) => b.seq - a.seq).map((r) => r.id);
    expect(drain(heap)).toEqual(expected);
  });
});

describe("RecordHeap (tracked): remove and rekey only touch their own records", () => {
  it("remove and rekey of a record of another heap change nothing", () => {
    const one = new RecordHeap(true);
    const other = new RecordHeap(true);
    const [a, b, c] = [record(0), record(1), record(2)];
    one.push(a, 1, 0, 0);
    one.push(b, 2, 0, 0);
    other.push(c, 0, 0, 0); // c.heapIndex is 0: a valid slot of `one`, holding a
    one.remove(c);
    one.rekey(c, 9, 0, 0);
    expect(one.size).toBe(2);
    expect(other.size).toBe(1);
    expect(drain(one)).toEqual(["j0", "j1"]);
    expect(drain(other)).toEqual(["j2"]);
  });

  it("a popped record is no longer removable or re-keyable", () => {
    const heap = new RecordHeap(true);
    const recs = [record(0), record(1), record(2)];
    for (const rec of recs) heap.push(rec, rec.seq, 0, 0);
    const top = heap.pop() as JobRecord;
    heap.remove(top);
    heap.rekey(top, -1, 0, 0);
    expect(heap.size).toBe(2);
    expect(drain(heap)).toEqual(["j1", "j2"]);
  });

  it("a rekey sifting down stops at the last slot, not at the stale key past it", () => {
    const heap = new RecordHeap(true);
    const recs = [record(0), record(1), record(2), record(3)];
    for (const rec of recs) heap.push(rec, rec.seq + 1, 0, 0);
    expect(heap.pop()?.id).toBe("j0");
    // three slots left, j3 (key 4) at slot 1; slot 3 still holds j3's old key 4
    heap.rekey(recs[3] as JobRecord, 100, 0, 0);
    expect(heap.size).toBe(3);
    expect(drain(heap)).toEqual(["j1", "j2", "j3"]);
  });
});
