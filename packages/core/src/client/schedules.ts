/**
 * `tl.schedules`: recurring schedules stored in the backend, in the lane of their task
 * (capability `schedules`). Any process fires them: a worker's schedule ticker, or
 * `fireDue()` by hand. Every write is a compare-and-set on the schedule's revision, and a
 * firing's write commits together with the put of its runs, whose job ids are derived
 * from the schedule id and the slot (schedule.ts): so processes racing on one schedule
 * neither put a slot twice nor skip one (DESIGN.md, "Recurring schedules").
 */
import type { Adapter, LaneStore, NewJob, ScheduleRecord, ScheduleWrite } from "../adapter.ts";
import type { Clock } from "../clock.ts";
import { decodeJson, encodeJson } from "../codec.ts";
import { ConfigError, UnsupportedError } from "../errors.ts";
import type { TasklaneEventBus } from "../events.ts";
import {
  firstSlot,
  MAX_SCHEDULE_ID_LENGTH,
  planFire,
  type ResolvedSpec,
  resolveScheduleSpec,
  type ScheduleSpec,
  type SlotRule,
  scheduleJobId,
} from "../schedule.ts";
import { type AnyTask, type TaskInput, validatePayload } from "../task.ts";
import type { JobEncoder } from "./job-encoder.ts";

/** The options of each run's job: as publish's, less what a schedule decides (id, time). */
export interface ScheduleJobOptions {
  priority?: number;
  appData?: unknown;
  tags?: string[];
  /** Each run expires this long after it is put, unstarted (capability `expiry`). */
  expiresInMs?: number;
  /** Each run's fair group, as publish's `group` (a lane with `groups`). */
  group?: string;
}

const SCHEDULE_JOB_OPTIONS: readonly string[] = [
  "priority",
  "appData",
  "tags",
  "expiresInMs",
  "group",
];

/** A schedule as `get` and `list` return it. */
export interface ScheduleInfo {
  id: string;
  /** The lane it lives in and puts its runs into: its task's (config name). */
  lane: string;
  task: string;
  payload: unknown;
  jobOptions: ScheduleJobOptions;
  spec: ResolvedSpec;
  /** Epoch ms of the next slot; null when paused or ended. */
  nextAt: number | null;
  paused: boolean;
  /** Runs put so far. */
  runs: number;
  /** The latest slot handled (run or skipped by the catch-up policy). */
  lastSlotAt?: number;
  createdAt: number;
  updatedAt: number;
  /** Bumped by every write (upsert, pause, resume, each firing). */
  revision: number;
}

/** What a `fireDue` call did. */
export interface FireReport {
  /** Jobs created (a run another process had already put counts as a duplicate, not here). */
  created: number;
  /** Runs whose job was already there (put by a process that lost the race after its put). */
  duplicates: number;
  /** Due slots not run: the catch-up policy or the limit. */
  skipped: number;
  /** Firings refused because another process wrote the schedule first. */
  stale: number;
}

export interface Schedules {
  /**
   * Create or replace schedule `id`: runs of `task` with `payload` at the spec's slots.
   * An edit takes effect from the next slot: jobs already put stay, the run count and
   * the last slot are kept, and no slot at or before the last one handled runs again.
   */
  upsert<T extends AnyTask>(
    id: string,
    spec: ScheduleSpec,
    task: T,
    payload: TaskInput<T>,
    jobOptions?: ScheduleJobOptions,
  ): Promise<ScheduleInfo>;
  get(id: string): Promise<ScheduleInfo | undefined>;
  /** Every schedule of every lane of this client. */
  list(): Promise<ScheduleInfo[]>;
  /** Remove it (jobs it put stay); false when there was none. */
  remove(id: string): Promise<boolean>;
  /** No run until resumed; undefined when there is no such schedule. */
  pause(id: string): Promise<ScheduleInfo | undefined>;
  /** Runs again from the first slot after now: slots while paused are not caught up. */
  resume(id: string): Promise<ScheduleInfo | undefined>;
  /**
   * Put the due runs of the schedules in `lane` (every lane when absent) now. Workers do
   * this by themselves (WorkerOptions.schedulePollMs); a process without a worker can call it.
   */
  fireDue(lane?: string): Promise<FireReport>;
}

