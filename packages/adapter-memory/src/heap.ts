import type { JobRecord } from "./job-record.ts";

/** `heapIndex` of a record in no heap (or removed from a lazy heap). */
export const NOT_IN_HEAP = -1;
/** `heapIndex` of a live record in a lazy heap (lazy heaps do not track positions). */
export const IN_LAZY_HEAP = -2;

/**
 * A binary min-heap of job records ordered by a key of up to three numbers, compared
 * lexicographically. The keys live in typed arrays next to the heap slots, so sifting
 * compares contiguous numbers instead of chasing each record (and its boxed doubles)
 * through memory: on deep lanes that is most of the cost of a heap.
 *
 * Two removal modes. `tracked`: every move writes `record.heapIndex`, so `remove` and
 * `rekey` are O(log n) (the lease heap: acks remove from it all the time). Lazy: sifting
 * never touches a record; `remove` only marks it (`heapIndex = NOT_IN_HEAP`) and the entry
 * is dropped when it reaches the top, or by a compaction once stale entries outnumber live
 * ones (the ready and delayed heaps: only cancel and delete remove from them, and both are
 * final for that record, so a stale entry can never come back to life). A record sits in
 * at most one heap at a time, so one `heapIndex` field per record is enough.
 */
export class RecordHeap {
  private k1 = new Float64Array(64);
  private k2 = new Float64Array(64);
  private k3 = new Float64Array(64);
  private recs: (JobRecord | undefined)[] = [];
  /** Slots in use, stale ones included. */
  private n = 0;
  private stale = 0;
  private readonly tracked: boolean;

  constructor(tracked: boolean) {
    this.tracked = tracked;
  }

  /** Live records. */
  get size(): number {
    return this.n - this.stale;
  }

  /** First key of the top live record (+Infinity when empty). */
  peekKey(): number {
    this.dropStaleTop();
    return this.n > 0 ? (this.k1[0] as number) : Number.POSITIVE_INFINITY;
  }

  push(record: JobRecord, a: number, b: number, c: number): void {
    if (this.n === this.k1.length) this.grow();
    if (!this.tracked) record.heapIndex = IN_LAZY_HEAP;
    this.siftUp(this.n++, a, b, c, record);
  }

  pop(): JobRecord | undefined {
    this.dropStaleTop();
    if (this.n === 0) return undefined;
    const top = this.recs[0] as JobRecord;
    this.take(0);
    top.heapIndex = NOT_IN_HEAP;
    return top;
  }

  remove(record: JobRecord): void {
    const i = record.heapIndex;
    if (!this.tracked) {
      if (i !== IN_LAZY_HEAP) return;
      record.heapIndex = NOT_IN_HEAP;
      this.stale++;
      if (this.stale > 64 && this.stale * 2 > this.n) this.compact();
      return;
    }
    if (i < 0 || i >= this.n || this.recs[i] !== record) return;
    this.take(i);
    record.heapIndex = NOT_IN_HEAP;
  }

  /** Give a record in a tracked heap a new key. */
  rekey(record: JobRecord, a: number, b: number, c: number): void {
    const i = record.heapIndex;
    if (!this.tracked || i < 0 || i >= this.n || this.recs[i] !== record) return;
    if (!this.siftUp(i, a, b, c, record)) this.siftDown(i, a, b, c, record);
  }

  private dropStaleTop(): void {
    while (this.stale > 0 && this.n > 0 && (this.recs[0] as JobRecord).heapIndex === NOT_IN_HEAP) {
      this.take(0);
      this.stale--;
    }
  }

  /** Drop every stale entry and re-heapify (Floyd), O(n). */
  private compact(): void {
    const { k1, k2, k3, recs } = this;
    let w = 0;
    for (let r = 0; r < this.n; r++) {
      const rec = recs[r] as JobRecord;
      if (rec.heapIndex === NOT_IN_HEAP) continue;
      k1[w] = k1[r] as number;
      k2[w] = k2[r] as number;
      k3[w] = k3[r] as number;
      recs[w++] = rec;
    }
    for (let r = w; r < this.n; r++) recs[r] = undefined;
    this.n = w;
    this.stale = 0;
    for (let i = (w >> 1) - 1; i >= 0; i--) {
      this.siftDown(i, k1[i] as number, k2[i] as number, k3[i] as number, recs[i] as JobRecord);
    }
  }

  /** Fill hole `i` with the last slot. */
  private take(i: number): void {
    const last = --this.n;
    const rec = this.recs[last] as JobRecord;
    this.recs[last] = undefined;
    if (i === last) return;
    const a = this.k1[last] as number;
    const b = this.k2[last] as number;
    const c = this.k3[last] as number;
    if (!this.siftUp(i, a, b, c, rec)) this.siftDown(i, a, b, c, rec);
  }

  private grow(): void {
    const cap = this.k1.length * 2;
    const k1 = new Float64Array(cap);
    const k2 = new Float64Array(cap);
    const k3 = new Float64Array(cap);
    k1.set(this.k1);
    k2.set(this.k2);
    k3.set(this.k3);
    this.k1 = k1;
    this.k2 = k2;
    this.k3 = k3;
  }

  /** Place (a, b, c, rec) at hole `i` or above it; true when it moved up. */
  private siftUp(i: number, a: number, b: number, c: number, rec: JobRecord): boolean {
    const start = i;
    const k1 = this.k1;
    const k2 = this.k2;
    const k3 = this.k3;
    const recs = this.recs;
    while (i > 0) {
      const p = (i - 1) >> 1;
      const pa = k1[p] as number;
      if (a > pa) break;
      if (a === pa) {
        const pb = k2[p] as number;
        if (b > pb || (b === pb && c >= (k3[p] as number))) break;
      }
      const parent = recs[p] as JobRecord;
      k1[i] = pa;
      k2[i] = k2[p] as number;
      k3[i] = k3[p] as number;
      recs[i] = parent;
      if (this.tracked) parent.heapIndex = i;
      i = p;
    }
    k1[i] = a;
    k2[i] = b;
    k3[i] = c;
    recs[i] = rec;
    if (this.tracked) rec.heapIndex = i;
    return i !== start;
  }

  /** Place (a, b, c, rec) at hole `i` or below it. */
  private siftDown(i: number, a: number, b: number, c: number, rec: JobRecord): void {
    const k1 = this.k1;
    const k2 = this.k2;
    const k3 = this.k3;
    const recs = this.recs;
    const n = this.n;
    for (;;) {
      let m = 2 * i + 1;
      if (m >= n) break;
      const r = m + 1;
      if (r < n) {
        const la = k1[m] as number;
        const ra = k1[r] as number;
        if (
          ra < la ||
          (ra === la &&
            ((k2[r] as number) < (k2[m] as number) ||
              ((k2[r] as number) === (k2[m] as number) && (k3[r] as number) < (k3[m] as number))))
        ) {
          m = r;
        }
      }
      const ma = k1[m] as number;
      if (ma > a) break;
      if (ma === a) {
        const mb = k2[m] as number;
        if (mb > b || (mb === b && (k3[m] as number) >= c)) break;
      }
      const child = recs[m] as JobRecord;
      k1[i] = ma;
      k2[i] = k2[m] as number;
      k3[i] = k3[m] as number;
      recs[i] = child;
      if (this.tracked) child.heapIndex = i;
      i = m;
    }
    k1[i] = a;
    k2[i] = b;
    k3[i] = c;
    recs[i] = rec;
    if (this.tracked) rec.heapIndex = i;
  }
}
