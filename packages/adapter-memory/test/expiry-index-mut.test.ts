import { createSeededRandom } from "@tasklane/core";
import { describe, expect, it } from "vitest";
import { ExpiryIndex } from "../src/expiry-index.ts";
import { JobRecord } from "../src/job-record.ts";
import { job, now, START, setup } from "./helpers.ts";

let seq = 0;
const rec = (id: string): JobRecord => new JobRecord(job(id), ++seq, "waiting", START);

describe("ExpiryIndex", () => {
  it("starts empty: nothing is due", () => {
    const index = new ExpiryIndex();
    expect(index.size).toBe(0);
    expect(index.popDue(Number.MAX_SAFE_INTEGER)).toBeUndefined();
  });

  it("an entry is due at its time, not before", () => {
    const index = new ExpiryIndex();
    const a = rec("a");
    index.push(START + 10, a);
    expect(index.size).toBe(1);
    expect(index.popDue(START + 9)).toBeUndefined();
    expect(index.size).toBe(1);
    expect(index.popDue(START + 10)).toBe(a);
    expect(index.size).toBe(0);
    expect(index.popDue(START + 10)).toBeUndefined();
  });

  it("pops in order of time, whatever the order of pushes", () => {
    const random = createSeededRandom(11);
    for (const n of [2, 3, 5, 8, 33, 300]) {
      const index = new ExpiryIndex();
      const entries: [number, JobRecord][] = [];
      // distinct times, shuffled
      const times = Array.from({ length: n }, (_, i) => START + i * 3);
      for (let i = times.length - 1; i > 0; i--) {
        const j = Math.floor(random() * (i + 1));
        [times[i], times[j]] = [times[j] as number, times[i] as number];
      }
      for (const at of times) {
        const r = rec(`j${at}`);
        entries.push([at, r]);
        index.push(at, r);
      }
      expect(index.size).toBe(n);
      entries.sort((x, y) => x[0] - y[0]);
      const out: JobRecord[] = [];
      for (let r = index.popDue(Number.MAX_SAFE_INTEGER); r !== undefined; ) {
        out.push(r);
        r = index.popDue(Number.MAX_SAFE_INTEGER);
      }
      expect(out).toEqual(entries.map((e) => e[1]));
      expect(out.map((r) => r.id)).toEqual(entries.map((e) => e[1].id));
    }
  });

  it("interleaved pushes and pops hand out the earliest due each time", () => {
    const random = createSeededRandom(5);
    const index = new ExpiryIndex();
    const model: { at: number; r: JobRecord }[] = [];
    let t = 0;
    for (let step = 0; step < 2_000; step++) {
      if (random() < 0.55) {
        const at = START + Math.floor(random() * 1e9) * 4 + (step % 4);
        const r = rec(`s${step}`);
        index.push(at, r);
        model.push({ at, r });
      } else {
        t = START + Math.floor(random() * 4e9);
        model.sort((x, y) => x.at - y.at);
        const first = model[0];
        const expected = first !== undefined && first.at <= t ? first.r : undefined;
        if (expected !== undefined) model.shift();
        expect(index.popDue(t)).toBe(expected);
      }
      expect(index.size).toBe(model.length);
    }
  });

  it("through the lane: jobs expire unstarted at their expiresAt, earliest first", async () => {
    const { clock, lane } = await setup();
    await lane.put([
      job("c", { expiresAt: START + 300 }),
      job("a", { expiresAt: START + 100 }),
      job("b", { expiresAt: START + 200 }),
      job("d"),
    ]);
    await clock.advance(200);
    expect(await lane.count({ state: "expired" })).toBe(2);
    expect((await lane.listPage({ state: "waiting" })).jobs.map((j) => j.id)).toEqual(["c", "d"]);
    const { jobs } = await lane.reserve(now);
    expect(jobs.map((j) => j.id)).toEqual(["c", "d"]);
  });
});
