/**
 * `@tasklane/opentelemetry`: tasklane in OpenTelemetry. Producer and consumer spans linked
 * through the job, metrics, and (from `@tasklane/opentelemetry/prometheus`) a Prometheus
 * endpoint.
 *
 *   const tl = createTasklane({ adapter, lanes, tasks, instrumentation: createTelemetry() });
 */
export type {
  ResolvedTelemetryOptions,
  Telemetry,
  TelemetryOptions,
} from "./create-telemetry.ts";
export { createTelemetry, UNKNOWN_TASK } from "./create-telemetry.ts";
export type { Outcome } from "./names.ts";
export {
  ATTR_ATTEMPT,
  ATTR_CALL,
  ATTR_ERROR_TYPE,
  ATTR_FAIL_REASON,
  ATTR_LANE,
  ATTR_MESSAGING_BATCH_MESSAGE_COUNT,
  ATTR_MESSAGING_DESTINATION_NAME,
  ATTR_MESSAGING_MESSAGE_ID,
  ATTR_MESSAGING_OPERATION_NAME,
  ATTR_MESSAGING_OPERATION_TYPE,
  ATTR_MESSAGING_SYSTEM,
  ATTR_OUTCOME,
  ATTR_RESULT,
  ATTR_RETRY_AT,
  ATTR_STATE,
  ATTR_TASK,
  BATCH_BUCKETS,
  DURATION_BUCKETS_S,
  EVENT_CANCELED,
  EVENT_LOCK_LOST,
  EVENT_MOVED,
  EVENT_RETRY,
  EVENT_UNCONFIRMED,
  MESSAGING_SYSTEM,
  METRICS,
  SCOPE_NAME,
} from "./names.ts";
export { VERSION } from "./version.ts";
