import { ConfigError } from "@tasklane/core/adapter";

/**
 * Key layout of one lane. Every key carries the hash tag `{<prefix>:<lane>}`, so every
 * script touches a single slot (Redis Cluster), and starts with `<prefix>:`, so an ACL
 * rule `~<prefix>:*` covers exactly one prefix.
 */
export interface LaneKeys {
  /** In the order every script receives them (see src/lua/_common.lua). */
  all: string[];
  meta: string;
  stats: string;
  wake: string;
  /** Recurring schedules: id -> stored text, and the ids with a next slot by nextAt. */
  schedules: string;
  scheduleIndex: string;
  /** A rate-limited lane's log of starts (lua/reserve.lua, RATE LIMIT). */
  rateLimit: string;
  /** Debounce windows by key, and their keys by the window's end (lua/put.lua, DEBOUNCE). */
  debounce: string;
  debounceUntil: string;
  /** Flows (FLOWS in lua/_common.lua; the scripts derive them from KEYS[1]): the outbox. */
  outbox: string;
  /** Flows: the flow links of the lane's jobs (what a repeated putFlow checks). */
  flowLinks: string;
}

// KEYS[1..18] of every script, in this order (see src/lua/_common.lua).
const SUFFIXES = [
  ...["m", "j", "w", "p", "d", "a", "s", "f", "c", "k", "t", "b", "x"],
  // the operator features': results, expiries, expired jobs, the tag and failure indexes
  ...["r", "e", "z", "g", "h"],
] as const;

export function laneKeys(prefix: string, lane: string): LaneKeys {
  const tag = `${prefix}:{${prefix}:${lane}}:`;
  const all = SUFFIXES.map((s) => tag + s);
  return {
    all,
    meta: `${tag}m`,
    stats: `${tag}t`,
    wake: `${tag}k`,
    schedules: `${tag}sched`,
    scheduleIndex: `${tag}sched:due`,
    rateLimit: `${tag}rl`,
    debounce: `${tag}db`,
    debounceUntil: `${tag}db:until`,
    outbox: `${tag}ob`,
    flowLinks: `${tag}fl`,
  };
}

/**
 * The worker registry of one prefix (lua/workers.lua): its hash and its lapse times, under
 * the hash tag `{<prefix>:}`, which no lane has (a lane name is not empty).
 */
export function registryKeys(prefix: string): [string, string] {
  const tag = `${prefix}:{${prefix}:}:`;
  return [`${tag}workers`, `${tag}workers-lapse`];
}

/** The pub/sub channel of one prefix (cross-process events). */
export function eventsChannel(prefix: string): string {
  return `${prefix}:events`;
}

/** Braces would break the hash tag: a name with one could land keys on several slots. */
export function checkName(field: string, value: unknown): string {
  if (typeof value !== "string" || value.length === 0) {
    throw new ConfigError(field, value, "must be a non-empty string");
  }
  if (value.includes("{") || value.includes("}")) {
    throw new ConfigError(field, value, "must not contain { or } (they delimit the hash tag)");
  }
  return value;
}
