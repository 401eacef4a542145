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
  LaneCounts,
  LaneStore,
  LaneStoreOptions,
  LifecycleEventType,
  ListOptions,
  Lock,
  LockStatus,
  NackItem,
  NewJob,
  PutResult,
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
  validateLaneStoreOptions,
} from "./adapter.ts";
export type {
  LaneHandle,
  PublishItem,
  PublishOptions,
  Tasklane,
  TasklaneOptions,
} from "./client.ts";
export { createTasklane, MAX_JOB_PRIORITY, MIN_JOB_PRIORITY } from "./client.ts";
export type { Clock, ManualClock, TimerHandle } from "./clock.ts";
export { createManualClock, flushAsync, sleep, systemClock } from "./clock.ts";
export { byteLength, decodeJson, encodeJson } from "./codec.ts";
export type { ErrorCode, ValidationIssue } from "./errors.ts";
export {
  AdapterError,
  CanceledError,
  ClosedError,
  ConfigError,
  LaneFullError,
  LockLostError,
  PayloadTooLargeError,
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
export type { KaleQueueConfig, LaneConfig, LaneConfigInput } from "./lane-config.ts";
export { DEFAULT_RETENTION, fromKaleConfig, parseLaneConfig } from "./lane-config.ts";
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
export type { StopOptions, Worker, WorkerMetrics, WorkerOptions } from "./worker.ts";
export { toJobError } from "./worker.ts";
