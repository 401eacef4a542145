/**
 * Recurring schedules: the spec (cron or a fixed interval, time zone, window, limit,
 * catch-up policy), its validation, and the slot arithmetic. Pure functions of their
 * arguments (no clock, no I/O): the client (client/schedules.ts) reads the time and the
 * backend, and this file says which slots are due and what the next one is.
 *
 * A slot is an instant a run belongs to. Its job id is `<schedule id>@<slot epoch ms>`,
 * so every process that fires a slot puts the same job, and a schedule advances only by a
 * compare-and-set on its revision that commits together with that put (DESIGN.md,
 * "Recurring schedules").
 */
import { Cron } from "croner";
import { z } from "zod";
import { ConfigError } from "./errors.ts";
import { count, parseOptions } from "./options.ts";

/**
 * What happens to slots missed while no process fired them (every worker down):
 * `skip` runs none of them, only a slot fired within `graceMs` of its time counts as on
 * time; `one` runs the latest missed slot once; `all` runs every missed slot, at most
 * MAX_CATCH_UP_RUNS (the latest ones; older ones are dropped).
 */
export type CatchUp = "skip" | "one" | "all";

/** The most runs one firing puts under `catchUp: "all"`: the latest missed slots. */
export const MAX_CATCH_UP_RUNS = 1_000;
/** Longest schedule id: its job ids (`<id>@<13-digit slot>`) must fit in 128 characters. */
export const MAX_SCHEDULE_ID_LENGTH = 100;
/** Shortest interval: below it a schedule is a busy loop, not a schedule. */
export const MIN_EVERY_MS = 1_000;
const DEFAULT_GRACE_MS = 60_000;

export interface ScheduleSpec {
  /** A cron pattern of 5 fields (minute first) or 6 (second first), or a nickname (@hourly). */
  cron?: string;
  /** A fixed interval instead of cron: slots at startAt (or creation) + k·everyMs. */
  everyMs?: number;
  /** IANA time zone the cron pattern is read in (cron only). Default UTC. */
  timezone?: string;
  /** Epoch ms: no slot before it. */
  startAt?: number;
  /** Epoch ms: no slot after it; the schedule ends. */
  endAt?: number;
  /** Most runs in the schedule's life; it ends after the last one. */
  limit?: number;
  /** Missed slots after downtime. Default "one". */
  catchUp?: CatchUp;
  /** `catchUp: "skip"`: how late a slot may fire and still count as on time, ms. Default 60,000. */
  graceMs?: number;
}

/** A validated spec with its defaults. */
export interface ResolvedSpec {
  cron?: string;
  everyMs?: number;
  timezone?: string;
  startAt?: number;
  endAt?: number;
  limit?: number;
  catchUp: CatchUp;
  graceMs: number;
}

const epochMs = z.number().int("must be a whole epoch-ms number").min(0, "must be >= 0");

export const scheduleSpecSchema = z
  .object({
    cron: z.string("must be a cron pattern (a string)").optional(),
    everyMs: z
      .number()
      .int("must be a whole number of ms")
      .min(MIN_EVERY_MS, `must be >= ${MIN_EVERY_MS} ms`)
      .optional(),
    timezone: z.string("must be an IANA time zone name").optional(),
    startAt: epochMs.optional(),
    endAt: epochMs.optional(),
    limit: count(1).optional(),
    catchUp: z.enum(["skip", "one", "all"], 'must be "skip", "one" or "all"').optional(),
    graceMs: z.number().int("must be a whole number of ms").min(0, "must be >= 0").optional(),
  })
  .strict();

