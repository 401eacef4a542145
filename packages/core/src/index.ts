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
  ChangeResult,
  DependencyPolicy,
  DependencyView,
  FailReason,
  FailureGroup,
  FinishedState,
  JobError,
  JobEvent,
  JobFilter,
  JobInfo,
  JobLogLine,
  JobPage,
  JobState,
  JobSummary,
  LaneCounts,
  LifecycleEventType,
  ListFilter,
  ListOptions,
  MoveResult,
  PutResult,
  RateLimit,
  RetentionPolicy,
  WorkerInfo,
} from "./adapter.ts";
export {
  DEPENDENCY_POLICIES,
  FAIL_REASONS,
  JOB_EVENT_TYPES,
  JOB_STATES,
  LIFECYCLE_EVENT_TYPES,
  OPERATOR_CAPABILITIES,
} from "./adapter.ts";
export { createTasklane } from "./client/create-tasklane.ts";
export {
  MAX_JOB_PRIORITY,
  MAX_TAG_LENGTH,
  MAX_TAGS,
  MIN_JOB_PRIORITY,
} from "./client/job-encoder.ts";
export type {
  FireReport,
  ScheduleInfo,
  ScheduleJobOptions,
  Schedules,
} from "./client/schedules.ts";
export type {
  DeleteFilter,
  FlowChild,
  FlowJob,
  FlowNode,
  FlowResult,
  JobDependencyInput,
  JobView,
  LaneHandle,
  PublishItem,
  PublishOptions,
  RetryTarget,
  Tasklane,
  TasklaneOptions,
  WaitOptions,
} from "./client/tasklane.ts";
export { WAIT_POLL_MS } from "./client/wait-for.ts";
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
  MovedError,
  PayloadTooLargeError,
  ResultTooLargeError,
  RetryAfterError,
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
export {
  DependencyNotFoundError,
  JobFailedError,
  JobNotFoundError,
  WaitTimeoutError,
} from "./job-errors.ts";
export type { LaneConfig, LaneConfigInput } from "./lane-config.ts";
export type { RetryOptions, RetryPolicy } from "./retry.ts";
export type { CatchUp, ResolvedSpec, ScheduleSpec } from "./schedule.ts";
export {
  MAX_CATCH_UP_RUNS,
  MAX_SCHEDULE_ID_LENGTH,
  MIN_EVERY_MS,
  scheduleJobId,
} from "./schedule.ts";
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
export type {
  AnyTask,
  ChildJob,
  JobContext,
  RunReturn,
  Task,
  TaskInput,
  TaskOptions,
  TaskResult,
} from "./task.ts";
export { defineTask } from "./task.ts";
export { VERSION } from "./version.ts";
export type { Worker } from "./worker/create-worker.ts";
export { MAX_LOG_LINE_LENGTH, MAX_PROGRESS_BYTES } from "./worker/report-buffer.ts";
export type { WorkerMetrics } from "./worker/worker-metrics.ts";
export type { StopOptions, WorkerOptions } from "./worker/worker-options.ts";
