/** The management API's answers, as the dashboard reads them (see @tasklane/http's README). */

export const JOB_STATES = [
  "waiting",
  "delayed",
  "blocked",
  "active",
  "succeeded",
  "failed",
  "canceled",
  "expired",
] as const;
export type JobState = (typeof JOB_STATES)[number];

/** Every state's count (`expired` is 0 where the adapter has no expiry, `blocked` where no flows). */
export type Counts = Record<JobState, number>;

export interface Info {
  adapter: { name: string; capabilities: Record<string, boolean | number> };
  /** Absent from an API older than the dashboard: then writes are offered and may get 403. */
  scope?: "read" | "write";
  lanes: string[];
  tasks: string[];
  /** Features this version of the API does not have yet (none now; kept for older APIs). */
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
    rateLimit?: { max: number; durationMs: number };
    groups?: { concurrency?: number; rateLimit?: { max: number; durationMs: number } };
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

export interface LogLine {
  at: number;
  attempt: number;
  message: string;
}

/** A job as a list with fields=summary gives it: no payload, history, result or logs. */
export interface JobSummary {
  id: string;
  lane: string;
  task: string;
  state: JobState;
  priority: number;
  attempt: number;
  publishedAt: number;
  runAt: number;
  /** When it entered its state (capability search). */
  changedAt?: number;
  finishedAt?: number;
  error?: JobError;
  /** Capability tags. */
  tags?: string[];
  /** Capability groups: its fair group. */
  group?: string;
  /** When it expires unless started (capability expiry). */
  expiresAt?: number;
}

export interface Job extends JobSummary {
  payload: unknown;
  payloadText?: string;
  appData?: unknown;
  history: HistoryEntry[];
  /** What the handler returned (capability results). */
  result?: unknown;
  /** The latest ctx.progress value (capability reports). */
  progress?: unknown;
  /** The last ctx.log lines, oldest first (capability reports). */
  logs?: LogLine[];
  logsDropped?: number;
  /** The jobs it waits (or waited) for, with how each ended (capability flows). */
  dependencies?: Array<{
    lane: string;
    id: string;
    onFailure: "fail" | "ignore" | "continue";
    task?: string;
    state?: JobState | "deleted";
    result?: unknown;
  }>;
  /** The jobs waiting for it (capability flows). */
  dependents?: Array<{ lane: string; jobId: string }>;
}

/** Failed jobs of one error name (GET failure-groups). */
export interface FailureGroup {
  lane: string;
  group: string;
  count: number;
  sample: { jobId: string; task: string; message: string; stack?: string; failedAt: number };
}

/** A running worker (GET workers). */
export interface WorkerInfo {
  id: string;
  host: string;
  pid: number;
  lanes: string[];
  concurrency: number;
  held: number;
  running: number;
  jobs: Array<{ lane: string; jobId: string }>;
  startedAt: number;
  version: string;
  lastHeartbeatAt: number;
  expiresAt: number;
}

export interface BulkResult {
  matched: number;
  changed: number;
  more: boolean;
  outcomes?: Record<string, number>;
  /** Priority by filter: the cursor to go on from. */
  next?: string;
}

/** One event of GET /events. */
export interface LiveEvent {
  type: string;
  source?: string;
  lane?: string;
  jobId?: string;
  [key: string]: unknown;
}

/** GET /schedules' entries: a recurring schedule and where it stands. */
export interface Schedule {
  id: string;
  lane: string;
  task: string;
  payload: unknown;
  jobOptions: Record<string, unknown>;
  spec: {
    cron?: string;
    everyMs?: number;
    timezone?: string;
    startAt?: number;
    endAt?: number;
    limit?: number;
    catchUp: string;
    graceMs: number;
  };
  /** The next slot (epoch ms); null when paused or past its end or limit. */
  nextAt: number | null;
  paused: boolean;
  runs: number;
  lastSlotAt?: number;
  createdAt: number;
  updatedAt: number;
  revision: number;
}
