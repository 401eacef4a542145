/**
 * Flows on Redis (capability flows; docs/adapter-contract.md, "Flows"; FLOWS in
 * lua/_common.lua). Each lane is its own slot (Redis Cluster), so a flow is crash-safe
 * steps, each one script in one slot:
 *
 * 1. putFlow checks every id and dependency (reads per lane), then stores the jobs,
 *    parents before their children, one call per run of items of one lane (lua/flow.lua:
 *    the blocked ones with their entries, each child with its links to the jobs waiting
 *    for it, so a child's end always finds its parent), then tells each dependency stored
 *    before the call of the jobs waiting for it (lua/link.lua), which queues the end of
 *    one that has ended already in its lane's outbox. A call that died part-way is
 *    completed by the same call repeated (sameFlow tells its jobs from others').
 * 2. A job's end (ack, nack, stall, cancel, expiry, delete) queues one notification per
 *    dependent in its lane's outbox in the script that ends it. drainOutbox delivers them
 *    to the dependents' lanes (lua/deliver.lua applies each entry once) and then removes
 *    them: delivered twice after a crash between the two, the second changes nothing.
 *    The call that ended the job drains at once; every reserve drains its lane's outbox
 *    now and then (RedisLane), so what a process that died left is delivered by another.
 */
import {
  ConfigError,
  DEPENDENCY_POLICIES,
  type FlowItem,
  type FlowPutResult,
  type NewJob,
} from "@tasklane/core/adapter";
import type { AdapterShared } from "./adapter-shared.ts";
import { mapRedisError } from "./errors.ts";
import { encodeId } from "./id-codec.ts";
import { laneKeys } from "./keys.ts";
import { RedisLane, type StoredDependency } from "./redis-lane.ts";

const MAX_DEPENDENCIES = 1_000;
/** Links one lua/link.lua call makes, at most (a job may wait for 1,000 stored jobs). */
const LINKS_PER_CALL = 1_000;
/** Outbox fields read per HSCAN step. */
const DRAIN_PAGE = 200;

export interface RedisFlows {
  putFlow(items: FlowItem[]): Promise<FlowPutResult>;
  drainOutbox(lane: string): Promise<void>;
}