/** Stored in ScheduleWrite.data (JSON): everything but nextAt and the revision. */
interface StoredSchedule {
  v: 1;
  task: string;
  payload: unknown;
  options: ScheduleJobOptions;
  spec: ResolvedSpec;
  anchorAt: number;
  runs: number;
  lastSlotAt?: number;
  paused: boolean;
  createdAt: number;
  updatedAt: number;
}

/** Due schedules read per call; a full page is followed by another. */
const DUE_PAGE = 100;
/** Compare-and-set attempts of one upsert, pause or resume against concurrent writers. */
const MAX_WRITE_ATTEMPTS = 20;

export interface SchedulesDeps {
  adapter: Adapter;
  clock: Clock;
  events: TasklaneEventBus;
  encoder: JobEncoder;
  /** Config names of the client's lanes. */
  lanes: () => string[];
  openLane(name: string): Promise<LaneStore>;
  knownTask(task: AnyTask): AnyTask;
  checkOpen(): void;
  notifyLocalPublish(lane: string): void;
  /** A schedule of `lane` got a new next slot here: local workers re-arm their timer. */
  notifyLocalSchedule(lane: string): void;
}

type ScheduleStore = Required<
  Pick<
    LaneStore,
    | "putSchedule"
    | "getSchedule"
    | "listSchedules"
    | "removeSchedule"
    | "dueSchedules"
    | "nextScheduleAt"
    | "fireSchedule"
  >
> &
  LaneStore;

