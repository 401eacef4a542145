import type { JobRecord } from "./job-record.ts";

/**
 * A binary min-heap of job records with index tracking (`record.heapIndex`), so a record
 * can be removed or re-keyed in O(log n) without lazy tombstones. A record sits in at most
 * one heap at a time, which is why one index field per record is enough.
 */
export class RecordHeap {
  private readonly items: JobRecord[] = [];
  private readonly less: (a: JobRecord, b: JobRecord) => boolean;

  constructor(less: (a: JobRecord, b: JobRecord) => boolean) {
    this.less = less;
  }

  get size(): number {
    return this.items.length;
  }

  peek(): JobRecord | undefined {
    return this.items[0];
  }

  push(record: JobRecord): void {
    this.items.push(record);
    this.siftUp(record, this.items.length - 1);
  }

  pop(): JobRecord | undefined {
    const items = this.items;
    const top = items[0];
    if (top === undefined) return undefined;
    const last = items.pop() as JobRecord;
    if (items.length > 0) this.siftDown(last, 0);
    top.heapIndex = -1;
    return top;
  }

  remove(record: JobRecord): void {
    const items = this.items;
    const i = record.heapIndex;
    if (i < 0 || items[i] !== record) return;
    const last = items.pop() as JobRecord;
    if (i < items.length) {
      this.siftUp(last, i);
      if (last.heapIndex === i) this.siftDown(last, i);
    }
    record.heapIndex = -1;
  }

  /** Restore order after the record's key changed. */
  update(record: JobRecord): void {
    const i = record.heapIndex;
    if (i < 0) return;
    this.siftUp(record, i);
    if (record.heapIndex === i) this.siftDown(record, i);
  }

  /** Place `record` at hole `i` or above it. */
  private siftUp(record: JobRecord, i: number): void {
    const items = this.items;
    const less = this.less;
    while (i > 0) {
      const p = (i - 1) >> 1;
      const parent = items[p] as JobRecord;
      if (!less(record, parent)) break;
      items[i] = parent;
      parent.heapIndex = i;
      i = p;
    }
    items[i] = record;
    record.heapIndex = i;
  }

  /** Place `record` at hole `i` or below it. */
  private siftDown(record: JobRecord, i: number): void {
    const items = this.items;
    const less = this.less;
    const n = items.length;
    for (;;) {
      const l = 2 * i + 1;
      if (l >= n) break;
      let c = l;
      let child = items[l] as JobRecord;
      const r = l + 1;
      if (r < n) {
        const right = items[r] as JobRecord;
        if (less(right, child)) {
          c = r;
          child = right;
        }
      }
      if (!less(child, record)) break;
      items[i] = child;
      child.heapIndex = i;
      i = c;
    }
    items[i] = record;
    record.heapIndex = i;
  }
}

/** Ready order: higher priority, then earlier due time, then put order. */
export function readyBefore(a: JobRecord, b: JobRecord): boolean {
  if (a.priority !== b.priority) return a.priority > b.priority;
  if (a.dueAt !== b.dueAt) return a.dueAt < b.dueAt;
  return a.seq < b.seq;
}

/** Delayed order: earlier due time, then put order. */
export function dueBefore(a: JobRecord, b: JobRecord): boolean {
  if (a.dueAt !== b.dueAt) return a.dueAt < b.dueAt;
  return a.seq < b.seq;
}

/** Lease order: earlier expiry first. */
export function expiresBefore(a: JobRecord, b: JobRecord): boolean {
  if (a.expiresAt !== b.expiresAt) return a.expiresAt < b.expiresAt;
  return a.seq < b.seq;
}
