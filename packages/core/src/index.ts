export type {
  Adapter,
  AdapterEvent,
  CancelResult,
  Capabilities,
  CapabilityLimits,
  FailReason,
  JobError,
  JobEvent,
  JobInfo,
  JobState,
  LifecycleEventType,
  ListOptions,
  Lock,
  LockStatus,
  NackItem,
  NewJob,
  PutResult,
  Queue,
  QueueCounts,
  QueueOptions,
  ReleaseItem,
  ReservedJob,
  ReserveOptions,
  ReserveResult,
  RetentionPolicy,
  SubscribeOptions,
} from "./adapter.ts";
export {
  fullCapabilities,
  isLifecycleEvent,
  LIFECYCLE_EVENT_TYPES,
  PENDING_STATES,
  validateQueueOptions,
} from "./adapter.ts";
export { createTasklane } from "./client/create-tasklane.ts";
export { MAX_JOB_PRIORITY, MIN_JOB_PRIORITY } from "./client/job-encoder.ts";
export type {
  PublishItem,
  PublishOptions,
  QueueHandle,
  Tasklane,
  TasklaneOptions,
} from "./client/tasklane.ts";
export type { Clock, ManualClock, TimerHandle } from "./clock.ts";
export { createManualClock, flushAsync, sleep, systemClock } from "./clock.ts";
export { byteLength, decodeJson, encodeJson } from "./codec.ts";
export type { ErrorCode, ValidationIssue } from "./errors.ts";
export {
  AdapterError,
  CanceledError,
  ConfigError,
  LockLostError,
  PayloadTooLargeError,
  QueueClosedError,
  QueueFullError,
  ShutdownError,
  TasklaneError,
  TimeoutError,
  UnknownTaskError,
  UnrecoverableError,
  UnsupportedError,
  ValidationError,
} from "./errors.ts";
export type { TasklaneEvents } from "./events.ts";
export { TasklaneEventBus } from "./events.ts";
export type { KaleQueueConfig, QueueConfig, QueueConfigInput } from "./queue-config.ts";
export { DEFAULT_RETENTION, fromKaleConfig, parseQueueConfig } from "./queue-config.ts";
export type { RetryOptions, RetryPolicy } from "./retry.ts";
export { backoffMs, DEFAULT_RETRY, resolveRetry } from "./retry.ts";
export * from "./selectors/index.ts";
export type { DayStats, Summary } from "./stats.ts";
export {
  addSample,
  bucketIndex,
  dayOf,
  emptyDayStats,
  emptySummary,
  HISTOGRAM_BOUNDS_MS,
  HISTOGRAM_SIZE,
  mergeSummaries,
  percentile,
  stddev,
  variance,
} from "./stats.ts";
export type { AnyTask, JobContext, Task, TaskInput, TaskOptions } from "./task.ts";
export { defineTask, validatePayload } from "./task.ts";
export type { Worker } from "./worker/create-worker.ts";
export { toJobError } from "./worker/job-error.ts";
export type { WorkerMetrics } from "./worker/worker-metrics.ts";
export type { StopOptions, WorkerOptions } from "./worker/worker-options.ts";
