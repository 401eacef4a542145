import { describe, expect, it } from "vitest";
import { createJobId } from "./job-id.ts";

const V4 = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

describe("createJobId", () => {
  it("makes canonical version 4 UUIDs, none repeated, across refills of its random pool", () => {
    const ids = Array.from({ length: 5_000 }, createJobId);
    for (const id of ids) expect(id).toMatch(V4);
    expect(new Set(ids).size).toBe(ids.length);
  });

  it("spreads every hex digit over the random positions", () => {
    // 122 random bits per id: each of the 30 free digit positions sees all 16 values
    const seen = Array.from({ length: 36 }, () => new Set<string>());
    for (let i = 0; i < 2_000; i++) {
      const id = createJobId();
      for (let k = 0; k < 36; k++) seen[k]?.add(id[k] as string);
    }
    const sizes = seen.map((s) => s.size);
    // dashes, the version digit and the variant digit are fixed or constrained
    expect(sizes.filter((n) => n === 16)).toHaveLength(30);
    expect([sizes[8], sizes[13], sizes[14], sizes[18], sizes[19], sizes[23]]).toEqual([
      1, 1, 1, 1, 4, 1,
    ]);
  });
});
