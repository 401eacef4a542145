/** How core's values look in the API's answers. */
import type { StandardJSONSchemaV1 } from "@standard-schema/spec";
import {
  type AnyTask,
  type DayStats,
  HISTOGRAM_BOUNDS_MS,
  type JobInfo,
  type JobSummary,
  type LaneCounts,
  type LaneHandle,
  percentile,
  type Summary,
} from "@tasklane/core";
import { decodeJson, stddev } from "@tasklane/core/adapter";
import type { z } from "zod";
import type {
  CountsSchema,
  JobSchema,
  JobSummarySchema,
  StatsSchema,
  SummarySchema,
  TaskSchema,
} from "./schemas.ts";

export type JobView = z.infer<typeof JobSchema>;
export type JobSummaryView = z.infer<typeof JobSummarySchema>;

/** JSON text as a value; text that is not JSON (a foreign writer's) stays text. */
function decoded(text: string): unknown {
  try {
    return decodeJson(text);
  } catch {
    return text;
  }
}

/**
 * A job without its bulky parts, in the order the API lists fields. The error keeps its
 * name, message and reason; `lane` is the config name (the adapter's is namespaced).
 */
export function summaryView(info: JobSummary, lane: string): JobSummaryView {
  const view: JobSummaryView = {
    id: info.id,
    lane,
    task: info.task,
    state: info.state,
    priority: info.priority,
    attempt: info.attempt,
    publishedAt: info.publishedAt,
    runAt: info.runAt,
  };
  if (info.changedAt !== undefined) view.changedAt = info.changedAt;
  if (info.finishedAt !== undefined) view.finishedAt = info.finishedAt;
  if (info.error !== undefined) {
    const { name, message, reason } = info.error;
    view.error = { name, message, reason };
  }
  if (info.tags !== undefined) view.tags = info.tags;
  if (info.group !== undefined) view.group = info.group;
  if (info.expiresAt !== undefined) view.expiresAt = info.expiresAt;
  return view;
}

/**
 * A job with its payload, appData, result and progress decoded (a payload that is not JSON
 * is shown as text), and its history, logs and error with stack.
 */
export function jobView(info: JobInfo, lane: string): JobView {
  const view: JobView = { ...summaryView(info, lane), payload: null, history: info.history };
  if (info.error !== undefined) view.error = info.error;
  try {
    view.payload = decodeJson(info.payload);
  } catch {
    view.payloadText = info.payload;
  }
  if (info.appData !== undefined) view.appData = decoded(info.appData);
  if (info.result !== undefined) view.result = decoded(info.result);
  if (info.progress !== undefined) view.progress = decoded(info.progress);
  if (info.logs !== undefined) view.logs = info.logs;
  if (info.logsDropped !== undefined) view.logsDropped = info.logsDropped;
  if (info.dependencies !== undefined) {
    view.dependencies = info.dependencies.map(({ result, ...d }) =>
      result === undefined ? d : { ...d, result: decoded(result) },
    );
  }
  if (info.dependents !== undefined) view.dependents = info.dependents;
  return view;
}

/**
 * Counts with every state: `expired` is 0 where the adapter has no expiry (nothing
 * expires), `blocked` where it has no flows (nothing waits for another job).
 */
export function countsView(counts: LaneCounts): z.infer<typeof CountsSchema> {
  return {
    waiting: counts.waiting,
    delayed: counts.delayed,
    blocked: counts.blocked ?? 0,
    active: counts.active,
    succeeded: counts.succeeded,
    failed: counts.failed,
    canceled: counts.canceled,
    expired: counts.expired ?? 0,
  };
}

function durationView(summary: Summary): z.infer<typeof SummarySchema> {
  const p = (q: number) => (summary.count === 0 ? null : percentile(summary, q));
  const histogram: z.infer<typeof SummarySchema>["histogram"] = [];
  HISTOGRAM_BOUNDS_MS.forEach((upper, i) => {
    const count = summary.histogram[i] ?? 0;
    if (count === 0) return;
    histogram.push({
      lowerMs: i === 0 ? 0 : (HISTOGRAM_BOUNDS_MS[i - 1] as number),
      upperMs: Number.isFinite(upper) ? upper : null,
      count,
    });
  });
  return {
    count: summary.count,
    meanMs: summary.mean,
    stddevMs: stddev(summary),
    p50Ms: p(0.5),
    p90Ms: p(0.9),
    p99Ms: p(0.99),
    histogram,
  };
}

const DAY_MS = 86_400_000;

/** A day's stats with percentiles, sparse histograms and throughput; `nowMs` says how much of today has passed. */
export function statsView(
  stats: DayStats | undefined,
  day: string,
  nowMs: number,
): z.infer<typeof StatsSchema> {
  const empty: Summary = { count: 0, mean: 0, m2: 0, histogram: {} };
  const start = Date.parse(`${day}T00:00:00Z`);
  // Minutes of the day that have passed: all of a past day, none of a future one.
  const elapsedMs = Math.min(DAY_MS, Math.max(0, nowMs - start));
  const finished = stats?.run.count ?? 0;
  return {
    day,
    wait: durationView(stats?.wait ?? empty),
    run: durationView(stats?.run ?? empty),
    failures: stats?.failures ?? 0,
    retries: stats?.retries ?? 0,
    throughput: {
      finished,
      perMinute: elapsedMs === 0 ? 0 : finished / (elapsedMs / 60_000),
    },
  };
}

export function laneConfigView(lane: LaneHandle) {
  const c = lane.config;
  return {
    priority: c.priority,
    batchSize: c.batchSize,
    leaseMs: c.leaseMs,
    longPollMs: c.longPollMs,
    numIterations: c.numIterations,
    ...(c.maxConcurrency !== undefined ? { maxConcurrency: c.maxConcurrency } : {}),
    ...(c.rateLimit !== undefined ? { rateLimit: { ...c.rateLimit } } : {}),
    ...(c.groups !== undefined ? { groups: { ...c.groups } } : {}),
    maxStalls: c.maxStalls,
    historyLimit: c.historyLimit,
  };
}

/**
 * A payload schema's JSON Schema (2020-12) through Standard JSON Schema (zod 4 and other
 * libraries implement it), without `$schema` so it can sit inside an OpenAPI document;
 * null when the library offers none or cannot express the schema.
 */
export function payloadJsonSchema(task: AnyTask): Record<string, unknown> | null {
  const standard = (task.schema as unknown as Partial<StandardJSONSchemaV1>)["~standard"];
  const converter = standard?.jsonSchema;
  if (converter === undefined) return null;
  try {
    const { $schema: _dropped, ...schema } = converter.input({ target: "draft-2020-12" });
    return schema;
  } catch {
    return null;
  }
}

export function taskView(task: AnyTask): z.infer<typeof TaskSchema> {
  return {
    name: task.name,
    lane: task.lane,
    timeLimitMs: task.timeLimitMs ?? null,
    retry: { ...task.retry },
    payloadSchema: payloadJsonSchema(task),
  };
}
