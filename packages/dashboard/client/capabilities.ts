import type { Info } from "./types.ts";

/** What the dashboard can offer, each tied to the API's capabilities. */
export type Feature =
  | "retry"
  | "cancel"
  | "cancelActive"
  | "delete"
  | "pause"
  | "promote"
  | "priority"
  | "list"
  | "get"
  | "stats"
  | "failureGroups"
  | "workers"
  | "schedules"
  | "results"
  | "logs"
  | "progress";

interface Rule {
  /** The adapter capability it needs (GET /'s adapter.capabilities). */
  capability?: string;
  /** Its name in GET /'s notYetSupported while this version lacks it. */
  notYet?: string;
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
  promote: { notYet: "promote", capability: "promote", what: "promote delayed jobs", write: true },
  priority: {
    notYet: "changePriority",
    capability: "priorities",
    what: "change a job's priority",
    write: true,
  },
  list: { capability: "list", what: "list jobs" },
  get: { capability: "get", what: "find a job by id" },
  stats: { capability: "stats", what: "keep wait and run stats" },
  failureGroups: { notYet: "failureGroups", capability: "failureGroups", what: "group failures" },
  workers: { notYet: "workers", what: "list workers" },
  schedules: { notYet: "schedules", what: "list schedules" },
  results: { notYet: "results", what: "store job results" },
  logs: { notYet: "logs", what: "store job logs" },
  progress: { notYet: "progress", what: "store job progress" },
};

/** `null` when the feature is there, else a short sentence saying why not. */
export type Can = (feature: Feature) => string | null;

export function createCan(info: Info): Can {
  const caps = info.adapter.capabilities;
  const notYet = new Set(info.notYetSupported);
  return (feature) => {
    const rule = RULES[feature];
    if (rule.notYet !== undefined && notYet.has(rule.notYet)) {
      return `This version of tasklane cannot ${rule.what} yet.`;
    }
    // A capability the adapter does not list is taken as present: the API decides then.
    if (rule.capability !== undefined && caps[rule.capability] === false) {
      return `The ${info.adapter.name} adapter cannot ${rule.what}.`;
    }
    if (rule.write === true && info.scope === "read") {
      return "Your access is read-only.";
    }
    return null;
  };
}
