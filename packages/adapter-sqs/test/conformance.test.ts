import { runSqsConformance } from "./conformance-suite.ts";

// One SQS queue per lane (no job-level priority).
await runSqsConformance(false);
