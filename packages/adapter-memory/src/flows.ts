import {
  ConfigError,
  DEPENDENCY_POLICIES,
  type FlowItem,
  type FlowPutResult,
  LaneFullError,
} from "@tasklane/core/adapter";
import type { JobRecord } from "./job-record.ts";
import type { MemoryLaneImpl } from "./memory-lane.ts";

const MAX_DEPENDENCIES = 1_000;

/**
 * `putFlow` on the memory adapter: every check first (lanes, duplicates, dependencies,
 * room), then every write, in one synchronous step, so no other call sees part of it.
 * Items are stored in order; each dependency is then linked to the job waiting for it,
 * and one that has already ended is counted at once (which may unblock or fail the job
 * before the call returns).
 */
export function putFlow(
  lanes: ReadonlyMap<string, MemoryLaneImpl>,
  now: number,
  maxJobs: number,
  items: FlowItem[],
): FlowPutResult {
  if (!Array.isArray(items)) throw new ConfigError("items", items, "must be an array");
  const laneOf = (i: number): MemoryLaneImpl => {
    const lane = (items[i] as FlowItem).lane;
    const own = lanes.get(lane?.name);
    if (own === undefined || own !== lane) {
      throw new ConfigError(
        `items[${i}].lane`,
        lane?.name,
        "must be a lane of this memory adapter",
      );
    }
    return own;
  };
  const itemLanes = items.map((_, i) => laneOf(i));
  // Time applied first in every lane involved, the dependencies' too: a dependency whose
  // lease or expiry has run out is seen where it now is.
  const involved = new Set(itemLanes);
  for (const item of items) {
    const deps = item.job?.dependsOn;
    if (!Array.isArray(deps)) continue;
    for (const dep of deps) {
      const lane = lanes.get(dep?.lane);
      if (lane !== undefined) involved.add(lane);
    }
  }
  for (const lane of involved) lane.prepareFlow(now);
  // "<lane>\n<id>" → the item's index
  const batch = new Map<string, number>();
  const added = new Map<MemoryLaneImpl, number>();
  for (let i = 0; i < items.length; i++) {
    const lane = itemLanes[i] as MemoryLaneImpl;
    const job = (items[i] as FlowItem).job;
    const key = `${lane.name}\n${job.id}`;
    if (lane.record(job.id) !== undefined || batch.has(key)) {
      return { status: "duplicate", lane: lane.name, id: job.id };
    }
    const deps = job.dependsOn;
    if (deps !== undefined) {
      if (!Array.isArray(deps) || deps.length > MAX_DEPENDENCIES) {
        throw new ConfigError(
          `items[${i}].job.dependsOn`,
          deps,
          `must be an array of at most ${MAX_DEPENDENCIES} dependencies`,
        );
      }
      for (const [d, dep] of deps.entries()) {
        if (!DEPENDENCY_POLICIES.includes(dep?.onFailure)) {
          throw new ConfigError(
            `items[${i}].job.dependsOn[${d}].onFailure`,
            dep?.onFailure,
            `must be one of ${DEPENDENCY_POLICIES.join(", ")}`,
          );
        }
        // An earlier item (a later one would let two jobs wait for each other), or stored.
        if (batch.has(`${dep.lane}\n${dep.id}`)) continue;
        if (lanes.get(dep.lane)?.record(dep.id) === undefined) {
          return { status: "missing", lane: dep.lane, id: dep.id };
        }
      }
    }
    batch.set(key, i);
    added.set(lane, (added.get(lane) ?? 0) + 1);
  }
  for (const [lane, n] of added) {
    if (!lane.fits(n)) throw new LaneFullError(lane.name, maxJobs);
  }
  for (let i = 0; i < items.length; i++) {
    (itemLanes[i] as MemoryLaneImpl).insertFlow((items[i] as FlowItem).job, now);
  }
  for (let i = 0; i < items.length; i++) {
    const deps = (items[i] as FlowItem).job.dependsOn;
    if (deps === undefined || deps.length === 0) continue;
    const lane = itemLanes[i] as MemoryLaneImpl;
    const links = lane.linksOf(lane.record((items[i] as FlowItem).job.id) as JobRecord);
    for (const [index, dep] of deps.entries()) {
      const depLane = lanes.get(dep.lane) as MemoryLaneImpl;
      const depRec = depLane.record(dep.id);
      if (depRec === undefined) continue;
      const depLinks = depLane.linksOf(depRec);
      depLinks.dependents ??= [];
      depLinks.dependents.push({ links, index });
      const entry = links.deps?.[index];
      if (entry !== undefined) entry.task = depRec.task;
      const state = depRec.state;
      if (
        state === "succeeded" ||
        state === "failed" ||
        state === "canceled" ||
        state === "expired"
      ) {
        // Ended before it was depended upon: counted now, as its end would have been.
        const result = state === "succeeded" ? depLane.resultOf(depRec) : undefined;
        lane.dependencyEnded(links, index, state, result, now);
      }
    }
  }
  for (const lane of added.keys()) lane.afterFlow();
  return { status: "created" };
}
