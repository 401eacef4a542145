/** The management API's answers, as the dashboard reads them (see @tasklane/http's README). */

export const JOB_STATES = [
  "waiting",
  "delayed",
  "active",
  "succeeded",
  "failed",
  "canceled",
] as const;
export type JobState = (typeof JOB_STATES)[number];

export type Counts = Record<JobState, number>;

export interface Info {
  adapter: { name: string; capabilities: Record<string, boolean | number> };
  /** Absent from an API older than the dashboard: then writes are offered and may get 403. */
  scope?: "read" | "write";
  lanes: string[];
  tasks: string[];
  notYetSupported: string[];
}

export interface Bucket {
  lowerMs: number;
  upperMs: number | null;
  count: number;
}

export interface Summary {
  count: number;
  meanMs: number;
  stddevMs: number;
  p50Ms: number | null;
  p90Ms: number | null;
  p99Ms: number | null;
  histogram: Bucket[];
}

export interface Stats {
  day: string;
  wait: Summary;
  run: Summary;
  failures: number;
  retries: number;
  throughput: { finished: number; perMinute: number };
}

export interface Lane {
  name: string;
  config: {
    priority: number;
    batchSize: number;
    leaseMs: number;
    longPollMs: number;
    numIterations: number;
    maxConcurrency?: number;
    maxStalls: number;
    historyLimit: number;
  };
  counts: Counts;
  countsExact: boolean;
  paused: boolean | null;
  stats: Stats | null;
}

export interface JobError {
  name: string;
  message: string;
  stack?: string;
  reason: string;
}

export interface HistoryEntry {
  at: number;
  event: string;
  detail?: string;
}

export interface Job {
  id: string;
  lane: string;
  task: string;
  state: JobState;
  priority: number;
  attempt: number;
  publishedAt: number;
  runAt: number;
  finishedAt?: number;
  payload: unknown;
  payloadText?: string;
  appData?: unknown;
  error?: JobError;
  history: HistoryEntry[];
  /** Fields core does not store yet (see Info.notYetSupported): shown when they come. */
  result?: unknown;
  progress?: unknown;
  logs?: unknown;
}

export interface BulkResult {
  matched: number;
  changed: number;
  more: boolean;
  outcomes?: Record<string, number>;
}

/** One event of GET /events. */
export interface LiveEvent {
  type: string;
  source?: string;
  lane?: string;
  jobId?: string;
  [key: string]: unknown;
}
