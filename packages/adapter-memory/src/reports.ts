import type { JobReport } from "@tasklane/core/adapter";
import type { Extras } from "./extras.ts";
import type { JobRecord } from "./job-record.ts";

/**
 * Store a job's report: the progress replaces the stored one, log lines are appended and
 * the log keeps its last `logLimit` lines, counting the ones dropped (with those the
 * worker dropped before sending). Returns whether anything was stored.
 */
export function applyReport(
  extras: Extras,
  rec: JobRecord,
  report: JobReport,
  logLimit: number,
): boolean {
  const { progress, logs, logsDropped } = report;
  const hasLogs = Array.isArray(logs) && logs.length > 0;
  const dropped = typeof logsDropped === "number" && logsDropped > 0 ? logsDropped : 0;
  if (progress === undefined && !hasLogs && dropped === 0) return false;
  const extra = extras.of(rec);
  if (typeof progress === "string") extra.progress = progress;
  extra.logsDropped += dropped;
  if (hasLogs) {
    const kept = extra.logs ?? [];
    for (const line of logs) {
      kept.push({ at: line.at, attempt: line.attempt, message: String(line.message) });
    }
    const over = kept.length - logLimit;
    if (over > 0) {
      kept.splice(0, over);
      extra.logsDropped += over;
    }
    extra.logs = kept;
  }
  return true;
}

/** Keep the handler's encoded result with a succeeded job. */
export function keepResult(extras: Extras, rec: JobRecord, result: string): void {
  extras.of(rec).result = result;
}
