import { describe, expect, it } from "vitest";
import { JobRecord } from "../src/job-record.ts";
import { LeaseIndex } from "../src/lease-index.ts";
import { job, START } from "./helpers.ts";

let seq = 0;
function active(id: string, expiresAt: number): JobRecord {
  const r = new JobRecord(job(id), ++seq, "active", START);
  r.expiresAt = expiresAt;
  return r;
}

describe("LeaseIndex", () => {
  it("pops from the heap when the list is empty", () => {
    const index = new LeaseIndex();
    const a = active("a", START + 100);
    const b = active("b", START + 50); // earlier than the list's tail: into the heap
    index.add(a);
    index.add(b);
    index.remove(a);
    expect(index.size).toBe(1);
    expect(index.peekKey()).toBe(START + 50);
    expect(index.pop()).toBe(b);
    expect(index.pop()).toBeUndefined();
    expect(index.size).toBe(0);
  });

  it("pops the earlier of the list's head and the heap's top", () => {
    const index = new LeaseIndex();
    const recs = [
      active("a", START + 100),
      active("b", START + 200),
      active("c", START + 50),
      active("d", START + 150),
      active("e", START + 300),
    ];
    for (const r of recs) index.add(r);
    const out: string[] = [];
    for (let r = index.pop(); r !== undefined; r = index.pop()) out.push(r.id);
    expect(out).toEqual(["c", "a", "d", "b", "e"]);
  });
});
