import { type JobRecord, ListNode } from "./job-record.ts";

/**
 * The jobs of one state, in the order they entered it (so `entrySeq` ascends from head to
 * tail). O(1) append, remove and oldest-first peek; `size` counts jobs only, never the
 * cursors that `list()` parks between nodes.
 */
export class StateList {
  readonly root = new ListNode(false);
  size = 0;
  /** Cursors parked in the list (by `list()` iterators that have not ended). */
  cursors = 0;

  append(node: JobRecord): void {
    this.link(node, this.root.prev);
    this.size++;
  }

  remove(node: JobRecord): void {
    unlink(node);
    this.size--;
  }

  /** Put `node` in `old`'s place (the same position and entrySeq); `old` leaves the list. */
  replace(old: JobRecord, node: JobRecord): void {
    node.entrySeq = old.entrySeq;
    this.link(node, old);
    unlink(old);
  }

  /** The job that entered this state last, skipping cursors. */
  last(): JobRecord | undefined {
    let n = this.root.prev;
    while (n !== this.root) {
      if (n.isJob) return n as JobRecord;
      n = n.prev;
    }
    return undefined;
  }

  /** The job that entered this state first, skipping cursors. */
  first(): JobRecord | undefined {
    let n = this.root.next;
    while (n !== this.root) {
      if (n.isJob) return n as JobRecord;
      n = n.next;
    }
    return undefined;
  }

  /** Insert a cursor right after the root (before every job). */
  addCursor(cursor: ListNode): void {
    this.link(cursor, this.root);
    this.cursors++;
  }

  /** Move a cursor so that it sits just before `node` (which may be the root: the tail). */
  moveCursorBefore(cursor: ListNode, node: ListNode): void {
    if (cursor.next === node) return;
    unlink(cursor);
    this.link(cursor, node.prev);
  }

  /** Take a cursor out; idempotent (an iterator's end and its finalizer may both call). */
  removeCursor(cursor: ListNode): void {
    if (cursor.next === cursor) return;
    unlink(cursor);
    this.cursors--;
  }

  private link(node: ListNode, after: ListNode): void {
    node.prev = after;
    node.next = after.next;
    after.next.prev = node;
    after.next = node;
  }
}

function unlink(node: ListNode): void {
  node.prev.next = node.next;
  node.next.prev = node.prev;
  node.prev = node;
  node.next = node;
}