export function createRedisFlows(
  shared: AdapterShared,
  lanes: ReadonlyMap<string, RedisLane>,
): RedisFlows {
  const laneNamed = (name: string, like: RedisLane): RedisLane =>
    lanes.get(name) ?? (shared.openLane(name, like.options) as RedisLane);

  /** Each lane's drain: one at a time, and a call made while one runs gets the next pass. */
  const drains = new Map<
    string,
    { running?: Promise<void> | undefined; queued?: Promise<void> | undefined }
  >();

  const drainOutbox = (name: string): Promise<void> => {
    let state = drains.get(name);
    if (state === undefined) {
      state = {};
      drains.set(name, state);
    }
    const s = state;
    if (s.queued !== undefined) return s.queued;
    const queued = (s.running ?? Promise.resolve())
      .catch(() => {})
      .then(() => {
        s.queued = undefined;
        const running = drainPass(name);
        s.running = running;
        return running;
      });
    s.queued = queued;
    return queued;
  };

  /** One pass over a lane's outbox; lanes whose deliveries queued ends are drained after. */
  const drainPass = async (name: string): Promise<void> => {
    const source = lanes.get(name);
    if (source === undefined) return;
    const key = source.keys.outbox;
    const next = new Set<string>();
    let cursor = "0";
    do {
      let page: [string, string[]];
      try {
        page = await shared.client.hscan(key, cursor, "COUNT", DRAIN_PAGE);
      } catch (error) {
        throw mapRedisError(`draining the outbox of lane "${name}"`, error);
      }
      cursor = page[0];
      const flat = page[1];
      const byLane = new Map<string, { fields: string[]; ends: string[] }>();
      for (let i = 0; i + 1 < flat.length; i += 2) {
        const field = flat[i] as string;
        const first = field.indexOf("\n");
        const last = field.lastIndexOf("\n");
        if (first < 0 || last <= first) continue;
        let end: { s?: unknown; r?: unknown };
        try {
          end = JSON.parse(flat[i + 1] as string) as { s?: unknown; r?: unknown };
        } catch {
          continue;
        }
        const lane = field.slice(0, first);
        let group = byLane.get(lane);
        if (group === undefined) {
          group = { fields: [], ends: [] };
          byLane.set(lane, group);
        }
        group.fields.push(field);
        group.ends.push(
          field.slice(first + 1, last),
          field.slice(last + 1),
          String(end.s),
          typeof end.r === "string" ? end.r : "",
        );
      }
      for (const [laneName, group] of byLane) {
        const target = laneNamed(laneName, source);
        if (await target.deliverEnds(group.ends)) next.add(laneName);
        // Removed only once delivered: a crash before this delivers them again (once).
        try {
          await shared.client.hdel(key, ...group.fields);
        } catch (error) {
          throw mapRedisError(`draining the outbox of lane "${name}"`, error);
        }
      }
    } while (cursor !== "0");
    for (const laneName of next) await drainOutbox(laneName);
  };

  const putFlow = async (items: FlowItem[]): Promise<FlowPutResult> => {
    if (!Array.isArray(items)) throw new ConfigError("items", items, "must be an array");
    const itemLanes = items.map((item, i) => {
      const lane = item?.lane;
      if (!(lane instanceof RedisLane) || lane.shared !== shared || lanes.get(lane.name) !== lane) {
        throw new ConfigError(
          `items[${i}].lane`,
          (lane as { name?: unknown } | undefined)?.name,
          "must be a lane of this Redis adapter",
        );
      }
      return lane;
    });
    items.forEach((item, i) => {
      const deps = item.job.dependsOn;
      if (deps === undefined) return;
      if (!Array.isArray(deps) || deps.length > MAX_DEPENDENCIES) {
        throw new ConfigError(
          `items[${i}].job.dependsOn`,
          deps,
          `must be an array of at most ${MAX_DEPENDENCIES} dependencies`,
        );
      }
      deps.forEach((dep, d) => {
        if (!DEPENDENCY_POLICIES.includes(dep?.onFailure)) {
          throw new ConfigError(
            `items[${i}].job.dependsOn[${d}].onFailure`,
            dep?.onFailure,
            `must be one of ${DEPENDENCY_POLICIES.join(", ")}`,
          );
        }
      });
    });
    shared.check("putFlow");

    // 1. Checks: which ids each lane holds (the items', the dependencies' not in the
    // call), and the flow links of the items held (a repeat of an interrupted flow).
    const wanted = new Map<string, Set<string>>();
    const want = (lane: string, id: string) => {
      let set = wanted.get(lane);
      if (set === undefined) {
        set = new Set();
        wanted.set(lane, set);
      }
      set.add(id);
    };
    items.forEach((item, i) => {
      want((itemLanes[i] as RedisLane).name, item.job.id);
      for (const dep of item.job.dependsOn ?? []) want(dep.lane, dep.id);
    });
    const key = (lane: string, id: string) => `${lane}\n${id}`;
    /** "<lane>\n<id>" of every job held, and its flow links (null: none). */
    const held = new Map<string, string | null>();
    await Promise.all(
      [...wanted].map(async ([laneName, ids]) => {
        const list = [...ids];
        const keys = laneKeys(shared.prefix, laneName);
        const encoded = list.map(encodeId);
        let raws: Array<string | null>;
        let links: Array<string | null>;
        try {
          [raws, links] = await Promise.all([
            shared.client.hmget(keys.all[1] as string, ...encoded),
            shared.client.hmget(keys.flowLinks, ...encoded),
          ]);
        } catch (error) {
          throw mapRedisError("putFlow", error);
        }
        list.forEach((id, k) => {
          if (raws[k] !== null) held.set(key(laneName, id), links[k] ?? null);
        });
      }),
    );
    /** The items of the call by "<lane>\n<id>": their index. */
    const inBatch = new Map<string, number>();
    /** Items held already as this same flow put them (a repeat): not put again. */
    const repeated = new Set<number>();
    for (let i = 0; i < items.length; i++) {
      const lane = itemLanes[i] as RedisLane;
      const job = (items[i] as FlowItem).job;
      const k = key(lane.name, job.id);
      if (inBatch.has(k)) return { status: "duplicate", lane: lane.name, id: job.id };
      if (held.has(k)) {
        if (!sameFlow(items, itemLanes, i, held.get(k) ?? null)) {
          return { status: "duplicate", lane: lane.name, id: job.id };
        }
        repeated.add(i);
      }
      for (const dep of job.dependsOn ?? []) {
        const d = key(dep.lane, dep.id);
        if (inBatch.has(d)) continue;
        if (!held.has(d)) return { status: "missing", lane: dep.lane, id: dep.id };
      }
      inBatch.set(k, i);
    }
    // The tasks of dependencies stored earlier (their entries show them).
    const tasks = new Map<string, string>();
    const earlier = new Map<string, { lane: string; id: string }>();
    for (const item of items) {
      for (const dep of item.job.dependsOn ?? []) {
        const k = key(dep.lane, dep.id);
        if (!inBatch.has(k)) earlier.set(k, dep);
      }
    }
    await Promise.all(
      [...earlier].map(async ([k, dep]) => {
        const info = await laneNamed(dep.lane, itemLanes[0] as RedisLane).get(dep.id);
        if (info !== undefined) tasks.set(k, info.task);
      }),
    );

    // 2. The jobs, parents before their children (items in reverse, one call per run of
    // items of one lane): each blocked with its entries, each dependency of the call with
    // the jobs waiting for it, in the same script, so a child's end always finds its
    // parent. A repeat finds what it stored already and goes on.
    const linksTo = new Map<number, Array<string | number>>();
    items.forEach((item, i) => {
      const lane = itemLanes[i] as RedisLane;
      (item.job.dependsOn ?? []).forEach((dep, index) => {
        const at = inBatch.get(key(dep.lane, dep.id));
        if (at === undefined) return;
        const list = linksTo.get(at) ?? [];
        linksTo.set(at, list);
        list.push(lane.name, encodeId(item.job.id), index);
      });
    });
    const queued = new Set<string>();
    for (let end = items.length; end > 0; ) {
      const lane = itemLanes[end - 1] as RedisLane;
      let start = end - 1;
      while (start > 0 && itemLanes[start - 1] === lane) start--;
      const indexes: number[] = [];
      for (let i = start; i < end; i++) if (!repeated.has(i)) indexes.push(i);
      const jobs = indexes.map((i) => (items[i] as FlowItem).job);
      const blocked: Array<{ index: number; entries: StoredDependency[] }> = [];
      jobs.forEach((job, index) => {
        const deps = job.dependsOn;
        if (deps === undefined || deps.length === 0) return;
        const entries = deps.map((dep): StoredDependency => {
          const entry: StoredDependency = { l: dep.lane, i: dep.id, o: dep.onFailure };
          const at = inBatch.get(key(dep.lane, dep.id));
          const task =
            at !== undefined ? (items[at] as FlowItem).job.task : tasks.get(key(dep.lane, dep.id));
          if (task !== undefined) entry.t = task;
          return entry;
        });
        blocked.push({ index, entries });
      });
      const links: Array<string | number> = [];
      for (let i = start; i < end; i++) {
        for (const [k, part] of (linksTo.get(i) ?? []).entries()) {
          if (k % 3 === 0) links.push(encodeId((items[i] as FlowItem).job.id));
          links.push(part);
        }
      }
      const created = await lane.putFlowJobs(jobs, blocked, links);
      const taken = created.indexOf(false);
      // Put since the checks by another caller: this call stops here (what it wrote so
      // far stays: blocked jobs whose children it did not put).
      if (taken >= 0) {
        return { status: "duplicate", lane: lane.name, id: (jobs[taken] as NewJob).id };
      }
      end = start;
    }

    // 3. Each dependency stored earlier learns of the jobs waiting for it, in its slot.
    const links = new Map<string, Array<string | number>>();
    items.forEach((item, i) => {
      const lane = itemLanes[i] as RedisLane;
      (item.job.dependsOn ?? []).forEach((dep, index) => {
        if (inBatch.has(key(dep.lane, dep.id))) return;
        const list = links.get(dep.lane) ?? [];
        links.set(dep.lane, list);
        list.push(encodeId(dep.id), lane.name, encodeId(item.job.id), index);
      });
    });
    for (const [laneName, list] of links) {
      const lane = laneNamed(laneName, itemLanes[0] as RedisLane);
      // at most LINKS_PER_CALL a call (a script unpacks its ids into one command)
      for (let at = 0; at < list.length; at += 4 * LINKS_PER_CALL) {
        if (await lane.linkDependents(list.slice(at, at + 4 * LINKS_PER_CALL))) {
          queued.add(laneName);
        }
      }
    }
    // Dependencies that had ended already count now, before the call resolves.
    for (const laneName of queued) await drainOutbox(laneName);
    return { status: "created" };
  };

  return { putFlow, drainOutbox };
}

