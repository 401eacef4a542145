/**
 * The API's request and response schemas: zod schemas that validate requests and, through
 * @hono/zod-openapi, become the OpenAPI document. A schema with a `meta({ id })` is a named
 * component of the document.
 */
import {
  FAIL_REASONS,
  JOB_EVENT_TYPES,
  JOB_STATES,
  MAX_JOB_PRIORITY,
  MIN_JOB_PRIORITY,
} from "@tasklane/core";
import { z } from "zod";

export { JOB_STATES };

export const ErrorBodySchema = z
  .object({
    code: z.string().meta({ description: "Stable, upper-case error code", example: "BAD_REQUEST" }),
    message: z.string(),
    field: z.string().optional().meta({ description: "The request field at fault" }),
    capability: z
      .string()
      .optional()
      .meta({ description: "What the adapter or this version cannot do (501 answers)" }),
  })
  .meta({ id: "Error" });

export const JobStateSchema = z.enum(JOB_STATES).meta({ id: "JobState" });

export const LaneParams = z.object({
  lane: z.string().meta({ description: "Lane name (as configured)", example: "default" }),
});
export const JobParams = LaneParams.extend({
  id: z.string().min(1).max(128).meta({ description: "Job id" }),
});
export const IdParams = z.object({ id: z.string().min(1).max(128) });
export const TaskParams = z.object({
  name: z.string().meta({ description: "Task name", example: "send-email" }),
});

const epochMs = z.number().meta({ description: "Epoch milliseconds" });

export const JobErrorSchema = z
  .object({
    name: z.string(),
    message: z.string(),
    stack: z.string().optional(),
    reason: z.enum(FAIL_REASONS),
  })
  .meta({ id: "JobError" });

export const JobSchema = z
  .object({
    id: z.string(),
    lane: z.string(),
    task: z.string(),
    state: JobStateSchema,
    priority: z.number().int(),
    attempt: z.number().int().meta({ description: "Deliveries so far" }),
    publishedAt: epochMs,
    runAt: epochMs,
    finishedAt: epochMs.optional(),
    payload: z.unknown().meta({ description: "The payload, decoded" }),
    payloadText: z.string().optional().meta({
      description: "The stored payload, when it is not valid JSON (payload is then null)",
    }),
    appData: z.unknown().optional(),
    error: JobErrorSchema.optional(),
    history: z.array(
      z.object({
        at: epochMs,
        event: z.enum(JOB_EVENT_TYPES),
        detail: z.string().optional(),
      }),
    ),
  })
  .meta({ id: "Job" });

export const CountsSchema = z
  .object({
    waiting: z.number().int(),
    delayed: z.number().int(),
    active: z.number().int(),
    succeeded: z.number().int(),
    failed: z.number().int(),
    canceled: z.number().int(),
  })
  .meta({ id: "LaneCounts" });

export const SummarySchema = z
  .object({
    count: z.number().int(),
    meanMs: z.number(),
    stddevMs: z.number(),
    p50Ms: z.number().nullable(),
    p90Ms: z.number().nullable(),
    p99Ms: z.number().nullable(),
    histogram: z
      .array(
        z.object({
          lowerMs: z.number(),
          upperMs: z.number().nullable().meta({ description: "null: the open last bucket" }),
          count: z.number().int(),
        }),
      )
      .meta({ description: "Buckets holding samples, in order (empty ones left out)" }),
  })
  .meta({ id: "DurationSummary" });

export const StatsSchema = z
  .object({
    day: z.string().meta({ example: "2026-11-25" }),
    wait: SummarySchema.meta({ description: "Due → reserved" }),
    run: SummarySchema.meta({ description: "Reserved → finished" }),
    failures: z.number().int().meta({ description: "Jobs that went to the dead letter set" }),
    retries: z.number().int().meta({ description: "Failed attempts scheduled again" }),
    throughput: z.object({
      finished: z.number().int().meta({ description: "Runs finished that day (run.count)" }),
      perMinute: z.number().meta({
        description: "finished / minutes of the day elapsed (all 1,440 for a past day)",
      }),
    }),
  })
  .meta({ id: "DayStats" });

export const LaneConfigSchema = z
  .object({
    priority: z.number().int(),
    batchSize: z.number().int(),
    leaseMs: z.number().int(),
    longPollMs: z.number().int(),
    numIterations: z.number().int(),
    maxConcurrency: z.number().int().optional(),
    maxStalls: z.number().int(),
    historyLimit: z.number().int(),
  })
  .meta({ id: "LaneConfig" });

export const LaneSchema = z
  .object({
    name: z.string(),
    config: LaneConfigSchema,
    counts: CountsSchema,
    countsExact: z.boolean().meta({ description: "false: the backend's counts are approximate" }),
    paused: z.boolean().nullable().meta({ description: "null: the adapter cannot pause" }),
    stats: StatsSchema.nullable().meta({
      description: "Today's stats (UTC); null when the adapter keeps none",
    }),
  })
  .meta({ id: "Lane" });

export const LanesSchema = z.object({ lanes: z.array(LaneSchema) });

export const DayQuery = z.object({
  day: z
    .string()
    .regex(/^\d{4}-\d{2}-\d{2}$/, "must be a UTC day, YYYY-MM-DD")
    .optional()
    .meta({ description: "UTC day, YYYY-MM-DD; default today" }),
});

export const ListQuery = z.object({
  state: JobStateSchema.meta({ description: "Jobs in this state (the filter adapters offer)" }),
  limit: z.coerce
    .number()
    .int()
    .min(1)
    .optional()
    .meta({ description: "Stream at most this many jobs; default all" }),
  offset: z.coerce.number().int().min(0).optional().meta({
    description: "Skip this many first (read and dropped: costs as much as listing them)",
  }),
});

