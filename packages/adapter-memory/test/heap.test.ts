import { createSeededRandom } from "@tasklane/core";
import type { NewJob } from "@tasklane/core/adapter";
import { describe, expect, it } from "vitest";
import { IN_LAZY_HEAP, NOT_IN_HEAP, RecordHeap } from "../src/heap.ts";
import { JobRecord } from "../src/job-record.ts";
import { LeaseIndex } from "../src/lease-index.ts";

/** Seeded, so a failure replays. */
const rng = createSeededRandom;

const base: NewJob = { id: "", task: "t", payload: "{}", priority: 0, publishedAt: 0 };
type Key = [number, number, number];

function compare(a: Key, b: Key): number {
  return a[0] - b[0] || a[1] - b[1] || a[2] - b[2];
}

describe.each([true, false])("RecordHeap (tracked: %s)", (tracked) => {
  it("pops in key order through random pushes, pops, removes and re-keys", () => {
    const random = rng(tracked ? 1 : 2);
    const heap = new RecordHeap(tracked);
    const live = new Map<JobRecord, Key>();
    let seq = 0;
    for (let step = 0; step < 4_000; step++) {
      const r = random();
      if (r < 0.5 || live.size === 0) {
        const rec = new JobRecord({ ...base, id: `j${seq}` }, seq, "waiting", 0);
        // Few distinct values, so ties on the first and second keys are common.
        const key: Key = [Math.floor(random() * 4), Math.floor(random() * 8), seq++];
        heap.push(rec, ...key);
        live.set(rec, key);
      } else if (r < 0.75) {
        const rec = heap.pop() as JobRecord;
        const best = [...live.values()].sort(compare)[0] as Key;
        expect(live.get(rec)).toEqual(best);
        expect(rec.heapIndex).toBe(NOT_IN_HEAP);
        live.delete(rec);
      } else {
        const victims = [...live.keys()];
        const rec = victims[Math.floor(random() * victims.length)] as JobRecord;
        if (tracked && r < 0.85) {
          const key: Key = [Math.floor(random() * 4), Math.floor(random() * 8), seq++];
          heap.rekey(rec, ...key);
          live.set(rec, key);
        } else {
          heap.remove(rec);
          live.delete(rec);
        }
      }
      expect(heap.size).toBe(live.size);
    }
    const rest: Key[] = [];
    for (let rec = heap.pop(); rec !== undefined; rec = heap.pop()) rest.push(live.get(rec) as Key);
    expect(rest).toEqual([...live.values()].sort(compare));
    expect(heap.peekKey()).toBe(Number.POSITIVE_INFINITY);
  });
});

describe("RecordHeap (lazy)", () => {
  it("compacts once stale entries outnumber live ones, keeping the order", () => {
    const heap = new RecordHeap(false);
    const recs = Array.from({ length: 1000 }, (_, i) => {
      const rec = new JobRecord({ ...base, id: `j${i}` }, i, "waiting", 0);
      heap.push(rec, 1000 - i, 0, i);
      return rec;
    });
    expect(recs[0]?.heapIndex).toBe(IN_LAZY_HEAP);
    for (let i = 0; i < 1000; i += 3) heap.remove(recs[i] as JobRecord);
    heap.remove(recs[0] as JobRecord); // twice: no effect
    expect(heap.size).toBe(666);
    const popped: number[] = [];
    for (let rec = heap.pop(); rec !== undefined; rec = heap.pop()) popped.push(rec.seq);
    const expected = recs.filter((_, i) => i % 3 !== 0).map((r) => r.seq);
    expect(popped).toEqual(expected.reverse());
  });
});

describe("LeaseIndex", () => {
  it("pops in expiry order through in-order and out-of-order adds, removes and updates", () => {
    const random = rng(3);
    const index = new LeaseIndex();
    const live = new Set<JobRecord>();
    let now = 0;
    for (let step = 0; step < 4_000; step++) {
      const r = random();
      now += Math.floor(random() * 3);
      if (r < 0.45 || live.size === 0) {
        const rec = new JobRecord({ ...base, id: `j${step}` }, step, "active", 0);
        // Mostly one lease length (in order), sometimes a shorter one (out of order).
        rec.expiresAt = now + (random() < 0.8 ? 100 : Math.floor(random() * 100));
        index.add(rec);
        live.add(rec);
      } else if (r < 0.7) {
        const rec = index.pop() as JobRecord;
        const min = Math.min(...[...live].map((x) => x.expiresAt));
        expect(rec.expiresAt).toBe(min);
        live.delete(rec);
      } else {
        const all = [...live];
        const rec = all[Math.floor(random() * all.length)] as JobRecord;
        if (r < 0.85) {
          index.remove(rec);
          live.delete(rec);
        } else {
          rec.expiresAt = now + Math.floor(random() * 150);
          index.update(rec);
        }
      }
      expect(index.size).toBe(live.size);
      const min =
        live.size === 0 ? Number.POSITIVE_INFINITY : Math.min(...[...live].map((x) => x.expiresAt));
      expect(index.peekKey()).toBe(min);
    }
  });
});
