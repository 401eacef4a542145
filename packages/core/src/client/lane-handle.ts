import type {
  Adapter,
  FailureGroup,
  JobFilter,
  JobPage,
  JobSummary,
  LaneStore,
  ListFilter,
} from "../adapter.ts";
import type { Clock } from "../clock.ts";
import { ConfigError, UnsupportedError } from "../errors.ts";
import type { LaneConfig } from "../lane-config.ts";
import { MAX_JOB_PRIORITY, MIN_JOB_PRIORITY } from "./job-encoder.ts";
import { onlyState, parseDeleteFilter, parseJobFilter, parseListFilter } from "./job-filter.ts";
import { withConfigLanes } from "./job-view.ts";
import type { LaneHandle, RetryTarget } from "./tasklane.ts";

/** Jobs per adapter call of a bulk operation (retry or delete by filter). */
const BULK_BATCH = 1_000;

export interface LaneHandleDeps {
  adapter: Adapter;
  clock: Clock;
  openLane(name: string): Promise<LaneStore>;
  /** Whether `name` is one of the client's lanes (a move's target). */
  hasLane(name: string): boolean;
  /** Wake this process's idle workers for the lane (after a resume, or a move into it). */
  notifyLocalPublish(lane: string): void;
  /** A lane's config name from its full (backend) name. */
  configName(full: string): string;
}

/**
 * The management view of one lane. An operation the adapter does not declare, or does
 * not implement, throws UnsupportedError naming the adapter and the operation.
 */
