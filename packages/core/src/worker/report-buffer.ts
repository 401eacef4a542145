/**
 * A held job's reports between two sends: `ctx.progress` keeps the latest value, `ctx.log`
 * appends lines (bounded by the lane's `logLimit`, the oldest dropped and counted). The
 * reporter sends them while the job runs; what is left when the job settles rides on its
 * ack, nack or release item, so the last report is stored with the outcome.
 */
import type { AckItem, JobLogLine, JobReport, NackItem, ReleaseItem } from "../adapter.ts";
import type { HeldJob, ReportBuffer } from "./held-job.ts";

/** Largest encoded progress value, bytes: `ctx.progress` throws PayloadTooLargeError past it. */
export const MAX_PROGRESS_BYTES = 4_096;
/** Longest stored log line, characters: a longer one is cut, ending with a marker. */
export const MAX_LOG_LINE_LENGTH = 1_000;

function bufferOf(h: HeldJob): ReportBuffer {
  let b = h.report;
  if (b === undefined) {
    b = { progress: undefined, logs: [], dropped: 0, queued: false };
    h.report = b;
  }
  return b;
}

export function bufferProgress(h: HeldJob, encoded: string): ReportBuffer {
  const b = bufferOf(h);
  b.progress = encoded;
  return b;
}

export function bufferLog(h: HeldJob, line: JobLogLine): ReportBuffer {
  const b = bufferOf(h);
  b.logs.push(line);
  const limit = h.lane.config.logLimit;
  // Trimmed in bulk once twice over the limit: amortised O(1) per line however much a
  // handler logs between two sends.
  if (b.logs.length > 2 * limit) trim(b, limit);
  return b;
}

function trim(b: ReportBuffer, limit: number): void {
  const over = b.logs.length - limit;
  if (over <= 0) return;
  b.logs.splice(0, over);
  b.dropped += over;
}

/** `message` as stored: at most MAX_LOG_LINE_LENGTH characters, a cut line marked at its end. */
export function logLine(message: string): string {
  if (message.length <= MAX_LOG_LINE_LENGTH) return message;
  // The marker names the characters cut, and its own length decides how many: settle both.
  let end = MAX_LOG_LINE_LENGTH;
  let marker = "";
  for (let i = 0; i < 3; i++) {
    marker = ` …[cut ${message.length - end} chars]`;
    end = MAX_LOG_LINE_LENGTH - marker.length;
  }
  // Never leave half of a surrogate pair.
  const code = message.charCodeAt(end - 1);
  if (code >= 0xd800 && code <= 0xdbff) end--;
  return `${message.slice(0, end)} …[cut ${message.length - end} chars]`;
}

/** Empty the job's buffer into a report to send; undefined when there is nothing new. */
export function takeReport(h: HeldJob): JobReport | undefined {
  const b = h.report;
  if (b === undefined) return undefined;
  b.queued = false;
  if (b.progress === undefined && b.logs.length === 0 && b.dropped === 0) return undefined;
  trim(b, h.lane.config.logLimit);
  const report: JobReport = {};
  if (b.progress !== undefined) report.progress = b.progress;
  if (b.logs.length > 0) report.logs = b.logs;
  if (b.dropped > 0) report.logsDropped = b.dropped;
  b.progress = undefined;
  b.logs = [];
  b.dropped = 0;
  return report;
}

/** The job's ack item: its bare lock unless it leaves a result or a report behind. */
export function ackItemOf(h: HeldJob): AckItem {
  // The common ack: a job that reported nothing and returned nothing sends its lock.
  if (h.result === undefined && h.report === undefined) return h.job.lock;
  const report = takeReport(h);
  if (h.result === undefined && report === undefined) return h.job.lock;
  const item: AckItem = { ...h.job.lock };
  if (h.result !== undefined) item.result = h.result;
  if (report !== undefined) item.report = report;
  return item;
}

/** A nack or release item with the job's last report, when it has one. */
export function withReport<T extends NackItem | ReleaseItem>(item: T, h: HeldJob): T {
  if (h.report === undefined) return item;
  const report = takeReport(h);
  return report === undefined ? item : { ...item, report };
}
