import type {
  SchedulePage,
  ScheduleRecord,
  ScheduleWrite,
  ScheduleWriteResult,
} from "@tasklane/core/adapter";

/** Schedules listed per page. */
const PAGE = 100;

/**
 * One lane's recurring schedules (capability `schedules`): records by id, and the ids
 * with a next slot in an array sorted by (nextAt, id), so the due ones are a prefix and
 * the earliest is the first (what a worker's tick reads: O(1), however many there are).
 * Writes are rare next to ticks; an insert or removal costs a binary search and a splice.
 */
export class ScheduleStore {
  private readonly byId = new Map<string, ScheduleRecord>();
  /** Schedules with a nextAt, ordered by nextAt then id. */
  private readonly order: ScheduleRecord[] = [];

  get size(): number {
    return this.byId.size;
  }

  get(id: string): ScheduleRecord | undefined {
    const r = this.byId.get(id);
    return r && { ...r };
  }

  /** Whether a write expecting `expectRevision` would be applied (see LaneStore.putSchedule). */
  matches(id: string, expectRevision: number | undefined): boolean {
    if (expectRevision === undefined) return true;
    return (this.byId.get(id)?.revision ?? 0) === expectRevision;
  }

  put(write: ScheduleWrite, expectRevision?: number): ScheduleWriteResult {
    if (!this.matches(write.id, expectRevision)) return { status: "stale" };
    const old = this.byId.get(write.id);
    if (old) this.unindex(old);
    const record: ScheduleRecord = {
      id: write.id,
      data: write.data,
      nextAt: write.nextAt,
      revision: (old?.revision ?? 0) + 1,
    };
    this.byId.set(record.id, record);
    if (record.nextAt !== null) this.order.splice(this.position(record), 0, record);
    return { status: "ok", revision: record.revision };
  }

  remove(id: string): boolean {
    const old = this.byId.get(id);
    if (!old) return false;
    this.unindex(old);
    this.byId.delete(id);
    return true;
  }

  due(now: number, limit: number): ScheduleRecord[] {
    const out: ScheduleRecord[] = [];
    for (const r of this.order) {
      if (out.length >= limit || (r.nextAt as number) > now) break;
      out.push({ ...r });
    }
    return out;
  }

  nextAt(): number | undefined {
    return this.order[0]?.nextAt ?? undefined;
  }

  /** Pages in id order; the cursor is the last id of the page before. */
  list(cursor?: string): SchedulePage {
    const ids = [...this.byId.keys()].sort();
    const from = cursor === undefined ? 0 : ids.findIndex((id) => id > cursor);
    const slice = from < 0 ? [] : ids.slice(from, from + PAGE);
    const page: SchedulePage = {
      records: slice.map((id) => ({ ...(this.byId.get(id) as ScheduleRecord) })),
    };
    if (from >= 0 && from + PAGE < ids.length) page.cursor = slice[slice.length - 1] as string;
    return page;
  }

  /** Where `r` goes (or is) in `order`: the first entry not before it. */
  private position(r: ScheduleRecord): number {
    const at = r.nextAt as number;
    let lo = 0;
    let hi = this.order.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      const m = this.order[mid] as ScheduleRecord;
      const mAt = m.nextAt as number;
      if (mAt < at || (mAt === at && m.id < r.id)) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }

  private unindex(r: ScheduleRecord): void {
    if (r.nextAt === null) return;
    const i = this.position(r);
    if (this.order[i] === r) this.order.splice(i, 1);
  }
}
