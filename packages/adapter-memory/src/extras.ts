import type { JobLogLine, NewJob } from "@tasklane/core/adapter";
import type { JobRecord } from "./job-record.ts";

/** What only the operator features store about a job. */
export interface JobExtra {
  tags: string[] | undefined;
  /** When the job expires unstarted (NewJob.expiresAt). */
  expiresAt: number | undefined;
  result: string | undefined;
  progress: string | undefined;
  logs: JobLogLine[] | undefined;
  logsDropped: number;
}

function newExtra(): JobExtra {
  return {
    tags: undefined,
    expiresAt: undefined,
    result: undefined,
    progress: undefined,
    logs: undefined,
    logsDropped: 0,
  };
}

/**
 * The extras of a lane's jobs, beside the records rather than in them: a job that uses
 * no operator feature has no entry, and its record is exactly what it was before the
 * features existed (no field more to allocate per job). While no job of the lane has
 * one, every lookup is a size check.
 */
export class Extras {
  private readonly map = new Map<JobRecord, JobExtra>();

  get(rec: JobRecord): JobExtra | undefined {
    return this.map.size === 0 ? undefined : this.map.get(rec);
  }

  /** The job's extras, created when it has none. */
  of(rec: JobRecord): JobExtra {
    let x = this.map.get(rec);
    if (x === undefined) {
      x = newExtra();
      this.map.set(rec, x);
    }
    return x;
  }

  /** A new job's tags and expiry; undefined (and nothing stored) when it has neither. */
  fromJob(rec: JobRecord, job: NewJob): JobExtra | undefined {
    const tags = job.tags !== undefined && job.tags.length > 0 ? [...job.tags] : undefined;
    const expiresAt =
      typeof job.expiresAt === "number" && Number.isFinite(job.expiresAt)
        ? job.expiresAt
        : undefined;
    if (tags === undefined && expiresAt === undefined) return undefined;
    const x = this.of(rec);
    x.tags = tags;
    x.expiresAt = expiresAt;
    return x;
  }

  set(rec: JobRecord, x: JobExtra): void {
    this.map.set(rec, x);
  }

  delete(rec: JobRecord): void {
    if (this.map.size > 0) this.map.delete(rec);
  }

  /** A record replaced by a copy: its extras go to the copy. */
  move(from: JobRecord, to: JobRecord): JobExtra | undefined {
    const x = this.get(from);
    if (x === undefined) return undefined;
    this.map.delete(from);
    this.map.set(to, x);
    return x;
  }
}
