/**
 * The API's request and response schemas: zod schemas that validate requests and, through
 * @hono/zod-openapi, become the OpenAPI document. A schema with a `meta({ id })` is a named
 * component of the document.
 */
import {
  DEPENDENCY_POLICIES,
  FAIL_REASONS,
  JOB_EVENT_TYPES,
  JOB_STATES,
  MAX_JOB_PRIORITY,
  MAX_TAG_LENGTH,
  MAX_TAGS,
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

const jobSummaryShape = {
  id: z.string(),
  lane: z.string(),
  task: z.string(),
  state: JobStateSchema,
  priority: z.number().int(),
  attempt: z.number().int().meta({ description: "Deliveries so far" }),
  publishedAt: epochMs,
  runAt: epochMs,
  changedAt: epochMs.optional().meta({
    description:
      "When the job entered its state (what since and until compare); adapters with capability search",
  }),
  finishedAt: epochMs.optional(),
  error: JobErrorSchema.optional(),
  tags: z.array(z.string()).optional().meta({ description: "Capability tags" }),
  group: z.string().optional().meta({ description: "Its fair group (capability groups)" }),
  expiresAt: epochMs
    .optional()
    .meta({ description: "When the job expires unless it has started (capability expiry)" }),
};

/** A job without payload, appData, result, progress, logs, history or stack (fields=summary). */
export const JobSummarySchema = z.object(jobSummaryShape).meta({ id: "JobSummary" });

export const JobLogLineSchema = z
  .object({
    at: epochMs,
    attempt: z.number().int().meta({ description: "The delivery that logged it" }),
    message: z.string(),
  })
  .meta({ id: "JobLogLine" });

export const JobSchema = z
  .object({
    ...jobSummaryShape,
    payload: z.unknown().meta({ description: "The payload, decoded" }),
    payloadText: z.string().optional().meta({
      description: "The stored payload, when it is not valid JSON (payload is then null)",
    }),
    appData: z.unknown().optional(),
    history: z.array(
      z.object({
        at: epochMs,
        event: z.enum(JOB_EVENT_TYPES),
        detail: z.string().optional(),
      }),
    ),
    result: z.unknown().optional().meta({
      description:
        "What the handler returned, decoded (capability results); text that is not JSON comes as a string",
    }),
    progress: z.unknown().optional().meta({
      description: "The latest ctx.progress value, decoded (capability reports)",
    }),
    logs: z.array(JobLogLineSchema).optional().meta({
      description: "The last ctx.log lines, oldest first, across attempts (capability reports)",
    }),
    logsDropped: z
      .number()
      .int()
      .optional()
      .meta({ description: "Log lines dropped to keep the log bounded" }),
    dependencies: z
      .array(
        z.object({
          lane: z.string(),
          id: z.string(),
          onFailure: z.enum(DEPENDENCY_POLICIES),
          task: z.string().optional(),
          state: z
            .enum(["succeeded", "failed", "canceled", "expired", "deleted"])
            .optional()
            .meta({ description: "How it ended; absent while it has not" }),
          result: z.unknown().optional().meta({
            description: "Its result, decoded, when it succeeded with one (capability results)",
          }),
        }),
      )
      .optional()
      .meta({
        description:
          "The jobs it waits (or waited) for, in the order given, with their ends (capability flows)",
      }),
    dependents: z
      .array(z.object({ lane: z.string(), jobId: z.string() }))
      .optional()
      .meta({ description: "The jobs waiting for it (capability flows)" }),
  })
  .meta({ id: "Job" });

export const CountsSchema = z
  .object({
    waiting: z.number().int(),
    delayed: z.number().int(),
    blocked: z.number().int().meta({
      description: "Jobs waiting for the jobs they depend on (0 where the adapter has no flows)",
    }),
    active: z.number().int(),
    succeeded: z.number().int(),
    failed: z.number().int(),
    canceled: z.number().int(),
    expired: z
      .number()
      .int()
      .meta({ description: "Jobs that expired unstarted (0 where the adapter has no expiry)" }),
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
    rateLimit: z
      .object({ max: z.number().int(), durationMs: z.number().int() })
      .optional()
      .meta({ description: "At most max jobs started in any window of durationMs" }),
    groups: z
      .object({
        concurrency: z.number().int().optional(),
        rateLimit: z.object({ max: z.number().int(), durationMs: z.number().int() }).optional(),
      })
      .optional()
      .meta({
        description:
          "Fair groups: round-robin, at most concurrency per group at once, at most rateLimit.max of one group started in any window of rateLimit.durationMs",
      }),
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

const queryText = z.string().min(1).max(128);
const queryEpochMs = z.coerce
  .number()
  .refine(Number.isFinite, "must be epoch milliseconds")
  .meta({ description: "Epoch milliseconds" });

/** The search conditions of a list or a count (every condition given must hold). */
const filterQueryShape = {
  task: queryText.optional().meta({ description: "Only jobs of this task (capability search)" }),
  tag: queryText
    .optional()
    .meta({ description: "Only jobs with this tag (capabilities search and tags)" }),
  errorName: queryText.optional().meta({
    description: "Only jobs whose last error has this name: a failure group (capability search)",
  }),
  since: queryEpochMs.optional().meta({
    description: "Only jobs that entered their state at or after this time (capability search)",
  }),
  until: queryEpochMs.optional().meta({
    description: "Only jobs that entered their state before this time (capability search)",
  }),
};

export const ListQuery = z.object({
  state: JobStateSchema.optional().meta({
    description:
      "Jobs in this state; without it, every state in turn (waiting, delayed, blocked, active, succeeded, failed, canceled, expired), which needs capability search",
  }),
  ...filterQueryShape,
  fields: z.enum(["full", "summary"]).optional().meta({
    description:
      "summary: lines without payload, appData, result, progress, logs, history and stack (default full)",
  }),
  cursor: z.string().min(1).max(4_096).optional().meta({
    description:
      'Go on from where a listing stopped: the `next` of its last line (`{"next": "…"}`); capability search',
  }),
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

export const CountQuery = z.object({
  state: JobStateSchema.optional().meta({ description: "Jobs in this state; default every state" }),
  ...filterQueryShape,
});

export const CountSchema = z
  .object({
    lane: z.string(),
    count: z.number().int(),
    exact: z.boolean().meta({ description: "false: the backend counts approximately" }),
  })
  .meta({ id: "JobCount" });

export const PausedSchema = z.object({ lane: z.string(), paused: z.boolean() });

export const JobsSchema = z.object({ jobs: z.array(JobSchema) });

export const SingleResultSchema = z
  .object({
    id: z.string(),
    outcome: z.enum(["retried", "canceled", "deleted", "promoted", "prioritized", "moved"]),
    priority: z.number().int().optional().meta({ description: "prioritized: the new priority" }),
    lane: z.string().optional().meta({ description: "moved: the lane the job is in now" }),
  })
  .meta({ id: "JobOutcome" });

const priority = z
  .number()
  .int()
  .min(MIN_JOB_PRIORITY)
  .max(MAX_JOB_PRIORITY)
  .meta({ description: `Job priority, ${MIN_JOB_PRIORITY}..${MAX_JOB_PRIORITY}, higher first` });

export const PriorityBody = z.object({ priority }).strict();

const toLane = z
  .string()
  .min(1)
  .max(64)
  .meta({ description: "The lane to move the jobs to (as configured)", example: "low" });

export const MoveBody = z.object({ toLane }).strict();
export const MoveShape = { toLane };

/** A bulk body's `cursor`, for an operation that leaves the jobs it changes in their state. */
export const BulkCursorField = z.string().min(1).max(4_096).optional().meta({
  description:
    "With filter: go on from the `next` of the previous call (this operation leaves jobs in their state, so the filter alone would find them again)",
});

const bodyText = z.string().min(1).max(128);
const bodyEpochMs = z.number().refine(Number.isFinite, "must be epoch milliseconds");

/** The body of a bulk operation: `{ ids }` or `{ filter, limit }`, states limited per operation. */
export function bulkBodySchema<E extends z.ZodRawShape = Record<never, never>>(
  id: string,
  states: readonly [(typeof JOB_STATES)[number], ...(typeof JOB_STATES)[number][]],
  maxBatch: number,
  extra: E = {} as E,
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
        .object({
          state: z.enum(states),
          task: bodyText.optional(),
          tag: bodyText.optional(),
          errorName: bodyText.optional(),
          since: bodyEpochMs.optional(),
          until: bodyEpochMs.optional(),
        })
        .strict()
        .optional()
        .meta({
          description:
            "Jobs matching this filter: a state, and with capability search task, tag, errorName, since, until (a failure group: state failed and its errorName)",
        }),
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
    .superRefine((input, ctx) => {
      const body = input as { ids?: unknown; filter?: unknown; limit?: unknown; cursor?: unknown };
      if ((body.ids === undefined) === (body.filter === undefined)) {
        ctx.addIssue({
          code: "custom",
          path: body.ids === undefined ? ["ids"] : ["filter"],
          message: "give ids or filter, not both and not neither",
        });
      } else if (body.ids !== undefined && body.limit !== undefined) {
        ctx.addIssue({ code: "custom", path: ["limit"], message: "limit goes with filter only" });
      } else if (body.ids !== undefined && body.cursor !== undefined) {
        ctx.addIssue({ code: "custom", path: ["cursor"], message: "cursor goes with filter only" });
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
    outcomes: z.record(z.string(), z.number().int()).optional().meta({
      description:
        "Per outcome, how many ids had it: cancel (canceled, not_found, finished), promote and priority (ok, not_found, wrong_state), move (moved, not_found, finished, duplicate)",
    }),
    next: z.string().optional().meta({
      description:
        "Priority by filter: pass it back as cursor to go on (jobs keep their state, so the filter alone would find them again)",
    }),
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
    group: z.string().min(1).max(128).optional().meta({
      description: "Fair group, e.g. a tenant, on a lane with groups (capability groups)",
    }),
    debounce: z
      .object({
        key: z.string().min(1).max(128),
        ms: z.number().int().min(1),
        keep: z.enum(["last", "first"]).optional(),
      })
      .strict()
      .optional()
      .meta({
        description:
          "Collapse publishes of one key within ms into one job: the last payload (keep last) or the first (capability debounce)",
      }),
    tags: z
      .array(z.string().min(1).max(MAX_TAG_LENGTH))
      .max(MAX_TAGS)
      .refine((tags) => new Set(tags).size === tags.length, "must not repeat a tag")
      .optional()
      .meta({
        description: `Labels to find the job by, at most ${MAX_TAGS} distinct strings of 1-${MAX_TAG_LENGTH} characters (capability tags)`,
      }),
    dependsOn: z
      .array(
        z.union([
          z.string().min(1).max(128),
          z
            .object({
              jobId: z.string().min(1).max(128),
              lane: z.string().min(1).optional(),
              onFailure: z.enum(DEPENDENCY_POLICIES).optional(),
            })
            .strict(),
        ]),
      )
      .min(1)
      .max(1000)
      .optional()
      .meta({
        description:
          "Jobs this one waits for (capability flows): ids in the task's lane, or { jobId, lane, onFailure } (onFailure fail, the default, ignore or continue); the job is blocked until they end",
      }),
    expiresInMs: z.number().positive().optional().meta({
      description:
        "The job expires if it has not started this many ms from now (capability expiry); or expiresAt",
    }),
    expiresAt: epochMs.optional().meta({
      description: "The job expires if it has not started by then (capability expiry)",
    }),
  })
  .strict()
  .refine((body) => body.expiresInMs === undefined || body.expiresAt === undefined, {
    path: ["expiresInMs"],
    message: "give expiresInMs or expiresAt, not both",
  })
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
    status: z.enum(["created", "duplicate", "debounced"]),
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
        "Features with an endpoint no adapter offers in this version: none in this one (every endpoint depends on the adapter's capabilities)",
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

export const FailureGroupSchema = z
  .object({
    lane: z.string(),
    group: z.string().meta({ description: "The error name the group's jobs share" }),
    count: z.number().int().meta({ description: "Failed jobs in the group now" }),
    sample: z
      .object({
        jobId: z.string(),
        task: z.string(),
        message: z.string(),
        stack: z.string().optional(),
        failedAt: epochMs,
      })
      .meta({ description: "The group's most recent failure" }),
  })
  .meta({ id: "FailureGroup" });

export const FailureGroupsSchema = z.object({ groups: z.array(FailureGroupSchema) });

export const WorkerSchema = z
  .object({
    id: z.string(),
    host: z.string(),
    pid: z.number().int(),
    lanes: z.array(z.string()).meta({ description: "The lanes it serves (as configured)" }),
    concurrency: z.number().int(),
    held: z
      .number()
      .int()
      .meta({ description: "Jobs whose lease it holds (running and prefetched)" }),
    running: z.number().int().meta({ description: "Jobs whose handler runs now" }),
    jobs: z
      .array(z.object({ lane: z.string(), jobId: z.string() }))
      .meta({ description: "Up to 100 of the jobs it holds" }),
    startedAt: epochMs,
    version: z.string().meta({ description: "The tasklane version it runs" }),
    lastHeartbeatAt: epochMs.meta({ description: "Its last registration (the backend's clock)" }),
    expiresAt: epochMs.meta({
      description: "When its entry lapses unless renewed: three heartbeat periods after the last",
    }),
  })
  .meta({ id: "Worker" });

export const WorkersSchema = z.object({ workers: z.array(WorkerSchema) });

export const ScheduleSchema = z
  .object({
    id: z.string(),
    lane: z.string().meta({ description: "The lane it lives in and puts its runs into" }),
    task: z.string(),
    payload: z.unknown(),
    jobOptions: z.object({
      priority: z.number().optional(),
      appData: z.unknown().optional(),
      tags: z.array(z.string()).optional(),
      expiresInMs: z.number().optional(),
      group: z.string().optional(),
    }),
    spec: z.object({
      cron: z.string().optional(),
      everyMs: z.number().optional(),
      timezone: z.string().optional(),
      startAt: z.number().optional(),
      endAt: z.number().optional(),
      limit: z.number().optional(),
      catchUp: z.enum(["skip", "one", "all"]),
      graceMs: z.number(),
    }),
    nextAt: z
      .number()
      .nullable()
      .meta({ description: "Epoch ms of the next slot; null when paused or ended" }),
    paused: z.boolean(),
    runs: z.number().int().meta({ description: "Runs put so far" }),
    lastSlotAt: z.number().optional(),
    createdAt: z.number(),
    updatedAt: z.number(),
    revision: z.number().int(),
  })
  .meta({ id: "Schedule" });

export const SchedulesSchema = z.object({ schedules: z.array(ScheduleSchema) });
export const ScheduleParams = z.object({
  id: z.string().min(1).max(128).meta({ description: "Schedule id" }),
});
export const ScheduleRemovedSchema = z.object({ id: z.string(), removed: z.literal(true) });

/** Longest a result request waits for its job, ms. */
export const MAX_RESULT_WAIT_MS = 60_000;

export const ResultQuery = z.object({
  waitMs: z.coerce
    .number()
    .int()
    .min(0)
    .max(MAX_RESULT_WAIT_MS)
    .optional()
    .meta({
      description: `Wait up to this long for the job to finish (capability waitFor), at most ${MAX_RESULT_WAIT_MS}; default 0: answer at once`,
    }),
});

export const JobResultSchema = z
  .object({
    id: z.string(),
    lane: z.string(),
    state: JobStateSchema,
    done: z.boolean().meta({
      description: "The job has finished: succeeded, failed, canceled or expired",
    }),
    result: z.unknown().optional().meta({
      description: "succeeded: what the handler returned, decoded (capability results)",
    }),
    error: JobErrorSchema.optional().meta({ description: "failed: its last error" }),
    finishedAt: epochMs.optional(),
  })
  .meta({ id: "JobResult" });
