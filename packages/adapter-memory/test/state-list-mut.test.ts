import { describe, expect, it } from "vitest";
import { JobRecord, ListNode } from "../src/job-record.ts";
import { StateList } from "../src/state-list.ts";
import { job, START } from "./helpers.ts";

let seq = 0;
const rec = (id: string): JobRecord => new JobRecord(job(id), ++seq, "waiting", START);

/** Every node from the root on, cursors as "|". */
function walk(list: StateList): string[] {
  const out: string[] = [];
  for (let n = list.root.next; n !== list.root; n = n.next) {
    out.push(n.isJob ? (n as JobRecord).id : "|");
  }
  const back: string[] = [];
  for (let n = list.root.prev; n !== list.root; n = n.prev) {
    back.unshift(n.isJob ? (n as JobRecord).id : "|");
  }
  expect(back).toEqual(out);
  return out;
}

describe("StateList", () => {
  it("first and last skip cursors; both undefined when only cursors are left", () => {
    const list = new StateList();
    expect(list.first()).toBeUndefined();
    expect(list.last()).toBeUndefined();
    const a = rec("a");
    const b = rec("b");
    const head = new ListNode(false);
    const tail = new ListNode(false);
    list.addCursor(head);
    list.append(a);
    list.append(b);
    list.addCursor(tail);
    list.moveCursorBefore(tail, list.root);
    expect(walk(list)).toEqual(["|", "a", "b", "|"]);
    expect(list.first()).toBe(a);
    expect(list.last()).toBe(b);
    list.remove(a);
    expect(list.first()).toBe(b);
    expect(list.last()).toBe(b);
    list.remove(b);
    expect(list.size).toBe(0);
    expect(walk(list)).toEqual(["|", "|"]);
    expect(list.first()).toBeUndefined();
    expect(list.last()).toBeUndefined();
  });

  it("replace puts the new record in the old one's place, with its entrySeq", () => {
    const list = new StateList();
    const [a, b, c] = [rec("a"), rec("b"), rec("c")];
    a.entrySeq = 1;
    b.entrySeq = 2;
    c.entrySeq = 3;
    list.append(a);
    list.append(b);
    list.append(c);
    const b2 = rec("b2");
    list.replace(b, b2);
    expect(walk(list)).toEqual(["a", "b2", "c"]);
    expect(b2.entrySeq).toBe(2);
    expect(b.next).toBe(b);
    expect(b.prev).toBe(b);
    expect(list.size).toBe(3);
  });

  it("removeCursor takes a cursor out once: a second call changes nothing", () => {
    const list = new StateList();
    list.append(rec("a"));
    const cursor = new ListNode(false);
    list.addCursor(cursor);
    expect(list.cursors).toBe(1);
    expect(walk(list)).toEqual(["|", "a"]);
    list.removeCursor(cursor);
    expect(list.cursors).toBe(0);
    expect(walk(list)).toEqual(["a"]);
    expect(cursor.next).toBe(cursor);
    list.removeCursor(cursor);
    expect(list.cursors).toBe(0);
    expect(walk(list)).toEqual(["a"]);
  });

  it("moveCursorBefore puts a cursor just before a node, or at the tail before the root", () => {
    const list = new StateList();
    const [a, b] = [rec("a"), rec("b")];
    list.append(a);
    list.append(b);
    const cursor = new ListNode(false);
    list.addCursor(cursor);
    list.moveCursorBefore(cursor, b);
    expect(walk(list)).toEqual(["a", "|", "b"]);
    list.moveCursorBefore(cursor, b);
    expect(walk(list)).toEqual(["a", "|", "b"]);
    list.moveCursorBefore(cursor, list.root);
    expect(walk(list)).toEqual(["a", "b", "|"]);
    expect(list.cursors).toBe(1);
    expect(list.size).toBe(2);
  });
});
