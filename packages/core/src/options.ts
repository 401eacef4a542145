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
  const issue = error.issues[0];
  const path = issue?.path ?? [];
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

/** A whole number of ms from `min` up. */
export const wholeMs = (min: number) =>
  z.number().int(`must be a whole number of ms >= ${min}`).min(min, `must be >= ${min} ms`);

/** A count from `min` up. */
export const count = (min: number) =>
  z.number().int(`must be an integer >= ${min}`).min(min, `must be an integer >= ${min}`);

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