/**
 * Whether the stored job of item `i` (its flow links `stored`) is that item as an earlier,
 * interrupted call of this same flow stored it: a job that waits, with the same entries;
 * or a dependency of the call, already told of a job of the call waiting for it (a
 * dependency is stored with those links in one script). Anything else is a duplicate.
 */
function sameFlow(
  items: readonly FlowItem[],
  lanes: readonly RedisLane[],
  i: number,
  stored: string | null,
): boolean {
  if (stored === null) return false;
  let links: { d?: unknown; p?: unknown };
  try {
    links = JSON.parse(stored) as { d?: unknown; p?: unknown };
  } catch {
    return false;
  }
  const job = (items[i] as FlowItem).job;
  const lane = (lanes[i] as RedisLane).name;
  const deps = job.dependsOn ?? [];
  const entries = Array.isArray(links.d) ? (links.d as StoredDependency[]) : [];
  if (deps.length > 0 || entries.length > 0) {
    if (entries.length !== deps.length) return false;
    if (
      !deps.every(
        (d, k) =>
          entries[k]?.l === d.lane && entries[k]?.i === d.id && entries[k]?.o === d.onFailure,
      )
    ) {
      return false;
    }
  }
  const waiting = Array.isArray(links.p) ? (links.p as Array<{ l: string; i: string }>) : [];
  // a dependency of the call: one of the jobs of the call waiting for it is linked
  const parents = items.flatMap((item, k) =>
    (item.job.dependsOn ?? []).some((d) => d.lane === lane && d.id === job.id)
      ? [`${(lanes[k] as RedisLane).name}\n${encodeId(item.job.id)}`]
      : [],
  );
  if (parents.length > 0) return waiting.some((p) => parents.includes(`${p.l}\n${p.i}`));
  return deps.length > 0;
}
