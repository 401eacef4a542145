/**
 * `@tasklane/core`: what applications and selector authors need. Adapter authors find
 * the storage contract and its helpers in `@tasklane/core/adapter`; Kale's queue YAML is
 * converted by `@tasklane/core/kale`.
 */
export type {
  Adapter,
  AdapterEvent,
  CancelResult,
  Capabilities,
  FailReason,
  JobError,
  JobEvent,
  JobInfo,
  JobState,
  LaneCounts,
  LifecycleEventType,
  ListOptions,
  PutResult,
  RetentionPolicy,
} from "./adapter.ts";
export { FAIL_REASONS, LIFECYCLE_EVENT_TYPES } from "./adapter.ts";
export { createTasklane } from "./client/create-tasklane.ts";
export { MAX_JOB_PRIORITY, MIN_JOB_PRIORITY } from "./client/job-encoder.ts";
export type {
  LaneHandle,
  PublishItem,
  PublishOptions,
  Tasklane,
  TasklaneOptions,
} from "./client/tasklane.ts";
export type { Clock, ManualClock, TimerHandle } from "./clock.ts";
export { createManualClock, flushAsync, systemClock } from "./clock.ts";
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
export type { SettleCall, TasklaneEvents } from "./events.ts";
export { TasklaneEventBus } from "./events.ts";
export type {
  Instrumentation,
  JobEnd,
  JobSettling,
  JobTelemetry,
  PublishTelemetry,
  WorkerView,
} from "./instrumentation.ts";
export type { LaneConfig, LaneConfigInput } from "./lane-config.ts";
export type { RetryOptions, RetryPolicy } from "./retry.ts";
export type {
  CreateSelectorOptions,
  HintedStrideOptions,
  Lane,
  LotteryOptions,
  RandomSource,
  ReducedLotteryOptions,
  SelectionContext,
  Selector,
  SelectorName,
  TrickleStrideOptions,
} from "./selectors/index.ts";
export {
  createHintedStride,
  createLottery,
  createReducedLottery,
  createRoundRobin,
  createSeededRandom,
  createSelector,
  createStrictPriority,
  createTrickleStride,
  createWeightedFair,
  drawByTickets,
  highestPriority,
  isSelectorName,
  SELECTOR_NAMES,
} from "./selectors/index.ts";
export type { DayStats, Summary } from "./stats.ts";
export { HISTOGRAM_BOUNDS_MS, percentile } from "./stats.ts";
export type { AnyTask, JobContext, Task, TaskInput, TaskOptions } from "./task.ts";
export { defineTask } from "./task.ts";
export type { Worker } from "./worker/create-worker.ts";
export type { WorkerMetrics } from "./worker/worker-metrics.ts";
export type { StopOptions, WorkerOptions } from "./worker/worker-options.ts";
