import { z } from "zod";
import { type Clock, systemClock } from "../clock.ts";
import { nowSchema, parseOptions, randomSource } from "../options.ts";
import type { RandomSource, Selector } from "./selector.ts";
import { createStrideSelector } from "./stride.ts";

export interface HintedStrideOptions {
  /**
   * Randomness for each lane's initial phase and for the lottery that picks the lane to
   * long-poll when all are empty, in [0, 1). Default `Math.random`, so the workers of one
   * deployment do not take the same turns at the same moment; inject a seeded source to
   * replay.
   */
  random?: RandomSource;
  /**
   * Starvation guard, ms; default off. When set, a lane not known to be empty that has
   * had no turn for `agingMs × (highest priority / its priority)` takes the next turn
   * (earliest deadline first when several are overdue). With Kale's lanes (100/40/5) and
   * `agingMs: 200`, the low lane gets a turn about every 4 s at worst and the default lane
   * every 500 ms. It bounds the gaps between turns, which helps a low lane most when the
   * fleet is saturated, and there the time comes out of the higher lanes: see
   * bench/src/simulate/README.md for the trade-off in numbers.
   */
  agingMs?: number;
  /** Time source for `agingMs`. Default the system clock. */
  clock?: Pick<Clock, "now">;
}

export const hintedStrideOptionsSchema = z
  .object({
    random: randomSource.optional(),
    agingMs: z.number().positive("must be a positive number of ms").optional(),
    clock: nowSchema.optional(),
  })
  .strict();

/**
 * Stride scheduling that never probes. Busy lanes take evenly spaced turns in proportion
 * to their priority (no lottery tail: in the simulator, a low lane under a saturated
 * high lane waits less than half as long at worst as with ReducedLottery), a lane known
 * empty is skipped for free and banks no credit, and when every lane is known empty the
 * lane to long-poll is drawn by tickets, exactly as ReducedLottery does.
 *
 * A lane the worker knows nothing about is chosen as if it had jobs: the worker's reserve
 * on it costs the one request a probe would, and takes jobs when there are some, so the
 * probe is saved whenever the lane is busy. That speculative turn is charged like any
 * other, so a lane that stays empty is re-checked at its share of turns (and only once
 * its hint has expired), not at every selection.
 *
 * This relies on the worker reserving without waiting (`waitMs: 0`) unless every lane is
 * known empty, as tasklane's worker loop does.
 */
export function createHintedStride(input: HintedStrideOptions = {}): Selector {
  const options = parseOptions(hintedStrideOptionsSchema, input, "");
  const random = options.random ?? Math.random;
  const { agingMs } = options;
  return createStrideSelector({
    name: "hinted-stride",
    probeUnknown: false,
    phase: random,
    fallback: random,
    aging: agingMs === undefined ? undefined : { agingMs, clock: options.clock ?? systemClock },
  });
}
