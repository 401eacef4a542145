import type { Selector } from "./selector.ts";
import { createStrideSelector } from "./stride.ts";

/**
 * Weighted fair selection by stride scheduling: deterministic, each busy lane chosen in
 * proportion to its priority with evenly spaced turns (a lane with priority 5 next to one
 * with 100 gets every 21st turn, not "about 1 in 21 on average" as a lottery does).
 *
 * Lanes are considered from the lowest pass up; a lane known empty is skipped without a
 * request and only unknown lanes are probed. An empty lane banks no credit: when it has
 * jobs again it rejoins at the current pass. All empty: the long poll goes to the lane
 * with the lowest pass, so idle waits are shared by priority in turn as well.
 */
export function createWeightedFair(): Selector {
  return createStrideSelector({
    name: "weighted-fair",
    probeUnknown: true,
    phase: undefined,
    fallback: "stride",
    aging: undefined,
  });
}
