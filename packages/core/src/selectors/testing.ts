import type { Lane, SelectionContext } from "./selector.ts";

/**
 * A selection context over fixed lanes for tests of selectors (ours and yours): `ready`
 * holds each lane's true ready count, `hints` what the worker knows (absent = unknown).
 * Probes are counted per lane and update the hint, as the worker's context does.
 */
export interface TestSelectionContext extends SelectionContext {
  readonly ready: Map<string, number>;
  readonly hints: Map<string, number>;
  readonly probes: Map<string, number>;
  /** Total probes so far. */
  probeCount(): number;
}

export function createTestContext(
  lanes: ReadonlyArray<Lane>,
  ready: Record<string, number> = {},
  hints: Record<string, number> = {},
): TestSelectionContext {
  const readyMap = new Map(Object.entries(ready));
  const hintMap = new Map(Object.entries(hints));
  const probes = new Map<string, number>();
  return {
    lanes,
    ready: readyMap,
    hints: hintMap,
    probes,
    readyHint: (lane) => hintMap.get(lane.name),
    probe(lane) {
      probes.set(lane.name, (probes.get(lane.name) ?? 0) + 1);
      const count = readyMap.get(lane.name) ?? 0;
      hintMap.set(lane.name, count);
      return Promise.resolve(count);
    },
    probeCount: () => [...probes.values()].reduce((a, b) => a + b, 0),
  };
}

/** Kale's example lanes. */
export const KALE_LANES: ReadonlyArray<Lane> = [
  { name: "high", priority: 100 },
  { name: "default", priority: 40 },
  { name: "low", priority: 5 },
];