export function createSchedules(deps: SchedulesDeps): Schedules {
  const { adapter, clock, events, encoder } = deps;

  const storeOf = async (lane: string): Promise<ScheduleStore> => {
    if (!adapter.capabilities.schedules) {
      throw new UnsupportedError(adapter.name, "recurring schedules (capability schedules)");
    }
    const store = await deps.openLane(lane);
    if (typeof store.fireSchedule !== "function") {
      throw new UnsupportedError(adapter.name, "recurring schedules (no fireSchedule)");
    }
    return store as ScheduleStore;
  };

  const checkId = (id: unknown): string => {
    if (typeof id !== "string" || id.length === 0 || id.length > MAX_SCHEDULE_ID_LENGTH) {
      throw new ConfigError("id", id, `must be a string of 1-${MAX_SCHEDULE_ID_LENGTH} characters`);
    }
    return id;
  };

  const decode = (record: ScheduleRecord): StoredSchedule | undefined => {
    try {
      const s = decodeJson(record.data) as StoredSchedule;
      return s && s.v === 1 && typeof s.task === "string" ? s : undefined;
    } catch {
      return undefined;
    }
  };

  const ruleOf = (s: StoredSchedule): SlotRule => ({ spec: s.spec, anchorAt: s.anchorAt });

  const infoOf = (lane: string, record: ScheduleRecord, s: StoredSchedule): ScheduleInfo => {
    const info: ScheduleInfo = {
      id: record.id,
      lane,
      task: s.task,
      payload: s.payload,
      jobOptions: s.options,
      spec: s.spec,
      nextAt: record.nextAt,
      paused: s.paused,
      runs: s.runs,
      createdAt: s.createdAt,
      updatedAt: s.updatedAt,
      revision: record.revision,
    };
    if (s.lastSlotAt !== undefined) info.lastSlotAt = s.lastSlotAt;
    return info;
  };

  const writeOf = (id: string, s: StoredSchedule, nextAt: number | null): ScheduleWrite => ({
    id,
    data: encodeJson(s),
    nextAt,
  });

  /**
   * The runs of schedule `id` (stored in `lane`, its task's) at `slots`, built as publish
   * builds them (same checks, same encoding).
   */
  const jobsOf = (
    id: string,
    lane: string,
    s: StoredSchedule,
    slots: number[],
    now: number,
  ): NewJob[] =>
    slots.map((slot) =>
      encoder.prepare(
        // The stored task name and the lane it is stored in: what prepare reads of a task
        // once the payload is validated (a task renamed since keeps its stored name).
        { name: s.task, lane } as AnyTask,
        s.payload,
        { ...s.options, jobId: scheduleJobId(id, slot) },
        now,
      ),
    );

  /** Lanes (config names) holding schedule `id`, with the record each holds. */
  const find = async (id: string) => {
    const lanes = deps.lanes();
    const stores = await Promise.all(lanes.map(storeOf));
    const records = await Promise.all(stores.map((st) => st.getSchedule(id)));
    const found: Array<{ lane: string; store: ScheduleStore; record: ScheduleRecord }> = [];
    records.forEach((record, i) => {
      if (record)
        found.push({ lane: lanes[i] as string, store: stores[i] as ScheduleStore, record });
    });
    return found;
  };

  /** Read-modify-write with a compare-and-set, retried while other writers win. */
  const update = async (
    id: string,
    change: (s: StoredSchedule, record: ScheduleRecord, now: number) => number | null,
  ): Promise<ScheduleInfo | undefined> => {
    deps.checkOpen();
    checkId(id);
    for (let attempt = 0; attempt < MAX_WRITE_ATTEMPTS; attempt++) {
      const [hit] = await find(id);
      if (!hit) return undefined;
      const s = decode(hit.record);
      if (!s) throw new ConfigError("id", id, "names a schedule whose stored data is unreadable");
      const now = clock.now();
      const nextAt = change(s, hit.record, now);
      s.updatedAt = now;
      const write = writeOf(id, s, nextAt);
      const result = await hit.store.putSchedule(write, hit.record.revision);
      if (result.status === "ok") {
        if (nextAt !== null) deps.notifyLocalSchedule(hit.lane);
        return infoOf(hit.lane, { ...write, revision: result.revision }, s);
      }
    }
    throw new ConfigError("id", id, "is being written by other processes without pause; try again");
  };

  /**
   * Set aside a schedule that cannot fire (its data unreadable, its runs refused by the
   * adapter): no next slot, data kept for an operator, an error event. Left due, it
   * would be read again at every tick and, a page of them, starve the others.
   */
  const park = async (
    lane: string,
    store: ScheduleStore,
    record: ScheduleRecord,
    error: unknown,
  ) => {
    events.emit("error", { error, during: "schedule", lane });
    await store.putSchedule({ id: record.id, data: record.data, nextAt: null }, record.revision);
  };

  const fireLane = async (lane: string, report: FireReport): Promise<void> => {
    const store = await storeOf(lane);
    for (;;) {
      const now = clock.now();
      const due = await store.dueSchedules(now, DUE_PAGE);
      for (const record of due) {
        if (record.nextAt === null || record.nextAt > now) continue;
        const s = decode(record);
        if (!s) {
          const error = new Error(`schedule "${record.id}" in lane "${lane}" has unreadable data`);
          await park(lane, store, record, error);
          continue;
        }
        const plan = planFire(ruleOf(s), s, record.nextAt, now);
        const next: StoredSchedule = { ...s, runs: plan.runs };
        if (plan.lastSlotAt !== undefined) next.lastSlotAt = plan.lastSlotAt;
        let jobs: NewJob[];
        try {
          jobs = jobsOf(record.id, lane, s, plan.slots, now);
        } catch (error) {
          // A run that cannot be built (an option this adapter no longer takes).
          await park(lane, store, record, error);
          continue;
        }
        const result = await store.fireSchedule(
          writeOf(record.id, next, plan.nextAt),
          record.revision,
          jobs,
        );
        if (result.status === "stale") {
          report.stale++;
          continue;
        }
        report.skipped += plan.skipped;
        for (const r of result.results) {
          if (r.status === "created") report.created++;
          else report.duplicates++;
          if (events.listenerCount("published") > 0) {
            events.emit("published", { lane, jobId: r.id, task: s.task, status: r.status });
          }
        }
        if (jobs.length > 0) deps.notifyLocalPublish(lane);
      }
      // A full page may hide more due schedules; every record of this one has moved on
      // (fired here or by another process, or set aside), so the next read shows new ones.
      if (due.length < DUE_PAGE) return;
    }
  };

  return {
    async upsert(id, spec, task, payload, jobOptions = {}) {
      deps.checkOpen();
      checkId(id);
      const resolved = resolveScheduleSpec(spec);
      const t = deps.knownTask(task);
      let value = validatePayload(t, payload);
      if (value instanceof Promise) value = await value;
      if (typeof jobOptions !== "object" || jobOptions === null) {
        throw new ConfigError("jobOptions", jobOptions, "must be an object");
      }
      for (const key of Object.keys(jobOptions)) {
        if (!SCHEDULE_JOB_OPTIONS.includes(key)) {
          throw new ConfigError(
            `jobOptions.${key}`,
            (jobOptions as Record<string, unknown>)[key],
            `unknown option (a schedule's runs take ${SCHEDULE_JOB_OPTIONS.join(", ")})`,
          );
        }
      }
      // Every check a run's publish makes, made now: a bad option fails the upsert, not
      // every firing. (The id is the longest a run can have.)
      encoder.prepare(t, value, { ...jobOptions, jobId: scheduleJobId(id, 0) }, clock.now());
      const lane = t.lane;
      const store = await storeOf(lane);
      // A schedule moving here from another lane keeps its count, last slot and anchor.
      const elsewhere = (await find(id)).find((f) => f.lane !== lane);
      const moved = elsewhere && decode(elsewhere.record);
      for (let attempt = 0; attempt < MAX_WRITE_ATTEMPTS; attempt++) {
        const existing = await store.getSchedule(id);
        const old = (existing && decode(existing)) || moved;
        const now = clock.now();
        const s: StoredSchedule = {
          v: 1,
          task: t.name,
          payload: value,
          options: jobOptions,
          spec: resolved,
          anchorAt: resolved.startAt ?? old?.anchorAt ?? now,
          runs: old?.runs ?? 0,
          paused: old?.paused ?? false,
          createdAt: old?.createdAt ?? now,
          updatedAt: now,
        };
        if (old?.lastSlotAt !== undefined) s.lastSlotAt = old.lastSlotAt;
        const nextAt = s.paused ? null : (firstSlot(ruleOf(s), s, now) ?? null);
        const write = writeOf(id, s, nextAt);
        const result = await store.putSchedule(write, existing?.revision ?? 0);
        if (result.status === "stale") continue;
        // A schedule moved to a task of another lane leaves the old one.
        await Promise.all(
          deps
            .lanes()
            .filter((l) => l !== lane)
            .map(async (l) => (await storeOf(l)).removeSchedule(id)),
        );
        if (nextAt !== null) deps.notifyLocalSchedule(lane);
        return infoOf(lane, { ...write, revision: result.revision }, s);
      }
      throw new ConfigError(
        "id",
        id,
        "is being written by other processes without pause; try again",
      );
    },

    async get(id) {
      deps.checkOpen();
      checkId(id);
      const [hit] = await find(id);
      if (!hit) return undefined;
      const s = decode(hit.record);
      return s ? infoOf(hit.lane, hit.record, s) : undefined;
    },

    async list() {
      deps.checkOpen();
      const out: ScheduleInfo[] = [];
      for (const lane of deps.lanes()) {
        const store = await storeOf(lane);
        let cursor: string | undefined;
        do {
          const page = await store.listSchedules(cursor);
          for (const record of page.records) {
            const s = decode(record);
            if (s) out.push(infoOf(lane, record, s));
          }
          cursor = page.cursor;
        } while (cursor !== undefined);
      }
      return out.sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
    },

    async remove(id) {
      deps.checkOpen();
      checkId(id);
      const found = await find(id);
      const removed = await Promise.all(found.map((f) => f.store.removeSchedule(id)));
      return removed.some(Boolean);
    },

    pause(id) {
      return update(id, (s) => {
        s.paused = true;
        return null;
      });
    },

    resume(id) {
      return update(id, (s, _record, now) => {
        s.paused = false;
        // Slots that passed while paused are not caught up: resume as if created now.
        const state = { runs: s.runs, lastSlotAt: Math.max(s.lastSlotAt ?? 0, now - 1) };
        return firstSlot(ruleOf(s), state, now) ?? null;
      });
    },

    async fireDue(lane) {
      deps.checkOpen();
      const report: FireReport = { created: 0, duplicates: 0, skipped: 0, stale: 0 };
      const lanes = lane === undefined ? deps.lanes() : [lane];
      for (const l of lanes) await fireLane(l, report);
      return report;
    },
  };
}
