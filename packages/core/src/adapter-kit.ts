/**
 * `@tasklane/core/adapter`: for authors of storage adapters (and of tools that drive one
 * directly, like the conformance suite and the benchmarks). It holds the adapter contract
 * (`Adapter`, `LaneStore` and the types their methods take and return) and the helpers
 * the bundled adapters share: option validation, stats math, JSON codec, retry math and
 * the errors adapters throw. Applications need only `@tasklane/core`.
 */
export type {
  AckItem,
  Adapter,
  AdapterEvent,
  CancelResult,
  Capabilities,
  CapabilityLimits,
  ChangeResult,
  DependencyPolicy,
  DependencyView,
  FailReason,
  FailureGroup,
  FinishedState,
  FlowItem,
  FlowPutResult,
  JobDebounce,
  JobDependency,
  JobError,
  JobEvent,
  JobFilter,
  JobFinishedEvent,
  JobInfo,
  JobLogLine,
  JobPage,
  JobRef,
  JobReport,
  JobState,
  JobSummary,
  LaneCounts,
  LaneStore,
  LaneStoreOptions,
  LifecycleEventType,
  ListFilter,
  ListOptions,
  Lock,
  LockStatus,
  MoveResult,
  NackItem,
  NewJob,
  OperatorCapability,
  OperatorLaneMethod,
  PutResult,
  RateLimit,
  ReleaseItem,
  ReportItem,
  ReservedJob,
  ReserveOptions,
  ReserveResult,
  RetentionPolicy,
  ScheduleFireResult,
  SchedulePage,
  ScheduleRecord,
  ScheduleWrite,
  ScheduleWriteResult,
  SubscribeOptions,
  WorkerInfo,
  WorkerRegistration,
} from "./adapter.ts";
export {
  DEPENDENCY_POLICIES,
  FAIL_REASONS,
  fullCapabilities,
  isLifecycleEvent,
  JOB_EVENT_TYPES,
  JOB_STATES,
  LIFECYCLE_EVENT_TYPES,
  MAX_TRACE_CONTEXT_LENGTH,
  NO_OPERATOR_CAPABILITIES,
  OPERATOR_CAPABILITIES,
  PENDING_STATES,
  validateLaneStoreOptions,
} from "./adapter.ts";
export { onlyState } from "./client/job-filter.ts";
export type { Clock, TimerHandle } from "./clock.ts";
export { sleep } from "./clock.ts";
export { byteLength, decodeJson, encodeJson } from "./codec.ts";
export type { ErrorCode } from "./errors.ts";
export {
  AdapterError,
  ClosedError,
  ConfigError,
  LaneFullError,
  PayloadTooLargeError,
  TasklaneError,
  UnsupportedError,
} from "./errors.ts";
export type { LaneConfig, LaneConfigInput } from "./lane-config.ts";
export { DEFAULT_RETENTION, laneConfigSchema, parseLaneConfig } from "./lane-config.ts";
export {
  clockSchema,
  configErrorFrom,
  count,
  functionSchema,
  MAX_TIMER_MS,
  nowSchema,
  parseOptions,
  randomSource,
  settingsObject,
  timerMs,
  wholeMs,
  wholeTimerMs,
} from "./options.ts";
export type { RetryOptions, RetryPolicy } from "./retry.ts";
export { backoffMs, DEFAULT_RETRY, resolveRetry } from "./retry.ts";
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
export { stripUndefined } from "./strip-undefined.ts";
export { toJobError } from "./worker/job-error.ts";
