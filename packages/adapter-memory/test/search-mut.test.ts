import { ConfigError, JOB_STATES, type JobState, type NewJob } from "@tasklane/core/adapter";
import { describe, expect, it } from "vitest";
import type { JobExtra } from "../src/extras.ts";
import { JobRecord, ListNode } from "../src/job-record.ts";
import {
  changedAtOf,
  decodeCursor,
  encodeCursor,
  matches,
  ParkedCursors,
  statesOf,
  summaryOf,
} from "../src/search.ts";
import { StateList } from "../src/state-list.ts";
import { job, now, START, setup } from "./helpers.ts";

/** A record in `state`, due at START + 10, reserved at START + 20, finished at START + 30. */
function rec(state: JobState, extra: Partial<NewJob> = {}): JobRecord {
  const r = new JobRecord(
    { id: "r", task: "t", payload: "{}", priority: 2, publishedAt: START, ...extra },
    1,
    state,
    START + 10,
  );
  r.reservedAt = START + 20;
  return r;
}

const extraOf = (x: Partial<JobExtra>): JobExtra => ({
  tags: undefined,
  expiresAt: undefined,
  result: undefined,
  progress: undefined,
  logs: undefined,
  logsDropped: 0,
  ...x,
});

function thrown(f: () => unknown): unknown {
  try {
    f();
  } catch (e) {
    return e;
  }
  throw new Error("did not throw");
}

describe("changedAtOf: when a job entered its current state", () => {
  it("waiting: when it became due, whatever else the record holds", () => {
    const r = rec("waiting");
    r.finishedAt = START + 30;
    expect(changedAtOf(r)).toBe(START + 10);
  });

  it("delayed and active: reservedAt (when it became delayed / its reservation began)", () => {
    expect(changedAtOf(rec("delayed"))).toBe(START + 20);
    expect(changedAtOf(rec("active"))).toBe(START + 20);
  });

  it("finished states: finishedAt, else dueAt", () => {
    for (const state of ["succeeded", "failed", "canceled", "expired"] as const) {
      const r = rec(state);
      expect(changedAtOf(r)).toBe(START + 10);
      r.finishedAt = START + 30;
      expect(changedAtOf(r)).toBe(START + 30);
    }
  });

  it("through listPage: an active job's changedAt is its reservation, a succeeded one's its ack", async () => {
    const { clock, lane } = await setup();
    await lane.put([job("a"), job("b")]);
    await clock.advance(100);
    const { jobs } = await lane.reserve({ ...now, limit: 2 });
    await clock.advance(50);
    expect(await lane.ack([(jobs[0] as (typeof jobs)[number]).lock])).toEqual(["ok"]);
    const page = await lane.listPage({ fields: "summary" });
    expect(page.jobs.map((j) => [j.id, j.state, j.runAt, j.changedAt, j.finishedAt])).toEqual([
      ["b", "active", START, START + 100, undefined],
      ["a", "succeeded", START, START + 150, START + 150],
    ]);
  });
});

describe("matches", () => {
  it("a tag filter on a job whose extras hold no tags (only an expiry) is no match", () => {
    const r = rec("waiting");
    expect(matches(r, { tag: "x" }, extraOf({ expiresAt: START + 5 }))).toBe(false);
    expect(matches(r, { tag: "x" }, undefined)).toBe(false);
    expect(matches(r, { tag: "x" }, extraOf({ tags: ["y", "x"] }))).toBe(true);
  });

  it("since is inclusive and until exclusive, each alone or both", () => {
    const r = rec("waiting"); // changedAt START + 10
    const at = START + 10;
    expect(matches(r, { since: at }, undefined)).toBe(true);
    expect(matches(r, { since: at + 1 }, undefined)).toBe(false);
    expect(matches(r, { until: at + 1 }, undefined)).toBe(true);
    expect(matches(r, { until: at }, undefined)).toBe(false);
    expect(matches(r, { since: at, until: at + 1 }, undefined)).toBe(true);
    expect(matches(r, { since: at - 5, until: at }, undefined)).toBe(false);
  });

  it("since and until through count and listPage", async () => {
    const { clock, lane } = await setup();
    await lane.put([job("a")]);
    await clock.advance(10);
    await lane.put([job("b")]);
    await clock.advance(10);
    await lane.put([job("c")]);
    const ids = async (f: { since?: number; until?: number }) =>
      (await lane.listPage({ ...f, fields: "summary" })).jobs.map((j) => j.id);
    expect(await ids({ since: START + 10 })).toEqual(["b", "c"]);
    expect(await ids({ until: START + 10 })).toEqual(["a"]);
    expect(await ids({ since: START + 10, until: START + 20 })).toEqual(["b"]);
    expect(await lane.count({ since: START + 10 })).toBe(2);
    expect(await lane.count({ until: START + 20 })).toBe(2);
  });
});

describe("statesOf", () => {
  it("every state in listing order without a state, the one state with one", () => {
    expect(statesOf({})).toEqual(JOB_STATES);
    expect(statesOf({ state: "failed" })).toEqual(["failed"]);
  });

  it("a filter that is no object is a ConfigError naming `filter`", () => {
    for (const bad of [null, "waiting", 3, undefined]) {
      const e = thrown(() => statesOf(bad as never));
      expect(e).toBeInstanceOf(ConfigError);
      expect((e as ConfigError).field).toBe("filter");
      expect((e as ConfigError).value).toBe(bad);
      expect((e as ConfigError).message).toMatch(/: must be an object$/);
    }
  });

  it("an unknown state is a ConfigError listing the states", () => {
    const e = thrown(() => statesOf({ state: "done" as JobState }));
    expect(e).toBeInstanceOf(ConfigError);
    expect((e as ConfigError).field).toBe("filter.state");
    expect((e as ConfigError).message).toBe(
      `Invalid option filter.state = "done": must be one of ${JOB_STATES.join(", ")}`,
    );
  });
});

