import type { NewJob } from "@tasklane/core/adapter";
import { describe, expect, it } from "vitest";
import { Extras } from "../src/extras.ts";
import { JobRecord } from "../src/job-record.ts";
import { job, now, START, setup } from "./helpers.ts";

let seq = 0;
const rec = (id: string): JobRecord =>
  new JobRecord(
    { id, task: "t", payload: "{}", priority: 0, publishedAt: START },
    ++seq,
    "waiting",
    START,
  );
const newJob = (extra: Partial<NewJob>): NewJob => ({
  id: "j",
  task: "t",
  payload: "{}",
  priority: 0,
  publishedAt: START,
  ...extra,
});

describe("Extras", () => {
  it("a job without tags or a usable expiry stores nothing", () => {
    const extras = new Extras();
    const r = rec("a");
    for (const j of [
      newJob({}),
      newJob({ tags: [] }),
      newJob({ expiresAt: Number.POSITIVE_INFINITY }),
      newJob({ expiresAt: Number.NaN }),
      newJob({ tags: [], expiresAt: Number.POSITIVE_INFINITY }),
    ]) {
      expect(extras.fromJob(r, j)).toBeUndefined();
      expect(extras.get(r)).toBeUndefined();
    }
  });

  it("keeps a copy of the tags, and only a finite expiry", () => {
    const extras = new Extras();
    const tags = ["x", "y"];
    const a = rec("a");
    const x = extras.fromJob(a, newJob({ tags }));
    expect(x).toStrictEqual({
      tags: ["x", "y"],
      expiresAt: undefined,
      result: undefined,
      progress: undefined,
      logs: undefined,
      logsDropped: 0,
    });
    expect(x?.tags).not.toBe(tags);
    expect(extras.get(a)).toBe(x);
    const b = rec("b");
    expect(extras.fromJob(b, newJob({ tags: [], expiresAt: START + 5 }))).toMatchObject({
      tags: undefined,
      expiresAt: START + 5,
    });
    const c = rec("c");
    expect(
      extras.fromJob(c, newJob({ tags: ["z"], expiresAt: Number.POSITIVE_INFINITY })),
    ).toMatchObject({
      tags: ["z"],
      expiresAt: undefined,
    });
  });

  it("delete forgets a job's extras and leaves the others'", () => {
    const extras = new Extras();
    const a = rec("a");
    const b = rec("b");
    extras.of(a).result = "1";
    extras.of(b).result = "2";
    extras.delete(a);
    expect(extras.get(a)).toBeUndefined();
    expect(extras.of(a).result).toBeUndefined();
    expect(extras.get(b)?.result).toBe("2");
    extras.delete(a);
    extras.delete(b);
    expect(extras.get(b)).toBeUndefined();
  });

  it("move hands a record's extras to its copy; a record without any moves nothing", () => {
    const extras = new Extras();
    const a = rec("a");
    const copy = rec("a");
    const x = extras.of(a);
    x.progress = "50";
    expect(extras.move(a, copy)).toBe(x);
    expect(extras.get(copy)).toBe(x);
    expect(extras.get(a)).toBeUndefined();
    const b = rec("b");
    const bCopy = rec("b");
    expect(extras.move(b, bCopy)).toBeUndefined();
    expect(extras.get(bCopy)).toBeUndefined();
  });

  it("through the lane: a re-prioritised job keeps its tags and expiry, a finished job drops them", async () => {
    const { lane } = await setup();
    await lane.put([job("a", { tags: ["x"], expiresAt: START + 1_000 }), job("b")]);
    expect(await lane.setPriority(["a"], 5)).toEqual(["ok"]);
    expect(await lane.count({ tag: "x" })).toBe(1);
    const summary = (await lane.listPage({ state: "waiting", fields: "summary" })).jobs;
    expect(summary.map((s) => [s.id, s.priority, s.tags, s.expiresAt])).toEqual([
      ["a", 5, ["x"], START + 1_000],
      ["b", 0, undefined, undefined],
    ]);
    const { jobs } = await lane.reserve({ ...now, limit: 1 });
    expect(jobs.map((j) => j.id)).toEqual(["a"]);
  });
});
