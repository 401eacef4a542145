import { z } from "zod";
import { ConfigError } from "./errors.ts";
import { count, parseOptions } from "./options.ts";
import type { RandomSource } from "./selectors/selector.ts";

/** How a task retries failed attempts. */
export interface RetryOptions {
  /** Total attempts including the first. 1 = never retry. Default 3. */
  maxAttempts?: number;
  /** Delay before the 2nd attempt, ms; doubles each attempt (baseMs · 2ⁿ). Default 1_000. */
  baseMs?: number;
  /** Upper bound for one delay, ms. Default 3_600_000 (1 h). */
  maxMs?: number;
  /**
   * Random share taken off each delay, 0..1: the delay is `d · (1 − jitter · r)` with r
   * uniform in [0, 1), which spreads retries of jobs that failed together. Default 0.2.
   * QuantumLeap's schedule is `{ baseMs: 20_000, jitter: 0 }`.
   */
  jitter?: number;
}

export type RetryPolicy = Required<RetryOptions>;

export const DEFAULT_RETRY: RetryPolicy = {
  maxAttempts: 3,
  baseMs: 1_000,
  maxMs: 3_600_000,
  jitter: 0.2,
};

export const retryOptionsSchema = z
  .object({
    maxAttempts: count(1).default(DEFAULT_RETRY.maxAttempts),
    baseMs: z.number().min(0, "must be a finite number >= 0").default(DEFAULT_RETRY.baseMs),
    maxMs: z.number().min(0, "must be a finite number >= 0").default(DEFAULT_RETRY.maxMs),
    jitter: z
      .number()
      .min(0, "must be between 0 and 1")
      .max(1, "must be between 0 and 1")
      .default(DEFAULT_RETRY.jitter),
  })
  .strict();

/** Fill defaults and validate; `field` names the option in errors. */
export function resolveRetry(options: RetryOptions | undefined, field: string): RetryPolicy {
  // Only an absent policy means the defaults: null is a mistake, named like any other.
  const policy = parseOptions(retryOptionsSchema, options === undefined ? {} : options, field);
  if (!(policy.maxMs >= policy.baseMs)) {
    throw new ConfigError(`${field}.maxMs`, policy.maxMs, "must be >= baseMs");
  }
  return policy;
}

/**
 * Delay before the next attempt after attempt `attempt` (1-based) failed:
 * `min(maxMs, baseMs · 2^(attempt−1))`, minus jitter.
 */
export function backoffMs(policy: RetryPolicy, attempt: number, random: RandomSource): number {
  const exp = Math.min(policy.maxMs, policy.baseMs * 2 ** Math.max(0, attempt - 1));
  return Math.round(exp * (1 - policy.jitter * random()));
}