describe("cursors", () => {
  it("decode reads back what encode wrote", () => {
    const p = { state: 2, after: 17, bound: 40, handle: 3 };
    expect(encodeCursor(p)).toBe("m1.2.17.40.3");
    expect(decodeCursor(encodeCursor(p))).toEqual(p);
    expect(decodeCursor("m1.0.0.0.0")).toEqual({ state: 0, after: 0, bound: 0, handle: 0 });
  });

  it("anything else is a ConfigError naming `cursor`", () => {
    for (const bad of [
      "x1.0.0.0.0",
      "m2.0.0.0.0",
      "m1.0.0.0",
      "m1.0.0.0.0.0",
      "m1.0.0.0.-1",
      "m1.-1.0.0.0",
      "m1.0.1.5.1.5",
      "m1.0.0.0.1.5",
      "m1.0.0.0.x",
      "m1.0.0.0.1e300",
      "",
      42,
      undefined,
    ]) {
      const e = thrown(() => decodeCursor(bad as string));
      expect(e, String(bad)).toBeInstanceOf(ConfigError);
      expect((e as ConfigError).field).toBe("cursor");
      expect((e as ConfigError).message).toMatch(/: is not a cursor of this lane's listPage$/);
    }
  });

  it("listPage with a foreign cursor is a ConfigError", async () => {
    const { lane } = await setup();
    await expect(lane.listPage({}, "m1.0.0.0.-1")).rejects.toThrow(
      `Invalid option cursor = "m1.0.0.0.-1": is not a cursor of this lane's listPage`,
    );
  });
});

describe("ParkedCursors", () => {
  it("park hands out new handles 1, 2, …; get finds a node only in the list it was parked in", () => {
    const parked = new ParkedCursors();
    const a = new StateList();
    const b = new StateList();
    const na = new ListNode(false);
    const nb = new ListNode(false);
    a.addCursor(na);
    b.addCursor(nb);
    expect(parked.park(a, na, 5)).toBe(1);
    expect(parked.park(b, nb, 7)).toBe(2);
    expect(parked.get(1, a)).toEqual({ list: a, node: na, after: 5 });
    expect(parked.get(1, a)?.node).toBe(na);
    expect(parked.get(2, b)?.node).toBe(nb);
    expect(parked.get(1, b)).toBeUndefined();
    expect(parked.get(2, a)).toBeUndefined();
    expect(parked.get(3, a)).toBeUndefined();
  });

  it("release takes the node out of its list, once", () => {
    const parked = new ParkedCursors();
    const list = new StateList();
    const node = new ListNode(false);
    list.addCursor(node);
    const h = parked.park(list, node, 0);
    parked.release(h);
    expect(list.cursors).toBe(0);
    expect(list.root.next).toBe(list.root);
    expect(parked.get(h, list)).toBeUndefined();
    parked.release(h);
    parked.release(99);
    expect(list.cursors).toBe(0);
  });

  it("keeps at most 1,000: the 1,001st releases the oldest", () => {
    const parked = new ParkedCursors();
    const list = new StateList();
    const nodes: ListNode[] = [];
    for (let i = 0; i < 1_000; i++) {
      const node = new ListNode(false);
      list.addCursor(node);
      nodes.push(node);
      parked.park(list, node, i);
    }
    expect(list.cursors).toBe(1_000);
    expect(parked.get(1, list)?.node).toBe(nodes[0]);
    const last = new ListNode(false);
    list.addCursor(last);
    expect(parked.park(list, last, 1_000)).toBe(1_001);
    expect(list.cursors).toBe(1_000);
    expect(parked.get(1, list)).toBeUndefined();
    expect((nodes[0] as ListNode).next).toBe(nodes[0]);
    expect(parked.get(2, list)?.node).toBe(nodes[1]);
    expect(parked.get(1_001, list)?.node).toBe(last);
  });
});

describe("summaryOf", () => {
  it("a job with neither finishedAt, error, tags, group nor expiry has none of those keys", () => {
    expect(summaryOf(rec("waiting"), "q", undefined)).toStrictEqual({
      id: "r",
      lane: "q",
      task: "t",
      priority: 2,
      state: "waiting",
      attempt: 0,
      publishedAt: START,
      runAt: START + 10,
      changedAt: START + 10,
    });
  });

  it("carries finishedAt, error, tags, group and expiresAt when the job has them", () => {
    const r = rec("failed", { group: "g" });
    r.finishedAt = START + 30;
    r.error = { name: "E", message: "m", reason: "error", stack: "s" };
    const tags = ["x"];
    const s = summaryOf(r, "q", extraOf({ tags, expiresAt: START + 99 }));
    expect(s).toStrictEqual({
      id: "r",
      lane: "q",
      task: "t",
      priority: 2,
      state: "failed",
      attempt: 0,
      publishedAt: START,
      runAt: START + 10,
      changedAt: START + 30,
      finishedAt: START + 30,
      error: { name: "E", message: "m", reason: "error" },
      tags: ["x"],
      group: "g",
      expiresAt: START + 99,
    });
    expect(s.tags).not.toBe(tags);
  });
});
