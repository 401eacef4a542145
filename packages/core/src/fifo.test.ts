import { describe, expect, it } from "vitest";
import { Fifo } from "./fifo.ts";

describe("Fifo", () => {
  it("hands items back in the order they came, across compactions", () => {
    const fifo = new Fifo<number>();
    const out: number[] = [];
    let next = 0;
    // Interleave pushes and shifts so the head passes the compaction threshold many times.
    for (let round = 0; round < 50; round++) {
      for (let i = 0; i < 100; i++) fifo.push(next++);
      for (let i = 0; i < 60; i++) out.push(fifo.shift() as number);
    }
    expect(fifo.size).toBe(next - out.length);
    for (let item = fifo.shift(); item !== undefined; item = fifo.shift()) out.push(item);
    expect(out).toEqual(Array.from({ length: next }, (_, i) => i));
    expect(fifo.size).toBe(0);
    expect(fifo.shift()).toBeUndefined();
  });
});
