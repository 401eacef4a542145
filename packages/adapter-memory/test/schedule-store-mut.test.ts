import { describe, expect, it } from "vitest";
import { ScheduleStore } from "../src/schedule-store.ts";
import { START } from "./helpers.ts";

const id = (i: number) => `s${String(i).padStart(3, "0")}`;
function storeOf(n: number): ScheduleStore {
  const store = new ScheduleStore();
  for (let i = 0; i < n; i++) store.put({ id: id(i), data: "{}", nextAt: START + i });
  return store;
}
const ids = (records: { id: string }[]) => records.map((r) => r.id);

describe("ScheduleStore", () => {
  it("size counts every schedule, with or without a next slot", () => {
    const store = new ScheduleStore();
    expect(store.size).toBe(0);
    store.put({ id: "a", data: "{}", nextAt: START });
    store.put({ id: "b", data: "{}", nextAt: null });
    store.put({ id: "a", data: "{}", nextAt: START + 1 });
    expect(store.size).toBe(2);
    store.remove("a");
    expect(store.size).toBe(1);
  });

  it("lists 100 per page in id order; the cursor is the last id of the page, absent on the last", () => {
    const store = storeOf(250);
    const first = store.list();
    expect(first.records).toHaveLength(100);
    expect(first.records[0]).toEqual({ id: "s000", data: "{}", nextAt: START, revision: 1 });
    expect(first.cursor).toBe("s099");
    const second = store.list(first.cursor);
    expect(ids(second.records)).toEqual(Array.from({ length: 100 }, (_, i) => id(100 + i)));
    expect(second.cursor).toBe("s199");
    const third = store.list(second.cursor);
    expect(ids(third.records)).toEqual(Array.from({ length: 50 }, (_, i) => id(200 + i)));
    expect(third).not.toHaveProperty("cursor");
  });

  it("exactly one full page has no cursor; a cursor past the last id is an empty last page", () => {
    const full = storeOf(100);
    const page = full.list();
    expect(page.records).toHaveLength(100);
    expect(page).not.toHaveProperty("cursor");
    expect(full.list("s099")).toStrictEqual({ records: [] });
    expect(full.list("zzz")).toStrictEqual({ records: [] });
    const small = storeOf(3);
    expect(small.list("zzz")).toStrictEqual({ records: [] });
    expect(ids(small.list("s000").records)).toEqual(["s001", "s002"]);
    expect(small.list("s000")).not.toHaveProperty("cursor");
  });

  it("due and nextAt follow rewrites and removals", () => {
    const store = new ScheduleStore();
    store.put({ id: "a", data: "{}", nextAt: START + 5 });
    store.put({ id: "b", data: "{}", nextAt: START + 5 });
    store.put({ id: "c", data: "{}", nextAt: null });
    expect(ids(store.due(START + 5, 10))).toEqual(["a", "b"]);
    store.put({ id: "a", data: "{}", nextAt: START + 9 });
    expect(ids(store.due(START + 9, 10))).toEqual(["b", "a"]);
    store.put({ id: "c", data: "{}", nextAt: START + 1 });
    expect(store.nextAt()).toBe(START + 1);
    expect(store.remove("c")).toBe(true);
    expect(store.remove("c")).toBe(false);
    expect(store.nextAt()).toBe(START + 5);
    expect(ids(store.due(START + 100, 1))).toEqual(["b"]);
  });
});
