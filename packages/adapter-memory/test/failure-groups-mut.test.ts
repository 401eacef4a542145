import type { JobError } from "@tasklane/core/adapter";
import { describe, expect, it } from "vitest";
import { FailureGroups, groupOf } from "../src/failure-groups.ts";
import { JobRecord } from "../src/job-record.ts";
import { START } from "./helpers.ts";

let seq = 0;
/** A failed record, finished at `failedAt`, with `error` (none when undefined). */
function failed(id: string, error: JobError | undefined, failedAt = START): JobRecord {
  const r = new JobRecord(
    { id, task: "t", payload: "{}", priority: 0, publishedAt: START },
    ++seq,
    "failed",
    START,
  );
  r.error = error;
  r.finishedAt = failedAt;
  return r;
}
const err = (name: string, message = "m", stack?: string): JobError => {
  const e: JobError = { name, message, reason: "error" };
  if (stack !== undefined) e.stack = stack;
  return e;
};

describe("FailureGroups", () => {
  it("a job without an error is in the group Error, its sample message empty, no stack", () => {
    const r = failed("a", undefined, START + 7);
    expect(groupOf(r)).toBe("Error");
    const groups = new FailureGroups();
    groups.join(r);
    expect(groups.list("q")).toStrictEqual([
      {
        lane: "q",
        group: "Error",
        count: 1,
        sample: { jobId: "a", task: "t", message: "", failedAt: START + 7 },
      },
    ]);
    groups.leave(r);
    expect(groups.list("q")).toEqual([]);
  });

  it("the sample carries the stack only when the error has one", () => {
    const groups = new FailureGroups();
    groups.join(failed("a", err("A", "boom", "at x")));
    groups.join(failed("b", err("B", "bang")));
    expect(groups.list("q")).toStrictEqual([
      {
        lane: "q",
        group: "A",
        count: 1,
        sample: { jobId: "a", task: "t", message: "boom", stack: "at x", failedAt: START },
      },
      {
        lane: "q",
        group: "B",
        count: 1,
        sample: { jobId: "b", task: "t", message: "bang", failedAt: START },
      },
    ]);
  });

  it("largest first, then by name", () => {
    const groups = new FailureGroups();
    groups.join(failed("c1", err("C")));
    groups.join(failed("a1", err("A")));
    groups.join(failed("b1", err("B")));
    expect(groups.list("q").map((g) => g.group)).toEqual(["A", "B", "C"]);
    groups.join(failed("c2", err("C")));
    expect(groups.list("q").map((g) => [g.group, g.count])).toEqual([
      ["C", 2],
      ["A", 1],
      ["B", 1],
    ]);
  });

  it("when the newest leaves, the sample is the newest of those left; an older one leaving keeps it", () => {
    const groups = new FailureGroups();
    const a = failed("a", err("E", "first"), START + 1);
    const b = failed("b", err("E", "second"), START + 2);
    const c = failed("c", err("E", "third"), START + 3);
    groups.join(a);
    groups.join(b);
    groups.join(c);
    groups.leave(c);
    expect(groups.list("q")).toEqual([
      {
        lane: "q",
        group: "E",
        count: 2,
        sample: { jobId: "b", task: "t", message: "second", failedAt: START + 2 },
      },
    ]);
    groups.leave(a);
    expect(groups.list("q")[0]?.sample.jobId).toBe("b");
    expect(groups.list("q")[0]?.count).toBe(1);
  });

  it("leaving is a no-op for a job in no group, or not in its group", () => {
    const groups = new FailureGroups();
    const a = failed("a", err("E"));
    groups.leave(a);
    groups.join(a);
    groups.leave(failed("x", err("E")));
    groups.leave(failed("y", err("Other")));
    expect(groups.list("q").map((g) => [g.group, g.count, g.sample.jobId])).toEqual([
      ["E", 1, "a"],
    ]);
  });
});
