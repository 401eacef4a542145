/**
 * The small interface every system under test implements, and the shapes the harness
 * passes between the orchestrator and the child process that runs one case.
 *
 * A system is one file in `systems/` exporting a `BenchSystem`; the registry in
 * `systems/index.ts` lists it with its backend, lazily imported so a child loads only
 * the system it measures (and a system whose package is missing fails only its cases).
 */

import type { SQSClient } from "@aws-sdk/client-sqs";

/** Which backend a system runs on; ratios compare systems of the same backend only. */
export type Backend = "memory" | "redis" | "sqs";

/** One benchmark job. The payload every system stores is `{ i }` (a small JSON object). */
export interface BenchJob {
  /** Job index, unique within a case; the harness keys timings by it. */
  i: number;
  /** Job-level priority 1..10, higher runs first. Absent: the system's default. */
  priority?: number;
}

/** Callbacks the no-op handler and the system's completion signal call. Must be cheap. */
export interface JobHooks {
  /** Called first thing inside the handler. */
  onStart(i: number): void;
  /** Called when the system reports the job finished (acknowledged / deleted / resolved). */
  onDone(i: number): void;
}

/** Connection details and helpers the harness hands to `setup`. */
export interface SystemEnv {
  /** Unique per case: queue / key names derive from it, so cases never share state. */
  queueName: string;
  /** True when this case publishes jobs with priorities (a system may set up lanes for them). */
  withPriorities: boolean;
  /** The redis-server the orchestrator started for this run (redis systems only). */
  redis?: { host: string; port: number };
  /** The fauxqs server the orchestrator started for this run (sqs systems only). */
  sqs?: { endpoint: string; region: string };
  /** A new SQSClient for `sqs`, with request-counting middleware attached. */
  createSqsClient(): SQSClient;
}

export interface ProcessOptions {
  /** Jobs running at once. */
  concurrency: number;
  hooks: JobHooks;
}

/** A system set up for one case. */
export interface SystemUnderTest {
  /** Publish one job; resolves when the backend accepted it. Called with many in flight. */
  publish(job: BenchJob): Promise<void>;
  /**
   * Publish a chunk (1,000 jobs) with the system's bulk call (`publishMany`, `addBulk`,
   * `saveAll`, one LPUSH, SendMessageBatch of 10 in parallel). Resolves when all were
   * accepted.
   */
  publishMany(jobs: BenchJob[]): Promise<void>;
  /** Start consuming; resolves once the worker is started (jobs may already be running). */
  process(options: ProcessOptions): Promise<void>;
  /** Stop the worker, close every connection, delete what setup created. */
  teardown(): Promise<void>;
}

/** What a system module exports. */
export interface BenchSystem {
  setup(env: SystemEnv): Promise<SystemUnderTest>;
}

/** Registry entry: metadata the orchestrator needs without loading the system. */
export interface SystemEntry {
  name: string;
  backend: Backend;
  /** The package whose version the report shows (the system itself, or "node" for raw). */
  packageName: string;
  /** Supports job-level priorities (the priority latency scenario runs only then). */
  priorities: boolean;
  /**
   * The only scenarios it runs (a system that only publishes has no worker). Default:
   * every scenario that applies to its backend.
   */
  scenarios?: ScenarioName[];
  /** One sentence for the README and the report. */
  description: string;
  load(): Promise<BenchSystem>;
}

export type ScenarioName =
  | "publish-single"
  | "publish-bulk"
  | "process-c1"
  | "process-c10"
  | "process-c100"
  | "latency"
  | "latency-priority"
  | "idle";

/** Sizes of one profile (full or quick). */
export interface Profile {
  name: "full" | "quick";
  /** Jobs per processing/publish case on memory and Redis. */
  jobs: number;
  /** Jobs per processing/publish case on SQS. */
  sqsJobs: number;
  /** Publishes in flight in the one-by-one publish scenario. */
  publishInFlight: number;
  /** Chunk size of the bulk publish scenario. */
  bulkChunk: number;
  /** Latency: steady publish rate, jobs per second. */
  latencyRatePerSec: number;
  /** Latency: measured seconds (after warm-up). */
  latencySeconds: number;
  /** Latency: warm-up seconds, not measured. */
  latencyWarmupSeconds: number;
  /** Latency: worker concurrency. */
  latencyConcurrency: number;
  /** Idle: seconds a started worker is watched on an empty queue. */
  idleSeconds: number;
  /** Runs of each case. */
  repeats: number;
  /** A case's child process is killed after this long. */
  caseTimeoutMs: number;
}

/** What the orchestrator sends to a child. */
export interface CaseSpec {
  runId: string;
  system: string;
  scenario: ScenarioName;
  repeat: number;
  profile: Profile;
  queueName: string;
  redis?: { host: string; port: number };
  sqs?: { endpoint: string; region: string };
  seed: number;
}

/** Flat numeric metrics of one case (keys documented in README.md). */
export type Metrics = Record<string, number>;

/** What a child sends back, and one line of results.jsonl. */
export interface CaseResult {
  runId: string;
  at: string;
  system: string;
  backend: Backend;
  scenario: ScenarioName;
  repeat: number;
  profile: Profile["name"];
  ok: boolean;
  error?: string;
  metrics: Metrics;
  /** Per-command counts (Redis commandstats delta, or SQS requests by command). */
  requests?: Record<string, number>;
  wallMs: number;
}
