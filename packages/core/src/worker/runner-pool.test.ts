import { describe, expect, it } from "vitest";
import { flushAsync } from "../clock.ts";
import { createRunnerPool } from "./runner-pool.ts";

/** A pool of `concurrency` whose items wait for their gate; what started, in order. */
function gatedPool(concurrency: number, priorities: number[]) {
  const started: string[] = [];
  const gates = new Map<string, () => void>();
  const errors: Array<[string, unknown]> = [];
  const pool = createRunnerPool<string>({
    concurrency,
    priorities,
    run: async (item) => {
      started.push(item);
      if (item.startsWith("throw")) throw new Error(item);
      await new Promise<void>((resolve) => gates.set(item, resolve));
    },
    onError: (item, error) => errors.push([item, error]),
  });
  const finish = async (item: string) => {
    gates.get(item)?.();
    for (let i = 0; i < 5; i++) await flushAsync();
  };
  return { pool, started, errors, finish };
}

describe("the runner pool", () => {
  it("runs at most concurrency items at once, the next as a slot frees", async () => {
    const { pool, started, finish } = gatedPool(2, [1]);
    for (const item of ["a", "b", "c", "d"]) pool.dispatch(pool.line(1), item);
    await flushAsync();
    expect(started).toEqual(["a", "b"]);
    expect(pool.active).toBe(4);
    const freed = pool.nextSlotFree();
    await finish("a");
    await freed;
    expect(started).toEqual(["a", "b", "c"]);
    expect(pool.active).toBe(3);
  });

  it("starts waiting items highest priority first, in arrival order within one", async () => {
    const { pool, started, finish } = gatedPool(1, [5, 100, 40, 5]);
    pool.dispatch(pool.line(5), "first");
    await flushAsync();
    for (const [p, item] of [
      [5, "low1"],
      [40, "mid"],
      [100, "high1"],
      [5, "low2"],
      [100, "high2"],
    ] as const) {
      pool.dispatch(pool.line(p), item);
    }
    for (const item of ["first", "high1", "high2", "mid", "low1"]) await finish(item);
    expect(started).toEqual(["first", "high1", "high2", "mid", "low1", "low2"]);
  });

  it("hands a thrown error to onError and goes on with the next item", async () => {
    const { pool, started, errors } = gatedPool(1, [1]);
    pool.dispatch(pool.line(1), "throw-1");
    pool.dispatch(pool.line(1), "next");
    for (let i = 0; i < 5; i++) await flushAsync();
    expect(started).toEqual(["throw-1", "next"]);
    expect(errors.map(([item, error]) => [item, (error as Error).message])).toEqual([
      ["throw-1", "throw-1"],
    ]);
    expect(pool.active).toBe(1);
  });

  it("refuses a priority it has no line for", () => {
    const { pool } = gatedPool(1, [1, 2]);
    expect(() => pool.line(3)).toThrow("no line for priority 3");
  });

  it("ends its parked runners at end, and is idle once the running items finish", async () => {
    const { pool, finish } = gatedPool(2, [1]);
    pool.dispatch(pool.line(1), "a");
    pool.dispatch(pool.line(1), "b");
    await flushAsync();
    await finish("a"); // its runner parks
    let idle = false;
    void pool.onIdle().then(() => {
      idle = true;
    });
    pool.end();
    await flushAsync();
    expect(idle).toBe(false);
    await finish("b");
    expect(idle).toBe(true);
    expect(pool.active).toBe(0);
  });
});
