/**
 * Every name tasklane's telemetry emits: span attributes, metric names and their
 * attributes. The `messaging.*` and `error.type` keys are OpenTelemetry's semantic
 * conventions (copied, not imported: the conventions package advises against depending on
 * its incubating entry point at run time; a test checks them against it).
 */

/** `messaging.system` of every span: tasklane's own semantics (lanes, leases) over any backend. */
export const MESSAGING_SYSTEM = "tasklane";

/** The instrumentation scope's name (tracer and meter). */
export const SCOPE_NAME = "@tasklane/opentelemetry";

export const ATTR_MESSAGING_SYSTEM = "messaging.system";
export const ATTR_MESSAGING_OPERATION_TYPE = "messaging.operation.type";
export const ATTR_MESSAGING_OPERATION_NAME = "messaging.operation.name";
export const ATTR_MESSAGING_DESTINATION_NAME = "messaging.destination.name";
export const ATTR_MESSAGING_MESSAGE_ID = "messaging.message.id";
export const ATTR_MESSAGING_BATCH_MESSAGE_COUNT = "messaging.batch.message_count";
export const ATTR_ERROR_TYPE = "error.type";

/** The lane's config name (metrics; spans carry it as `messaging.destination.name`). */
export const ATTR_LANE = "tasklane.lane";
export const ATTR_TASK = "tasklane.task";
/** The delivery's attempt number, from 1 (spans only). */
export const ATTR_ATTEMPT = "tasklane.job.attempt";
/** How a delivery ended (see {@link Outcome}), or how a publish's job was stored. */
export const ATTR_OUTCOME = "tasklane.outcome";
/** Why an attempt failed: one of core's `FAIL_REASONS`. */
export const ATTR_FAIL_REASON = "tasklane.fail.reason";
/** A lane's job state (the lane depth gauge). */
export const ATTR_STATE = "tasklane.state";
/** The adapter call (`put`, `reserve`, `ack`, …). */
export const ATTR_CALL = "tasklane.call";
/** Whether an adapter call threw (`error`) or was answered (`ok`). */
export const ATTR_RESULT = "tasklane.result";
/** When a retry is due, epoch ms (span event `tasklane.job.retry`). */
export const ATTR_RETRY_AT = "tasklane.retry.run_at";

/**
 * How a delivery left the worker: `succeeded`, `retried` (failed, due again), `dead` (the
 * dead letter set), `released` (handed back unstarted), `lock_lost`, `stalled` (its lease
 * ran out while held: also a lock loss), `canceled`, `moved`, `unconfirmed` (the settling
 * call failed and its effect is unknown).
 */
export type Outcome =
  | "succeeded"
  | "retried"
  | "dead"
  | "released"
  | "lock_lost"
  | "stalled"
  | "canceled"
  | "moved"
  | "unconfirmed";

/** Span events. */
export const EVENT_RETRY = "tasklane.job.retry";
export const EVENT_LOCK_LOST = "tasklane.job.lock_lost";
export const EVENT_CANCELED = "tasklane.job.canceled";
export const EVENT_MOVED = "tasklane.job.moved";
export const EVENT_UNCONFIRMED = "tasklane.job.unconfirmed";

/** Metric names. Durations in seconds (unit "s"), as the semantic conventions ask. */
export const METRICS = {
  published: "tasklane.jobs.published",
  started: "tasklane.jobs.started",
  succeeded: "tasklane.jobs.succeeded",
  failed: "tasklane.jobs.failed",
  retried: "tasklane.jobs.retried",
  dead: "tasklane.jobs.dead",
  stalled: "tasklane.jobs.stalled",
  lockLost: "tasklane.jobs.lock_lost",
  canceled: "tasklane.jobs.canceled",
  waitDuration: "tasklane.job.wait.duration",
  runDuration: "tasklane.job.run.duration",
  reserveBatchSize: "tasklane.reserve.batch.size",
  settleDuration: "tasklane.settle.duration",
  laneJobs: "tasklane.lane.jobs",
  workerHeld: "tasklane.worker.jobs.held",
  workerRunning: "tasklane.worker.jobs.running",
  workerFreeSlots: "tasklane.worker.slots.free",
  selectorPicks: "tasklane.selector.picks",
  adapterCalls: "tasklane.adapter.calls",
} as const;

/** Bucket bounds of the duration histograms, seconds: tasklane's stats buckets (1 ms … 1 day). */
export const DURATION_BUCKETS_S = [
  0.001, 0.002, 0.005, 0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1, 2, 5, 10, 30, 60, 120, 300, 600, 1800,
  3600, 7200, 21600, 43200, 86400,
];

/** Bucket bounds of the reserve batch size histogram, jobs. */
export const BATCH_BUCKETS = [0, 1, 2, 5, 10, 20, 50, 100, 200, 500, 1000];
