import type { JobRecord } from "./job-record.ts";

/**
 * Jobs with an expiry, by expiry time: a binary min-heap of (time, record) pairs, apart
 * from the ready and delayed heaps (a record sits in one of those too). Entries are never
 * removed early: one whose record has left the lane, was replaced, or is not waiting or
 * delayed when its time comes is dropped by whoever pops it. Only jobs published with an
 * expiry ever enter it.
 */
export class ExpiryIndex {
  private at: number[] = [];
  private recs: JobRecord[] = [];

  get size(): number {
    return this.at.length;
  }

  push(at: number, rec: JobRecord): void {
    const a = this.at;
    const r = this.recs;
    let i = a.length;
    a.push(at);
    r.push(rec);
    while (i > 0) {
      const p = (i - 1) >> 1;
      if ((a[p] as number) <= at) break;
      a[i] = a[p] as number;
      r[i] = r[p] as JobRecord;
      i = p;
    }
    a[i] = at;
    r[i] = rec;
  }

  /** The record of the earliest entry, if it is due at `now`; removed from the index. */
  popDue(now: number): JobRecord | undefined {
    const a = this.at;
    if (a.length === 0 || (a[0] as number) > now) return undefined;
    const r = this.recs;
    const top = r[0] as JobRecord;
    const lastAt = a.pop() as number;
    const lastRec = r.pop() as JobRecord;
    const n = a.length;
    if (n > 0) {
      let i = 0;
      for (;;) {
        let m = 2 * i + 1;
        if (m >= n) break;
        if (m + 1 < n && (a[m + 1] as number) < (a[m] as number)) m++;
        if ((a[m] as number) >= lastAt) break;
        a[i] = a[m] as number;
        r[i] = r[m] as JobRecord;
        i = m;
      }
      a[i] = lastAt;
      r[i] = lastRec;
    }
    return top;
  }
}
