import { RecordHeap } from "./heap.ts";
import type { JobRecord } from "./job-record.ts";

/**
 * The waiting jobs of a lane opened with `groups` (fair groups): one heap per group (the
 * lane's order inside it: priority, due time, put order) and the groups that have jobs in
 * a ring, served round-robin, one job per group per turn. A group without room (its
 * `concurrency` jobs active, or its own rate limit's window full) is passed over until it
 * has some. Jobs without a group are the group "".
 *
 * A group joins the ring's end when its first job arrives (it is served after the groups
 * already waiting have had their turn) and leaves it when it runs out of jobs.
 */
export class GroupedReady {
  private readonly heaps = new Map<string, RecordHeap>();
  private readonly ring: string[] = [];
  /** Index in `ring` of the group served next. */
  private next = 0;
  /** Waiting jobs, every group. */
  size = 0;

  push(rec: JobRecord): void {
    const group = rec.group ?? "";
    let heap = this.heaps.get(group);
    if (heap === undefined) {
      heap = new RecordHeap(false);
      this.heaps.set(group, heap);
      this.ring.push(group);
    }
    heap.push(rec, -rec.priority, rec.dueAt, rec.seq);
    this.size++;
  }

  /** A job taken out of the waiting jobs by other means (cancel, delete, a new key…). */
  remove(rec: JobRecord): void {
    const heap = this.heaps.get(rec.group ?? "");
    if (heap === undefined) return;
    heap.remove(rec);
    this.size--;
  }

  /**
   * The next group's next job, skipping groups `room` gives no start (their concurrency
   * or their own rate limit used up; the caller counts what it takes); undefined when
   * every group with jobs is out of room, or none has jobs.
   */
  pop(room: (group: string) => number): JobRecord | undefined {
    let looked = 0;
    while (looked < this.ring.length) {
      if (this.next >= this.ring.length) this.next = 0;
      const group = this.ring[this.next] as string;
      const heap = this.heaps.get(group) as RecordHeap;
      if (heap.size === 0) {
        // out of jobs (their last one canceled or deleted): out of the ring
        this.leaveNext(group);
        continue;
      }
      if (room(group) <= 0) {
        this.next++;
        looked++;
        continue;
      }
      const rec = heap.pop() as JobRecord;
      this.size--;
      if (heap.size === 0) this.leaveNext(group);
      else this.next++;
      return rec;
    }
    return undefined;
  }

  /** How many jobs pop would hand out now, at most (each group up to its `room`). */
  takeable(room: (group: string) => number): number {
    let n = 0;
    for (const [group, heap] of this.heaps) {
      if (heap.size > 0) n += Math.max(0, Math.min(heap.size, room(group)));
    }
    return n;
  }

  /** The least `at(group)` over the groups with jobs; Infinity when none has any. */
  earliest(at: (group: string) => number): number {
    let min = Number.POSITIVE_INFINITY;
    for (const [group, heap] of this.heaps) {
      if (heap.size > 0) min = Math.min(min, at(group));
    }
    return min;
  }

  /** Every waiting job, emptying the queue (a lane reconfigured without groups). */
  drain(): JobRecord[] {
    const out: JobRecord[] = [];
    for (const heap of this.heaps.values()) {
      for (let rec = heap.pop(); rec !== undefined; rec = heap.pop()) out.push(rec);
    }
    this.heaps.clear();
    this.ring.length = 0;
    this.next = 0;
    this.size = 0;
    return out;
  }

  /** The group at `next` leaves the ring; `next` then names the group after it. */
  private leaveNext(group: string): void {
    this.ring.splice(this.next, 1);
    this.heaps.delete(group);
  }
}
