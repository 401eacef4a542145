/**
 * Not public API; for this repository's benchmarks and tests; may change in any release.
 */
export { type Batcher, type BatcherOptions, createBatcher } from "./batcher.ts";
export { countSqsRequests, type SqsRequestCounter } from "./request-counter.ts";
