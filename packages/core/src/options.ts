/**
 * One way to check options: a zod schema per options object, parsed by `parseOptions`,
 * which throws a ConfigError naming the first bad field and its value. Checks that relate
 * options to each other, or to an adapter's capabilities, follow the parse.
 */
import { z } from "zod";
import type { Clock } from "./clock.ts";
import { ConfigError } from "./errors.ts";
import type { RandomSource } from "./selectors/selector.ts";

/**
 * Parse `input` with `schema`, or throw a ConfigError for the first issue, its field
 * named from `prefix` (e.g. `worker.heartbeatMs`, `lanes[1].leaseMs`).
 */
export function parseOptions<S extends z.ZodType>(
  schema: S,
  input: unknown,
  prefix: string,
): z.output<S> {
  const result = schema.safeParse(input);
  if (!result.success) throw configErrorFrom(prefix, result.error, input);
  return result.data;
}

/** The ConfigError of a zod error's first issue, naming its field and value. */
export function configErrorFrom(prefix: string, error: z.ZodError, input: unknown): ConfigError {
  let issue: z.core.$ZodIssue | undefined = error.issues[0];
  let path: PropertyKey[] = [...(issue?.path ?? [])];
  // A union (`boolean | { high, low }`) reports that no member matched. When a member
  // failed deeper inside (`low` of the object), that issue names the field: take it.
  while (issue?.code === "invalid_union") {
    let deepest: z.core.$ZodIssue | undefined;
    for (const member of issue.errors) {
      const first = member[0];
      if (first && first.path.length > (deepest?.path.length ?? 0)) deepest = first;
    }
    if (deepest === undefined) break;
    path = [...path, ...deepest.path];
    issue = deepest;
  }
  let field = prefix;
  let value: unknown = input;
  for (const key of path) {
    field += typeof key === "number" ? `[${key}]` : field === "" ? String(key) : `.${String(key)}`;
    value =
      value !== null && typeof value === "object"
        ? (value as Record<PropertyKey, unknown>)[key as PropertyKey]
        : undefined;
  }
  if (issue?.code === "unrecognized_keys") {
    const keys = issue.keys.join(", ");
    const hint = issue.keys.some((k) => k.includes("_"))
      ? " (Kale's snake_case keys go through fromKaleConfig() from @tasklane/core/kale)"
      : "";
    return new ConfigError(field, keys, `unknown option${hint}`);
  }
  return new ConfigError(field, value, issue?.message ?? "invalid");
}

// Pieces the options schemas share. zod's numbers refuse NaN and ±Infinity.

/**
 * The longest delay a Node timer keeps, ms (2³¹ − 1, about 24.8 days). A longer one fires
 * after 1 ms instead, so every option that ends up in a timer is bounded by it.
 */
export const MAX_TIMER_MS = 2_147_483_647;

/** A duration in ms from `min` up to MAX_TIMER_MS (it may go into a timer). */
export const timerMs = (min: number) =>
  z
    .number()
    .min(min, `must be >= ${min} ms`)
    .max(MAX_TIMER_MS, `must be <= ${MAX_TIMER_MS} ms (the longest timer Node keeps)`);

/** A whole number of ms from `min` up to MAX_TIMER_MS (it may go into a timer). */
export const wholeTimerMs = (min: number) =>
  z
    .number()
    .int(`must be a whole number of ms >= ${min}`)
    .min(min, `must be >= ${min} ms`)
    .max(MAX_TIMER_MS, `must be <= ${MAX_TIMER_MS} ms (the longest timer Node keeps)`);

/** A whole number of ms from `min` up. */
export const wholeMs = (min: number) =>
  z.number().int(`must be a whole number of ms >= ${min}`).min(min, `must be >= ${min} ms`);

/** A count from `min` up. */
export const count = (min: number) =>
  z.number().int(`must be an integer >= ${min}`).min(min, `must be an integer >= ${min}`);

/** Any function (a callback, a predicate); its signature is the option's own. */
export const functionSchema = <F extends (...args: never[]) => unknown>(what = "a function") =>
  z.custom<F>((v) => typeof v === "function", `must be ${what}`);

/** A plain object of settings handed on to another library (its own checks apply). */
export const settingsObject = <T extends object>(what: string) =>
  z.custom<T>(
    (v) => typeof v === "object" && v !== null && !Array.isArray(v),
    `must be an object (${what})`,
  );

export const randomSource = z.custom<RandomSource>(
  (v) => typeof v === "function",
  "must be a function returning a number in [0, 1)",
);

export const clockSchema = z.custom<Clock>(
  (v) =>
    typeof v === "object" &&
    v !== null &&
    typeof (v as Clock).now === "function" &&
    typeof (v as Clock).setTimeout === "function" &&
    typeof (v as Clock).clearTimeout === "function",
  "must be a Clock (now, setTimeout, clearTimeout), e.g. createManualClock()",
);

/** A source of the time only. */
export const nowSchema = z.custom<Pick<Clock, "now">>(
  (v) => typeof v === "object" && v !== null && typeof (v as Clock).now === "function",
  "must have a now() returning epoch ms",
);
