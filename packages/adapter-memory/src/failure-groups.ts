import type { FailureGroup } from "@tasklane/core/adapter";
import type { JobRecord } from "./job-record.ts";

interface Group {
  /** In order of failing (a Set keeps insertion order): the newest is the last. */
  jobs: Set<JobRecord>;
  /** The newest member, or undefined when it left and the next read must look it up. */
  newest: JobRecord | undefined;
}

/** The error name a failed job is grouped by. */
export function groupOf(rec: JobRecord): string {
  return rec.error?.name ?? "Error";
}

/**
 * The failed jobs of one lane by error name (qless's failure kinds): counts in O(1), the
 * oldest of a group first for batch retries, the newest as the group's sample. A job
 * joins when it enters the failed state and leaves when it leaves it (retried, moved,
 * deleted, removed by retention).
 */
export class FailureGroups {
  private readonly groups = new Map<string, Group>();

  join(rec: JobRecord): void {
    const name = groupOf(rec);
    let g = this.groups.get(name);
    if (g === undefined) {
      g = { jobs: new Set(), newest: undefined };
      this.groups.set(name, g);
    }
    g.jobs.add(rec);
    g.newest = rec;
  }

  leave(rec: JobRecord): void {
    const name = groupOf(rec);
    const g = this.groups.get(name);
    if (g === undefined || !g.jobs.delete(rec)) return;
    if (g.jobs.size === 0) this.groups.delete(name);
    else if (g.newest === rec) g.newest = undefined;
  }

  /** Every group, largest first (then by name), with its newest failure as the sample. */
  list(lane: string): FailureGroup[] {
    const out: FailureGroup[] = [];
    for (const [group, g] of this.groups) {
      if (g.newest === undefined) {
        for (const rec of g.jobs) g.newest = rec;
      }
      const rec = g.newest as JobRecord;
      const sample: FailureGroup["sample"] = {
        jobId: rec.id,
        task: rec.task,
        message: rec.error?.message ?? "",
        failedAt: rec.finishedAt ?? 0,
      };
      if (rec.error?.stack !== undefined) sample.stack = rec.error.stack;
      out.push({ lane, group, count: g.jobs.size, sample });
    }
    return out.sort((a, b) => b.count - a.count || (a.group < b.group ? -1 : 1));
  }
}
