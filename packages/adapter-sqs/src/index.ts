export { SQS_MAX_MESSAGE_BYTES } from "./codec.ts";
export {
  createSqsAdapter,
  type PriorityLanes,
  SQS_MAX_CALL_BATCH,
  SQS_MAX_DELAY_MS,
  SQS_MAX_LEASE_MS,
  type SqsAdapter,
  type SqsAdapterOptions,
  sqsCapabilities,
} from "./sqs-adapter.ts";
export { type LaneBand, type SqsLane, SqsPutError } from "./sqs-lane.ts";
