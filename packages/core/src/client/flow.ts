import {
  type Adapter,
  DEPENDENCY_POLICIES,
  type DependencyPolicy,
  type FlowItem,
  type FlowPutResult,
  type JobDependency,
  type LaneStore,
  type NewJob,
} from "../adapter.ts";
import type { Clock } from "../clock.ts";
import { ConfigError, UnsupportedError } from "../errors.ts";
import { DependencyNotFoundError } from "../job-errors.ts";
import { type AnyTask, validatePayload } from "../task.ts";
import { type JobEncoder, MAX_DEPENDENCIES } from "./job-encoder.ts";
import type { FlowChild, FlowJob, FlowNode, FlowResult } from "./tasklane.ts";

/** A flow's job ready to put: its lane (config name), task and encoded job. */
export interface FlowEntry {
  lane: string;
  task: AnyTask;
  job: NewJob;
}

export interface FlowDeps {
  adapter: Adapter;
  clock: Clock;
  encoder: JobEncoder;
  knownTask(task: AnyTask): AnyTask;
  openLane(name: string): Promise<LaneStore>;
  fullName(lane: string): string;
  /** A lane's config name from its full name. */
  configName(full: string): string;
}

/**
 * Put jobs with dependencies through `Adapter.putFlow`, children first: "created" or
 * "duplicate" (nothing written); a dependency no lane holds is DependencyNotFoundError.
 */
export async function putEntries(
  deps: FlowDeps,
  entries: readonly FlowEntry[],
): Promise<"created" | "duplicate"> {
  const { adapter } = deps;
  const putFlow = adapter.putFlow;
  if (adapter.capabilities.flows !== true || putFlow === undefined) {
    throw new UnsupportedError(adapter.name, "flows (capability flows)");
  }
  const stores = await Promise.all(entries.map((e) => deps.openLane(e.lane)));
  const items: FlowItem[] = entries.map((e, i) => ({ lane: stores[i] as LaneStore, job: e.job }));
  const result: FlowPutResult = await putFlow.call(adapter, items);
  if (result.status === "missing") {
    throw new DependencyNotFoundError(result.id, deps.configName(result.lane));
  }
  return result.status;
}

/**
 * `tl.flow`: the tree walked depth first, every payload validated and every job encoded
 * before anything is written (by `put`, given the entries); children come before the job
 * that waits for them (the order putFlow needs).
 */
export async function publishFlow(
  deps: FlowDeps,
  root: FlowNode & { children: FlowChild[] },
  put: (entries: FlowEntry[]) => Promise<"created" | "duplicate">,
): Promise<FlowResult> {
  const { adapter } = deps;
  if (adapter.capabilities.flows !== true || adapter.putFlow === undefined) {
    throw new UnsupportedError(adapter.name, "flows (capability flows)");
  }
  if (typeof root !== "object" || root === null) {
    throw new ConfigError("flow", root, "must be an object { task, payload, children }");
  }
  if (!Array.isArray(root.children) || root.children.length === 0) {
    throw new ConfigError("children", root.children, "must be a non-empty array");
  }
  const now = deps.clock.now();
  const entries: FlowEntry[] = [];
  const max = adapter.capabilities.maxBatch;

  const walk = async (node: FlowNode, path: string): Promise<FlowJob> => {
    const at = (field: string) => (path === "" ? field : `${path}.${field}`);
    if (typeof node !== "object" || node === null) {
      throw new ConfigError(path, node, "must be an object { task, payload, options?, children? }");
    }
    const task = deps.knownTask(node.task);
    const options = node.options ?? {};
    if (typeof options !== "object" || options === null) {
      throw new ConfigError(at("options"), options, "must be an object");
    }
    if (options.debounce !== undefined) {
      throw new ConfigError(
        at("options.debounce"),
        options.debounce,
        "a job of a flow cannot be debounced",
      );
    }
    const children = node.children ?? [];
    if (!Array.isArray(children)) {
      throw new ConfigError(at("children"), children, "must be an array");
    }
    let value = validatePayload(task, node.payload);
    if (value instanceof Promise) value = await value;
    const childJobs: FlowJob[] = [];
    const waitsFor: JobDependency[] = [];
    for (const [i, child] of children.entries()) {
      const onFailure = (child as FlowChild)?.onFailure ?? "fail";
      if (!DEPENDENCY_POLICIES.includes(onFailure as DependencyPolicy)) {
        throw new ConfigError(
          at(`children[${i}].onFailure`),
          onFailure,
          `must be one of ${DEPENDENCY_POLICIES.join(", ")}`,
        );
      }
      const job = await walk(child, at(`children[${i}]`));
      childJobs.push(job);
      waitsFor.push({ lane: deps.fullName(job.lane), id: job.id, onFailure });
    }
    const job = deps.encoder.prepare(task, value, options, now, at("options"));
    if (waitsFor.length > 0) job.dependsOn = [...waitsFor, ...(job.dependsOn ?? [])];
    if ((job.dependsOn?.length ?? 0) > MAX_DEPENDENCIES) {
      throw new ConfigError(
        at("children"),
        children.length,
        `a job waits for at most ${MAX_DEPENDENCIES} jobs (children and dependsOn)`,
      );
    }
    if (entries.length >= max) {
      throw new ConfigError("children", entries.length + 1, `a flow holds at most ${max} jobs`);
    }
    entries.push({ lane: task.lane, task, job });
    return { id: job.id, lane: task.lane, task: task.name, children: childJobs };
  };

  const tree = await walk(root, "");
  const status = await put(entries);
  return { status, ...tree };
}
