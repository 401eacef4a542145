/** How core's values look in the API's answers. */
import type { StandardJSONSchemaV1 } from "@standard-schema/spec";
import {
  type AnyTask,
  type DayStats,
  HISTOGRAM_BOUNDS_MS,
  type JobInfo,
  type LaneHandle,
  percentile,
  type Summary,
} from "@tasklane/core";
import { decodeJson, stddev } from "@tasklane/core/adapter";
import type { z } from "zod";
import type { JobSchema, StatsSchema, SummarySchema, TaskSchema } from "./schemas.ts";

export type JobView = z.infer<typeof JobSchema>;

/** A job with its payload and appData decoded (a payload that is not JSON is shown as text). */
export function jobView(info: JobInfo): JobView {
  const view: JobView = {
    id: info.id,
    lane: info.lane,
    task: info.task,
    state: info.state,
    priority: info.priority,
    attempt: info.attempt,
    publishedAt: info.publishedAt,
    runAt: info.runAt,
    payload: null,
    history: info.history,
  };
  if (info.finishedAt !== undefined) view.finishedAt = info.finishedAt;
  try {
    view.payload = decodeJson(info.payload);
  } catch {
    view.payloadText = info.payload;
  }
  if (info.appData !== undefined) {
    try {
      view.appData = decodeJson(info.appData);
    } catch {
      view.appData = info.appData;
    }
  }
  if (info.error !== undefined) view.error = info.error;
  return view;
}

/** The lane name `info.lane` carries is the backend's (namespaced); answers use the config name. */
export function withLane(info: JobInfo, lane: string): JobInfo {
  return info.lane === lane ? info : { ...info, lane };
}

function summaryView(summary: Summary): z.infer<typeof SummarySchema> {
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
    wait: summaryView(stats?.wait ?? empty),
    run: summaryView(stats?.run ?? empty),
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
