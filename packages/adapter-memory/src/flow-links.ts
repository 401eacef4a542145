import type { DependencyView, FinishedState } from "@tasklane/core/adapter";

/** How a dependency ended, as its dependents record it. */
export type DependencyEnd = FinishedState | "deleted";

/**
 * A job's part in flows (capability `flows`): the jobs it waits for and the jobs waiting
 * for it. One object per job, shared by the job's record and every copy of it (a new
 * priority, a promote, a move), and referenced by its dependencies: a dependency's end
 * reaches it wherever it is now, and `lane`/`id` say where that is.
 *
 * Each dependency's end is recorded once, in its entry (`deps[i].state`): a second
 * notification for the same entry finds it set and changes nothing.
 */
export class FlowLinks {
  /** The job's lane now (a move updates it) and id. */
  lane: string;
  readonly id: string;
  /** What it waits for, in the order given; undefined for a job that waits for nothing. */
  deps: DependencyView[] | undefined = undefined;
  /** Entries of `deps` not ended yet. */
  open = 0;
  /** The jobs waiting for this one, and this job's place in their `deps`. */
  dependents: Array<{ links: FlowLinks; index: number }> | undefined = undefined;

  constructor(lane: string, id: string) {
    this.lane = lane;
    this.id = id;
  }
}
