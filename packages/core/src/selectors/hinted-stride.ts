import type { RandomSource, Selector } from "./selector.ts";
import { createStrideSelector } from "./stride.ts";

export interface HintedStrideOptions {
  /**
   * Randomness for each lane's initial phase, in [0, 1). Default `Math.random`, so the
   * workers of one deployment do not all take the same turns at the same moment; inject a
   * seeded source to replay.
   */
  random?: RandomSource;
}

/**
 * Stride scheduling that never probes. Like weighted-fair, busy lanes take evenly spaced
 * turns in proportion to their priority, known-empty lanes are skipped for free and an
 * empty lane banks no credit. Unlike it, a lane the worker knows nothing about is chosen
 * as if it had jobs: the worker's reserve on it costs the one request a probe would, and
 * takes jobs when there are some, so the probe is saved whenever the lane is busy. That
 * speculative turn is charged like any other, so a lane that stays empty is re-checked at
 * its share of turns (and only once its hint has expired), not at every selection.
 *
 * This relies on the worker loop reserving without waiting (`waitMs: 0`) on a lane whose
 * hint is not 0, and long-polling only a lane known empty, which is what a selector
 * returns only when every lane is empty.
 */
export function createHintedStride(options: HintedStrideOptions = {}): Selector {
  return createStrideSelector({
    name: "hinted-stride",
    probeUnknown: false,
    phase: options.random ?? Math.random,
  });
}
