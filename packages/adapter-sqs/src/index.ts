export { type Batcher, type BatcherOptions, createBatcher } from "./batcher.ts";
export { SQS_MAX_MESSAGE_BYTES } from "./codec.ts";
export { countSqsRequests, type SqsRequestCounter } from "./request-counter.ts";
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
export { type LaneBand, SqsLane, SqsPutError } from "./sqs-lane.ts";
