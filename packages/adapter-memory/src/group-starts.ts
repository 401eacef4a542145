import type { RateLimit } from "@tasklane/core/adapter";

/**
 * Each group's own rate limit (`groups.rateLimit`): a sliding log of the group's starts,
 * at most `max` in any window of `durationMs`. A log holds at most `max` times, each
 * within the last window; a group with no start in its window has no log.
 *
 * Memory stays bounded by the groups that started a job in the last window: logs are
 * pruned when read, and all of them once their number has doubled since the last sweep
 * (a group that never comes back would otherwise keep its log).
 */
export class GroupStarts {
  private readonly logs = new Map<string, number[]>();
  private sweepAt = 64;
  private readonly limit: RateLimit;

  constructor(limit: RateLimit) {
    this.limit = limit;
  }

  /** Groups that have a log now (what the memory bound above is about). */
  get groups(): number {
    return this.logs.size;
  }

  /** Whether `limit` is the limit these logs count against. */
  sameLimit(limit: RateLimit): boolean {
    return limit.max === this.limit.max && limit.durationMs === this.limit.durationMs;
  }

  /** Starts the group's window allows at `now`. */
  room(group: string, now: number): number {
    const log = this.logs.get(group);
    if (log === undefined) return this.limit.max;
    if (this.prune(group, log, now)) return this.limit.max;
    return this.limit.max - log.length;
  }

  /** Record a start of the group at `now` (the caller checked `room`). */
  add(group: string, now: number): void {
    const log = this.logs.get(group);
    if (log !== undefined) {
      log.push(now);
      return;
    }
    this.logs.set(group, [now]);
    if (this.logs.size >= this.sweepAt) this.sweep(now);
  }

  /**
   * While the group's window is full: when its next start is allowed (its oldest start in
   * the window, plus durationMs). Infinity while it has room.
   */
  openAt(group: string, now: number): number {
    if (this.room(group, now) > 0) return Number.POSITIVE_INFINITY;
    return ((this.logs.get(group) as number[])[0] as number) + this.limit.durationMs;
  }

  /** Drop starts that left the window; true (and the log gone) when none is left. */
  private prune(group: string, log: number[], now: number): boolean {
    const from = now - this.limit.durationMs;
    let n = 0;
    while (n < log.length && (log[n] as number) <= from) n++;
    if (n === log.length) {
      this.logs.delete(group);
      return true;
    }
    if (n > 0) log.splice(0, n);
    return false;
  }

  private sweep(now: number): void {
    for (const [group, log] of this.logs) this.prune(group, log, now);
    this.sweepAt = Math.max(64, 2 * this.logs.size);
  }
}