export const PausedSchema = z.object({ lane: z.string(), paused: z.boolean() });

export const JobsSchema = z.object({ jobs: z.array(JobSchema) });

export const SingleResultSchema = z
  .object({
    id: z.string(),
    outcome: z.enum(["retried", "canceled", "deleted"]),
  })
  .meta({ id: "JobOutcome" });

const priority = z
  .number()
  .int()
  .min(MIN_JOB_PRIORITY)
  .max(MAX_JOB_PRIORITY)
  .meta({ description: `Job priority, ${MIN_JOB_PRIORITY}..${MAX_JOB_PRIORITY}, higher first` });

export const PriorityBody = z.object({ priority }).strict();

/** The body of a bulk operation: `{ ids }` or `{ filter, limit }`, states limited per operation. */
export function bulkBodySchema(
  id: string,
  states: readonly [(typeof JOB_STATES)[number], ...(typeof JOB_STATES)[number][]],
  maxBatch: number,
  extra: z.ZodRawShape = {},
) {
  return z
    .object({
      ids: z
        .array(z.string().min(1).max(128))
        .min(1)
        .max(maxBatch)
        .optional()
        .meta({ description: `Job ids, at most ${maxBatch}` }),
      filter: z
        .object({ state: z.enum(states) })
        .strict()
        .optional()
        .meta({ description: "Jobs matching this filter (every filter the adapter offers)" }),
      limit: z
        .number()
        .int()
        .min(1)
        .max(maxBatch)
        .optional()
        .meta({
          description: `With filter: most jobs this call changes (default and max ${maxBatch})`,
        }),
      ...extra,
    })
    .strict()
    .superRefine((body, ctx) => {
      if ((body.ids === undefined) === (body.filter === undefined)) {
        ctx.addIssue({
          code: "custom",
          path: body.ids === undefined ? ["ids"] : ["filter"],
          message: "give ids or filter, not both and not neither",
        });
      } else if (body.ids !== undefined && body.limit !== undefined) {
        ctx.addIssue({ code: "custom", path: ["limit"], message: "limit goes with filter only" });
      }
    })
    .meta({ id });
}

export const BulkResultSchema = z
  .object({
    matched: z
      .number()
      .int()
      .meta({ description: "Jobs this call selected (the ids, or found by the filter)" }),
    changed: z.number().int().meta({ description: "Jobs the operation changed" }),
    more: z.boolean().meta({
      description:
        "More jobs match the filter: call again (changed jobs leave the filter, so the next call goes on)",
    }),
    outcomes: z
      .record(z.string(), z.number().int())
      .optional()
      .meta({ description: "Cancel: how many ids were canceled, not_found, finished" }),
  })
  .meta({ id: "BulkResult" });

export const EnqueueBody = z
  .object({
    payload: z
      .unknown()
      .refine((v) => v !== undefined, "is required")
      .meta({ description: "The task's payload, validated by its schema" }),
    jobId: z
      .string()
      .min(1)
      .max(128)
      .optional()
      .meta({ description: "Makes the enqueue idempotent (also the Idempotency-Key header)" }),
    priority: priority.optional(),
    delayMs: z.number().min(0).optional(),
    runAt: epochMs.optional(),
    appData: z.unknown().optional().meta({ description: "Kale's app_data, ctx.appData" }),
    groupId: z.string().min(1).max(128).optional().meta({ description: "SQS FIFO message group" }),
  })
  .strict()
  .meta({ id: "EnqueueRequest" });

export const EnqueueHeaders = z.object({
  "idempotency-key": z
    .string()
    .min(1)
    .max(128)
    .optional()
    .meta({ description: "Job id to publish under (idempotent); same as body jobId" }),
});

export const EnqueueResultSchema = z
  .object({
    id: z.string(),
    status: z.enum(["created", "duplicate"]),
    lane: z.string(),
    task: z.string(),
  })
  .meta({ id: "EnqueueResult" });

export const TaskSchema = z
  .object({
    name: z.string(),
    lane: z.string(),
    timeLimitMs: z.number().nullable(),
    retry: z.object({
      maxAttempts: z.number().int(),
      baseMs: z.number(),
      maxMs: z.number(),
      jitter: z.number(),
    }),
    payloadSchema: z.record(z.string(), z.unknown()).nullable().meta({
      description: "JSON Schema (2020-12) of the payload; null when the schema library gives none",
    }),
  })
  .meta({ id: "Task" });

export const TasksSchema = z.object({ tasks: z.array(TaskSchema) });

export const InfoSchema = z
  .object({
    adapter: z.object({
      name: z.string(),
      capabilities: z.record(z.string(), z.union([z.boolean(), z.number()])),
    }),
    scope: z.enum(["read", "write"]).meta({
      description:
        "What authorize granted this caller: write (includes read) or read; a client offers writes only with write",
    }),
    lanes: z.array(z.string()),
    tasks: z.array(z.string()),
    notYetSupported: z.array(z.string()).meta({
      description:
        "Not offered yet: promote, changePriority, failureGroups, workers and schedules answer 501; results, logs and progress are not Job fields yet",
    }),
  })
  .meta({ id: "Info" });

export const EVENT_SOURCES = ["backend", "process", "all"] as const;

export const EventsQuery = z.object({
  lanes: z
    .string()
    .optional()
    .meta({ description: "Comma-separated lane names; default every lane" }),
  types: z
    .string()
    .optional()
    .meta({ description: "Comma-separated event types; default every type" }),
  source: z.enum(EVENT_SOURCES).optional().meta({
    description:
      "backend: every process's lifecycle events (tl.subscribe); process: this process's events (tl.events); default backend where the adapter carries lifecycle events, else process",
  }),
});
