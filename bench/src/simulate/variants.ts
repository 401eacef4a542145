import {
  createHintedStride,
  createSelector,
  isSelectorName,
  type RandomSource,
  SELECTOR_NAMES,
  type Selector,
} from "@tasklane/core";

export type MakeSelector = (workerId: number, random: RandomSource, now: () => number) => Selector;

/** A selector as the simulator runs it: a label for the tables and a per-worker factory. */
export interface SelectorVariant {
  label: string;
  make: MakeSelector;
}

/** The default line-up: every built-in, and hinted-stride with its starvation guard on. */
export const DEFAULT_VARIANTS: ReadonlyArray<string> = [
  ...SELECTOR_NAMES,
  "hinted-stride+aging=100",
];

/**
 * A built-in selector name, or `hinted-stride+aging=MS` for hinted-stride with `agingMs`
 * (the guard reads the simulation's virtual clock). Undefined for anything else.
 */
export function resolveVariant(spec: string): SelectorVariant | undefined {
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
