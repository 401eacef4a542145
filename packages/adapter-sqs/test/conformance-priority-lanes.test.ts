import { runSqsConformance } from "./conformance-suite.ts";

// A lane of three priority bands (`-high`, base, `-low`).
await runSqsConformance(true);
