/**
 * Parsers for option values. Each throws commander's InvalidArgumentError, which commander
 * reports with the option's name ("option '--limit <n>' argument '-1' is invalid. …") and
 * the CLI turns into exit code 2.
 */
import { type JobState, MAX_JOB_PRIORITY, MIN_JOB_PRIORITY } from "@tasklane/core";
import { InvalidArgumentError } from "commander";
import ms from "ms";

export const JOB_STATES: readonly JobState[] = [
  "waiting",
  "delayed",
  "blocked",
  "active",
  "failed",
  "succeeded",
  "canceled",
  "expired",
];

/** An integer >= `min`. */
export function integerAtLeast(min: number): (value: string) => number {
  return (value) => {
    const n = Number(value);
    if (value.trim() === "" || !Number.isInteger(n) || n < min) {
      throw new InvalidArgumentError(`must be an integer >= ${min}`);
    }
    return n;
  };
}

/** A job priority: an integer from −1000 to 1000. */
export function parsePriority(value: string): number {
  const n = Number(value);
  if (value.trim() === "" || !Number.isInteger(n) || n < MIN_JOB_PRIORITY || n > MAX_JOB_PRIORITY) {
    throw new InvalidArgumentError(
      `must be an integer from ${MIN_JOB_PRIORITY} to ${MAX_JOB_PRIORITY}`,
    );
  }
  return n;
}

/** A duration, ms: "500ms", "30s", "5m", "2h", "1d" (a bare number is ms), >= 0. */
export function parseDuration(value: string): number {
  const n = ms(value as ms.StringValue) as number | undefined;
  if (n === undefined || !Number.isFinite(n) || n < 0) {
    throw new InvalidArgumentError('must be a duration like "500ms", "30s", "5m", "2h" or "1d"');
  }
  return n;
}

/** A time: ISO 8601 ("2026-11-26T09:00:00Z") or epoch ms. */
export function parseTime(value: string): number {
  const n = /^\d+$/.test(value) ? Number(value) : Date.parse(value);
  if (!Number.isFinite(n)) {
    throw new InvalidArgumentError('must be an ISO 8601 time ("2026-11-26T09:00:00Z") or epoch ms');
  }
  return n;
}

/**
 * A point in time for `--since` / `--until`: ISO 8601, epoch ms, or a duration ago
 * ("30m": thirty minutes before now).
 */
export function parseTimeOrAgo(value: string, now = Date.now()): number {
  if (/^\d+$/.test(value)) return Number(value);
  const at = Date.parse(value);
  if (Number.isFinite(at)) return at;
  const ago = ms(value as ms.StringValue) as number | undefined;
  if (ago !== undefined && Number.isFinite(ago) && ago >= 0) return now - ago;
  throw new InvalidArgumentError(
    'must be an ISO 8601 time ("2026-11-26T09:00:00Z"), epoch ms, or a duration ago ("30m", "2h", "1d")',
  );
}

/** A UTC day, "YYYY-MM-DD". */
export function parseDay(value: string): string {
  const match = /^(\d{4})-(\d{2})-(\d{2})$/.exec(value);
  const valid =
    match !== null && new Date(`${value}T00:00:00Z`).toISOString().slice(0, 10) === value;
  if (!valid) throw new InvalidArgumentError('must be a UTC day, "YYYY-MM-DD"');
  return value;
}

/** JSON text. */
export function parseJson(value: string): unknown {
  try {
    return JSON.parse(value);
  } catch (error) {
    throw new InvalidArgumentError(`must be JSON (${(error as Error).message})`);
  }
}

/** A comma-separated list that may also be repeated (`--lane a,b --lane c`). */
export function collectList(value: string, previous: string[] | undefined): string[] {
  const items = value
    .split(",")
    .map((item) => item.trim())
    .filter((item) => item !== "");
  if (items.length === 0) throw new InvalidArgumentError("must name at least one");
  return [...(previous ?? []), ...items];
}

/** A comma-separated, repeatable list of values from `allowed`. */
export function collectChoices<T extends string>(
  allowed: readonly T[],
): (value: string, previous: T[] | undefined) => T[] {
  return (value, previous) => {
    const items = collectList(value, undefined);
    for (const item of items) {
      if (!(allowed as readonly string[]).includes(item)) {
        throw new InvalidArgumentError(`"${item}" is not one of ${allowed.join(", ")}`);
      }
    }
    return [...new Set([...(previous ?? []), ...(items as T[])])];
  };
}