/** Check a spec; throws ConfigError naming the field (`spec.cron`, `spec.timezone`, …). */
export function resolveScheduleSpec(input: ScheduleSpec): ResolvedSpec {
  const spec = parseOptions(scheduleSpecSchema, input, "spec");
  if ((spec.cron === undefined) === (spec.everyMs === undefined)) {
    throw new ConfigError("spec.cron", spec.cron, "give cron or everyMs, exactly one of them");
  }
  if (spec.timezone !== undefined) {
    if (spec.cron === undefined) {
      throw new ConfigError("spec.timezone", spec.timezone, "applies to cron only");
    }
    try {
      new Intl.DateTimeFormat("en-US", { timeZone: spec.timezone });
    } catch {
      throw new ConfigError("spec.timezone", spec.timezone, "is not an IANA time zone name");
    }
  }
  if (spec.cron !== undefined) {
    const text = spec.cron.trim();
    const fields = text.split(/\s+/).length;
    if (!text.startsWith("@") && fields !== 5 && fields !== 6) {
      throw new ConfigError(
        "spec.cron",
        spec.cron,
        `has ${fields} fields: give 5 (minute hour day month weekday) or 6 (second first)`,
      );
    }
    try {
      // A pattern that never matches (30 February) has no next run: refused here, not
      // found out at the first firing.
      if (cronOf(text, spec.timezone).nextRun(new Date(0)) === null) {
        throw new Error("it never matches a time");
      }
    } catch (error) {
      throw new ConfigError("spec.cron", spec.cron, (error as Error).message);
    }
  }
  if (spec.startAt !== undefined && spec.endAt !== undefined && spec.endAt < spec.startAt) {
    throw new ConfigError("spec.endAt", spec.endAt, "must not be before startAt");
  }
  if (spec.graceMs !== undefined && spec.catchUp !== "skip") {
    throw new ConfigError("spec.graceMs", spec.graceMs, 'applies to catchUp: "skip" only');
  }
  const out: ResolvedSpec = {
    catchUp: spec.catchUp ?? "one",
    graceMs: spec.graceMs ?? DEFAULT_GRACE_MS,
  };
  if (spec.cron !== undefined) out.cron = spec.cron.trim();
  if (spec.everyMs !== undefined) out.everyMs = spec.everyMs;
  if (spec.timezone !== undefined) out.timezone = spec.timezone;
  if (spec.startAt !== undefined) out.startAt = spec.startAt;
  if (spec.endAt !== undefined) out.endAt = spec.endAt;
  if (spec.limit !== undefined) out.limit = spec.limit;
  return out;
}

/**
 * Croner's `Cron`, parsed once per pattern and zone and kept (a firing asks for a few
 * slots of the same schedule; parsing is the larger part of that).
 */
const crons = new Map<string, Cron>();
const MAX_CACHED_CRONS = 1_000;

function cronOf(pattern: string, timezone: string | undefined): Cron {
  const key = `${timezone ?? ""}\n${pattern}`;
  let cron = crons.get(key);
  if (cron === undefined) {
    // paused: croner never starts a timer of its own; it only computes runs. Day of month
    // and day of week are OR-ed when both are given, as in Vixie cron (and POSIX).
    cron = new Cron(pattern, {
      paused: true,
      timezone: timezone ?? "UTC",
      domAndDow: false,
    });
    if (crons.size >= MAX_CACHED_CRONS) crons.clear();
    crons.set(key, cron);
  }
  return cron;
}

/** How a schedule's slots are laid out: the spec, and where an interval counts from. */
export interface SlotRule {
  spec: ResolvedSpec;
  /** everyMs: slots are anchorAt + k·everyMs, k >= 0 (startAt, or the first upsert's time). */
  anchorAt: number;
}

/** The first slot strictly after `t`, within startAt..endAt; undefined when none. */
export function slotAfter(rule: SlotRule, t: number): number | undefined {
  const { spec } = rule;
  let at: number;
  const from = spec.startAt !== undefined && spec.startAt - 1 > t ? spec.startAt - 1 : t;
  if (spec.everyMs !== undefined) {
    const k = Math.max(0, Math.floor((from - rule.anchorAt) / spec.everyMs) + 1);
    at = rule.anchorAt + k * spec.everyMs;
  } else {
    const next = cronOf(spec.cron as string, spec.timezone).nextRun(new Date(from));
    if (next === null) return undefined;
    at = next.getTime();
  }
  if (spec.endAt !== undefined && at > spec.endAt) return undefined;
  return at;
}

/**
 * The slots in [from, to] (both inclusive): the latest `max` of them, oldest first, and
 * how many there are in all (counted up to `max + 1`: a long outage is not walked slot
 * by slot). The usual firing has one or two slots due and walks forward from `from`;
 * only when more than `max` are due does it count back from `to` instead.
 */
