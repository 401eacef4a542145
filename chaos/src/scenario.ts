/**
 * A scenario is three steps on an environment it builds: `setup` (servers, workers, the
 * first jobs), `inject` (the faults, while jobs run) and `check` (drain, the checker, the
 * scenario's figures). `runScenario` runs them in order and always tears down.
 */
import type { CheckResult } from "./checker.ts";

export type ProfileName = "fast" | "full";

/** A measured figure; one with a target is asserted by `--strict`. */
export interface Figure {
  name: string;
  value: number | undefined;
  unit: string;
  /** The value must be at most this. */
  target?: number;
  /** The target as people say it, e.g. "≤ lease + 1 s". */
  targetText?: string;
  /** How many samples the value summarises, where it is a percentile. */
  samples?: number;
}

export interface ScenarioResult {
  name: string;
  title: string;
  backend: string;
  params: Record<string, string | number>;
  durationMs: number;
  check?: CheckResult;
  figures: Figure[];
  notes: string[];
  /** What failed whatever the profile (lost, unattributed duplicates, double acks, ...). */
  failures: string[];
}

export interface ScenarioContext {
  runDir: string;
  profile: ProfileName;
  log(message: string): void;
}

export interface Scenario<P, E extends { teardown(): Promise<void> }> {
  name: string;
  title: string;
  setup(ctx: ScenarioContext, params: P): Promise<E>;
  inject(env: E, params: P, ctx: ScenarioContext): Promise<void>;
  check(env: E, params: P, ctx: ScenarioContext): Promise<Omit<ScenarioResult, "durationMs">>;
}

export async function runScenario<P, E extends { teardown(): Promise<void> }>(
  scenario: Scenario<P, E>,
  ctx: ScenarioContext,
  params: P,
): Promise<ScenarioResult> {
  const started = Date.now();
  ctx.log(`${scenario.name}: setup`);
  const env = await scenario.setup(ctx, params);
  try {
    ctx.log(`${scenario.name}: inject`);
    await scenario.inject(env, params, ctx);
    ctx.log(`${scenario.name}: check`);
    const result = await scenario.check(env, params, ctx);
    return { ...result, durationMs: Date.now() - started };
  } finally {
    await env.teardown();
  }
}

/** Whether a figure meets its target (true when it has none). */
export function meets(figure: Figure): boolean {
  if (figure.target === undefined) return true;
  return figure.value !== undefined && figure.value <= figure.target;
}
