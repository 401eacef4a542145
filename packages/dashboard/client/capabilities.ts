import { type Info, JOB_STATES, type JobState } from "./types.ts";

/** What the dashboard can offer, each tied to the API's capabilities. */
export type Feature =
  | "retry"
  | "cancel"
  | "cancelActive"
  | "delete"
  | "pause"
  | "promote"
  | "priority"
  | "move"
  | "search"
  | "tags"
  | "expiry"
  | "flows"
  | "list"
  | "get"
  | "stats"
  | "failureGroups"
  | "workers"
  | "schedules"
  | "editSchedules"
  | "results"
  | "logs"
  | "progress";

interface Rule {
  /** The adapter capability it needs (GET /'s adapter.capabilities). */
  capability?: string;
  /** What it does, for "the <adapter> adapter cannot <what>". */
  what: string;
  write?: boolean;
}

const RULES: Record<Feature, Rule> = {
  retry: { capability: "retryFailed", what: "retry failed jobs", write: true },
  cancel: { capability: "cancel", what: "cancel jobs", write: true },
  cancelActive: { capability: "cancelActive", what: "cancel running jobs", write: true },
  delete: { capability: "delete", what: "delete jobs", write: true },
  pause: { capability: "pause", what: "pause lanes", write: true },
  promote: { capability: "promote", what: "promote delayed jobs", write: true },
  priority: { capability: "changePriority", what: "change a job's priority", write: true },
  move: { capability: "move", what: "move jobs between lanes", write: true },
  search: { capability: "search", what: "search jobs" },
  tags: { capability: "tags", what: "tag jobs" },
  expiry: { capability: "expiry", what: "expire jobs" },
  flows: { capability: "flows", what: "make jobs wait for others" },
  list: { capability: "list", what: "list jobs" },
  get: { capability: "get", what: "find a job by id" },
  stats: { capability: "stats", what: "keep wait and run stats" },
  failureGroups: { capability: "failureGroups", what: "group failures" },
  workers: { capability: "workers", what: "list workers" },
  schedules: { capability: "schedules", what: "list schedules" },
  editSchedules: { capability: "schedules", what: "change schedules", write: true },
  results: { capability: "results", what: "store job results" },
  logs: { capability: "reports", what: "store job logs" },
  progress: { capability: "reports", what: "store job progress" },
};

/** `null` when the feature is there, else a short sentence saying why not. */
export type Can = (feature: Feature) => string | null;

export function createCan(info: Info): Can {
  const caps = info.adapter.capabilities;
  return (feature) => {
    const rule = RULES[feature];
    // The API lists every capability (an operator one an adapter leaves out as false); one
    // it does not list, from an older API, is taken as present: the API decides then.
    if (rule.capability !== undefined && caps[rule.capability] === false) {
      return `The ${info.adapter.name} adapter cannot ${rule.what}.`;
    }
    if (rule.write === true && info.scope === "read") {
      return "Your access is read-only.";
    }
    return null;
  };
}

/**
 * The states to show: `expired` only where the adapter can expire jobs, `blocked` only
 * where it has flows (elsewhere no job is in them).
 */
export function shownStates(can: Can): JobState[] {
  return JOB_STATES.filter(
    (s) =>
      (s !== "expired" || can("expiry") === null) && (s !== "blocked" || can("flows") === null),
  );
}