export function slotsBetween(
  rule: SlotRule,
  from: number,
  to: number,
  max: number,
): { slots: number[]; total: number } {
  const forward: number[] = [];
  let at = slotAfter(rule, from - 1);
  while (at !== undefined && at <= to && forward.length <= max) {
    forward.push(at);
    at = slotAfter(rule, at);
  }
  if (forward.length <= max) return { slots: forward, total: forward.length };
  return { slots: latestSlots(rule, from, to, max), total: max + 1 };
}

/** The latest `max` slots in [from, to], oldest first, counted back from `to`. */
function latestSlots(rule: SlotRule, from: number, to: number, max: number): number[] {
  const { spec } = rule;
  const lo = Math.max(from, spec.startAt ?? from);
  const hi = spec.endAt !== undefined ? Math.min(to, spec.endAt) : to;
  const out: number[] = [];
  if (hi < lo || max <= 0) return out;
  if (spec.everyMs !== undefined) {
    const every = spec.everyMs;
    for (let k = Math.floor((hi - rule.anchorAt) / every); k >= 0 && out.length < max; k--) {
      const t = rule.anchorAt + k * every;
      if (t < lo) break;
      out.push(t);
    }
  } else {
    // previousRuns(n, d): runs strictly before d, latest first.
    const runs = cronOf(spec.cron as string, spec.timezone).previousRuns(max, new Date(hi + 1));
    for (const run of runs) {
      const t = run.getTime();
      if (t < lo) break;
      out.push(t);
    }
  }
  return out.reverse();
}

/** The stored progress of a schedule. */
export interface SlotState {
  /** Runs put so far. */
  runs: number;
  /** The latest slot handled (run or skipped by the catch-up policy). */
  lastSlotAt?: number;
}

/** What one firing at `now` does: the slots to run and the state after them. */
export interface FirePlan {
  /** Slots to put a job for, oldest first. */
  slots: number[];
  /**
   * Slots that fell due but are not run (catch-up policy, limit), counted up to
   * MAX_CATCH_UP_RUNS + 1 due slots in all.
   */
  skipped: number;
  runs: number;
  lastSlotAt: number | undefined;
  /** The next slot, strictly after `now`; null when the schedule has ended. */
  nextAt: number | null;
}

/**
 * Fire a schedule whose next slot `nextAt` is due (`nextAt <= now`): which slots run,
 * by the catch-up policy and the limit, and where the schedule goes next.
 */
export function planFire(rule: SlotRule, state: SlotState, nextAt: number, now: number): FirePlan {
  const { spec } = rule;
  // Every slot in [nextAt, now] is due; the latest MAX_CATCH_UP_RUNS are enough for every
  // policy.
  const { slots: due, total } = slotsBetween(rule, nextAt, now, MAX_CATCH_UP_RUNS);
  const latest = due[due.length - 1];
  let slots: number[];
  if (latest === undefined) slots = [];
  else if (spec.catchUp === "all") slots = due;
  else if (spec.catchUp === "one") slots = [latest];
  else slots = now - latest <= spec.graceMs ? [latest] : [];
  const left = spec.limit === undefined ? Number.POSITIVE_INFINITY : spec.limit - state.runs;
  if (slots.length > left) slots = slots.slice(0, Math.max(0, left));
  const runs = state.runs + slots.length;
  const ended = spec.limit !== undefined && runs >= spec.limit;
  const next = ended ? undefined : slotAfter(rule, Math.max(now, latest ?? now));
  return {
    slots,
    skipped: Math.max(0, total - slots.length),
    runs,
    lastSlotAt: latest ?? state.lastSlotAt,
    nextAt: next ?? null,
  };
}

/**
 * The next slot of a schedule created or edited at `now`: the first at or after `now`
 * (a new schedule whose first slot is now runs now), and after the last slot it handled
 * (an edit never re-runs a slot). Undefined when none is left (endAt passed, limit met).
 */
export function firstSlot(rule: SlotRule, state: SlotState, now: number): number | undefined {
  if (rule.spec.limit !== undefined && state.runs >= rule.spec.limit) return undefined;
  const from = Math.max(now - 1, state.lastSlotAt ?? Number.NEGATIVE_INFINITY);
  return slotAfter(rule, from);
}

/** The job id of a schedule's run in `slotAt`. */
export function scheduleJobId(scheduleId: string, slotAt: number): string {
  return `${scheduleId}@${slotAt}`;
}