export function createLaneHandle(config: LaneConfig, deps: LaneHandleDeps): LaneHandle {
  const { adapter, clock, openLane, notifyLocalPublish } = deps;
  const { name } = config;
  const caps = adapter.capabilities;
  const need = <K extends keyof LaneStore>(
    q: LaneStore,
    method: K,
    capable: boolean | undefined,
  ): NonNullable<LaneStore[K]> => {
    const fn = q[method];
    if (!capable || typeof fn !== "function")
      throw new UnsupportedError(adapter.name, String(method));
    return (fn as (...args: unknown[]) => unknown).bind(q) as NonNullable<LaneStore[K]>;
  };

  const listPage = async (filter: ListFilter, cursor?: string): Promise<JobPage<JobSummary>> => {
    if (cursor !== undefined && typeof cursor !== "string") {
      throw new ConfigError("cursor", cursor, "must be a cursor returned by listPage");
    }
    const q = await openLane(name);
    const page = await need(q, "listPage", caps.search)(filter, cursor);
    return page;
  };

  /** Every job matching `filter`, page by page (constant memory). */
  async function* pages(filter: ListFilter): AsyncGenerator<JobSummary, void, undefined> {
    const q = await openLane(name);
    // Listing is capability `list`, whichever call serves it (search's listPage can).
    if (!caps.list) throw new UnsupportedError(adapter.name, "list");
    if (filter.state !== undefined && onlyState(filter) && filter.fields !== "summary") {
      if (!(caps.search && q.listPage)) {
        const opts = {
          state: filter.state,
          ...(filter.pageSize ? { pageSize: filter.pageSize } : {}),
        };
        yield* need(q, "list", caps.list)(opts);
        return;
      }
    }
    let cursor: string | undefined;
    do {
      const page = await listPage(filter, cursor);
      yield* page.jobs;
      cursor = page.cursor;
    } while (cursor !== undefined);
  }

  /** The ids of the jobs matching `filter`, in batches of at most `size`, up to `limit` in all. */
  async function* idBatches(filter: JobFilter, limit: number): AsyncGenerator<string[]> {
    const size = Math.min(BULK_BATCH, caps.maxBatch);
    let batch: string[] = [];
    let total = 0;
    for await (const job of pages({ ...filter, fields: "summary", pageSize: size })) {
      if (total >= limit) break;
      batch.push(job.id);
      total++;
      if (batch.length === size) {
        yield batch;
        batch = [];
      }
    }
    if (batch.length > 0) yield batch;
  }

  const count = async (filter: JobFilter): Promise<number> => {
    const q = await openLane(name);
    if (!(caps.search && q.count)) {
      // A state alone (or nothing) is what counts() answers, where search is missing.
      if (!onlyState(filter)) throw new UnsupportedError(adapter.name, "count");
      const counts = await q.counts();
      if (filter.state !== undefined) return counts[filter.state] ?? 0;
      return Object.values(counts).reduce((a: number, b) => a + (b ?? 0), 0);
    }
    return need(q, "count", caps.search)(filter);
  };

  const checkIds = (ids: unknown, field = "jobIds"): string[] => {
    if (!Array.isArray(ids) || ids.some((id) => typeof id !== "string")) {
      throw new ConfigError(field, ids, "must be an array of job ids");
    }
    return ids as string[];
  };

  const handle = {
    name,
    config,
    counts: async () => (await openLane(name)).counts(),
    probe: async () => (await openLane(name)).probe(),
    get: async (id: string) => {
      const info = await need(await openLane(name), "get", caps.get)(id);
      return info === undefined ? undefined : withConfigLanes(info, deps.configName);
    },
    list(filter: ListFilter = {}) {
      return pages(parseListFilter(adapter, filter, "filter"));
    },
    listPage: async (filter: ListFilter = {}, cursor?: string) =>
      listPage(parseListFilter(adapter, filter, "filter"), cursor),
    count: async (filter: JobFilter = {}) => count(parseJobFilter(adapter, filter, "filter")),
    async failures(): Promise<FailureGroup[]> {
      const groups = await need(await openLane(name), "failures", caps.failureGroups)();
      return groups.map((g) => ({ ...g, lane: name }));
    },
    cancel: async (ids: string[]) => need(await openLane(name), "cancel", caps.cancel)(ids),
    async retryFailed(target?: RetryTarget): Promise<number> {
      const q = await openLane(name);
      const retry = need(q, "retryFailed", caps.retryFailed);
      if (target === undefined) return retry();
      if (Array.isArray(target)) return retry(checkIds(target));
      if (typeof target !== "object" || target === null) {
        throw new ConfigError("target", target, "must be job ids, { ids } or { group, limit }");
      }
      if ("ids" in target) return retry(checkIds(target.ids, "target.ids"));
      const { group, limit } = target as { group: unknown; limit?: unknown };
      if (typeof group !== "string" || group.length === 0) {
        throw new ConfigError("target.group", group, "must be a failure group's name");
      }
      if (limit !== undefined && !(Number.isInteger(limit) && (limit as number) >= 0)) {
        throw new ConfigError("target.limit", limit, "must be an integer >= 0");
      }
      const filter: JobFilter = { state: "failed", errorName: group };
      // Bounded by the group's size now: jobs that fail again while this runs are new failures.
      const max = Math.min(
        (limit as number | undefined) ?? Number.POSITIVE_INFINITY,
        await count(filter),
      );
      let retried = 0;
      for await (const ids of idBatches(filter, max)) retried += await retry(ids);
      if (retried > 0) notifyLocalPublish(name);
      return retried;
    },
    delete: async (ids: string[]) => need(await openLane(name), "delete", caps.delete)(ids),
    async deleteJobs(input: unknown): Promise<number> {
      const { filter, limit } = parseDeleteFilter(adapter, input, "filter");
      const del = need(await openLane(name), "delete", caps.delete);
      const max = Math.min(limit ?? Number.POSITIVE_INFINITY, await count(filter));
      let deleted = 0;
      for await (const ids of idBatches(filter, max)) deleted += await del(ids);
      return deleted;
    },
    async setPriority(ids: string[], priority: number) {
      if (
        !Number.isInteger(priority) ||
        priority < MIN_JOB_PRIORITY ||
        priority > MAX_JOB_PRIORITY
      ) {
        throw new ConfigError(
          "priority",
          priority,
          `must be an integer from ${MIN_JOB_PRIORITY} to ${MAX_JOB_PRIORITY}`,
        );
      }
      const q = await openLane(name);
      const results = await need(q, "setPriority", caps.changePriority)(checkIds(ids), priority);
      notifyLocalPublish(name);
      return results;
    },
    async promote(ids: string[]) {
      const results = await need(await openLane(name), "promote", caps.promote)(checkIds(ids));
      notifyLocalPublish(name);
      return results;
    },
    async move(ids: string[], toLane: string) {
      if (typeof toLane !== "string" || !deps.hasLane(toLane)) {
        throw new ConfigError("toLane", toLane, "is not one of this client's lanes");
      }
      if (toLane === name) throw new ConfigError("toLane", toLane, "is the lane the jobs are in");
      const move = need(await openLane(name), "move", caps.move);
      const target = await openLane(toLane);
      const results = await move(checkIds(ids), target);
      notifyLocalPublish(toLane);
      return results;
    },
    pause: async () => need(await openLane(name), "pause", caps.pause)(),
    resume: async () => {
      await need(await openLane(name), "resume", caps.pause)();
      notifyLocalPublish(name);
    },
    isPaused: async () => need(await openLane(name), "isPaused", caps.pause)(),
    stats: async (day?: string) =>
      need(
        await openLane(name),
        "stats",
        caps.stats,
      )(day ?? new Date(clock.now()).toISOString().slice(0, 10)),
  };
  // list and listPage are overloaded on `fields`: a full listing holds JobInfo, which the
  // one implementation returns as the JobSummary it extends.
  return handle as unknown as LaneHandle;
}
