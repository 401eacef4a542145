import {
  createHintedStride,
  createSelector,
  createTrickleStride,
  isSelectorName,
  type RandomSource,
  SELECTOR_NAMES,
  type Selector,
} from "@tasklane/core";
import type { Peek } from "./engine.ts";
import { createOracle, parseOracle } from "./oracle.ts";

export type MakeSelector = (
  workerId: number,
  random: RandomSource,
  now: () => number,
  peek: Peek,
) => Selector;

/** A selector as the simulator runs it: a label for the tables and a per-worker factory. */
export interface SelectorVariant {
  label: string;
  make: MakeSelector;
}

/**
 * The default line-up: every built-in, hinted-stride with its starvation guard on, and the
 * oracle (not a real selector: the bound of what one could reach; see oracle.ts).
 */
export const DEFAULT_VARIANTS: ReadonlyArray<string> = [
  ...SELECTOR_NAMES,
  "hinted-stride+aging=100",
  "oracle",
];

/**
 * A built-in selector name, `hinted-stride+aging=MS` for hinted-stride with `agingMs`, or
 * `trickle-stride+trickle=MS` for trickle-stride with `trickleMs` (the clocked selectors
 * read the simulation's virtual clock), or `oracle[+tau=MS[/MS…]][+beta=B]` (see
 * oracle.ts: it reads the simulated lanes, so only the simulator can run it). Undefined
 * for anything else.
 */
export function resolveVariant(spec: string): SelectorVariant | undefined {
  const oracle = parseOracle(spec);
  if (oracle !== undefined) {
    return {
      label: spec,
      make: (_id, random, _now, peek) => createOracle(peek, random, oracle),
    };
  }
  const trickle = /^trickle-stride(?:\+trickle=(\d+(?:\.\d+)?))?$/.exec(spec);
  if (trickle !== null) {
    const trickleMs = trickle[1] === undefined ? undefined : Number(trickle[1]);
    if (trickleMs !== undefined && !(trickleMs > 0)) return undefined;
    return {
      label: spec,
      make: (_id, random, now) =>
        createTrickleStride({
          random,
          clock: { now },
          ...(trickleMs === undefined
            ? {}
            : { trickleMs, maxTrickleMs: Math.max(1_000, trickleMs) }),
        }),
    };
  }
  if (isSelectorName(spec)) {
    return { label: spec, make: (_id, random) => createSelector(spec, { random }) };
  }
  const aging = /^hinted-stride\+aging=(\d+(?:\.\d+)?)$/.exec(spec);
  if (aging !== null) {
    const agingMs = Number(aging[1]);
    if (!(agingMs > 0)) return undefined;
    return {
      label: spec,
      make: (_id, random, now) => createHintedStride({ random, agingMs, clock: { now } }),
    };
  }
  return undefined;
}
