import { RecordHeap } from "./heap.ts";
import type { JobRecord } from "./job-record.ts";

/** `heapIndex` of a record held in a LeaseIndex's list rather than its heap. */
export const IN_LEASE_LIST = -3;

/**
 * Active jobs by lease expiry: what expires next, in O(1) for the common case.
 *
 * Nearly every lease is taken or extended with the lane's one `leaseMs` at a time that
 * only moves forward, so new expiries arrive in order. Those go to the tail of an
 * intrusive linked list (O(1) add, O(1) remove on ack, head = next to expire). The rare
 * expiry earlier than the list's tail (a shorter lease than the one before) goes to a
 * small position-tracking heap instead. The next expiry is the earlier of the two heads.
 * Invariant: the list's expiries never decrease from head to tail.
 */
export class LeaseIndex {
  private head: JobRecord | undefined = undefined;
  private tail: JobRecord | undefined = undefined;
  private listSize = 0;
  private readonly heap = new RecordHeap(true);

  get size(): number {
    return this.listSize + this.heap.size;
  }

  /** Add an active record keyed by its `expiresAt`. */
  add(rec: JobRecord): void {
    const tail = this.tail;
    // Equal expiries may go in any order: a batch reserved at once shares one expiry.
    if (tail === undefined || rec.expiresAt >= tail.expiresAt) {
      rec.leasePrev = tail;
      rec.leaseNext = undefined;
      if (tail === undefined) this.head = rec;
      else tail.leaseNext = rec;
      this.tail = rec;
      rec.heapIndex = IN_LEASE_LIST;
      this.listSize++;
    } else {
      this.heap.push(rec, rec.expiresAt, rec.seq, 0);
    }
  }

  remove(rec: JobRecord): void {
    if (rec.heapIndex !== IN_LEASE_LIST) {
      this.heap.remove(rec);
      return;
    }
    const prev = rec.leasePrev;
    const next = rec.leaseNext;
    if (prev === undefined) this.head = next;
    else prev.leaseNext = next;
    if (next === undefined) this.tail = prev;
    else next.leasePrev = prev;
    rec.leasePrev = undefined;
    rec.leaseNext = undefined;
    rec.heapIndex = -1;
    this.listSize--;
  }

  /** Re-file a record whose `expiresAt` changed. */
  update(rec: JobRecord): void {
    this.remove(rec);
    this.add(rec);
  }

  /** Earliest expiry (+Infinity when none). */
  peekKey(): number {
    const h = this.head;
    const fromList = h === undefined ? Number.POSITIVE_INFINITY : h.expiresAt;
    return Math.min(fromList, this.heap.peekKey());
  }

  /** Remove and return the record whose lease ends first. */
  pop(): JobRecord | undefined {
    const h = this.head;
    if (h === undefined || this.heap.peekKey() < h.expiresAt) return this.heap.pop();
    this.remove(h);
    return h;
  }
}
