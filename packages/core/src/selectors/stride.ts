import type { Lane, RandomSource, SelectionContext, Selector } from "./selector.ts";

/**
 * Stride scheduling (Waldspurger & Weihl, 1995) over lanes, shared by the weighted-fair
 * and hinted-stride selectors. Each lane has `stride = STRIDE_UNIT / priority` and a
 * `pass`; the lane with jobs and the lowest pass is chosen and its pass advances by its
 * stride, so over any run of selections each busy lane's share is proportional to its
 * priority, with evenly spaced turns (no lottery tail).
 *
 * The global pass is the pass of the latest choice. A lane found empty banks no credit:
 * its pass is raised to the global pass whenever it is passed over for being empty, so
 * when it has jobs again it rejoins at the current minimum, as stride scheduling does for
 * a client that rejoins. Otherwise a lane idle for an hour would monopolise the worker
 * when it wakes.
 */
export const STRIDE_UNIT = 1_000_000;

export interface StrideOptions {
  readonly name: string;
  /**
   * true: probe lanes with no hint (weighted-fair). false: choose them as if they had
   * jobs, the worker's reserve being the probe (hinted-stride); the turn is spent either
   * way, which is what spaces out the checks of a lane that stays empty.
   */
  readonly probeUnknown: boolean;
  /** Initial pass of each lane, as a fraction in [0, 1) of its stride. Undefined: 1. */
  readonly phase: RandomSource | undefined;
}

const NONE: ReadonlySet<Lane> = new Set();

export function createStrideSelector(options: StrideOptions): Selector {
  const passes = new Map<string, number>();
  let globalPass = 0;

  const strideOf = (lane: Lane) => STRIDE_UNIT / lane.priority;
  const passOf = (lane: Lane): number => {
    let pass = passes.get(lane.name);
    if (pass === undefined) {
      pass = globalPass + strideOf(lane) * (options.phase === undefined ? 1 : options.phase());
      passes.set(lane.name, pass);
    }
    return pass;
  };
  // Lowest pass first; configuration order on a tie.
  const lowestPass = (lanes: ReadonlyArray<Lane>, skip: ReadonlySet<Lane>) => {
    let best: Lane | undefined;
    let bestPass = Number.POSITIVE_INFINITY;
    for (const lane of lanes) {
      if (skip.has(lane)) continue;
      const pass = passOf(lane);
      if (pass < bestPass) {
        best = lane;
        bestPass = pass;
      }
    }
    return best;
  };

  return {
    name: options.name,
    async select(context: SelectionContext): Promise<Lane> {
      const lanes = context.lanes;
      const empty = new Set<Lane>();
      for (;;) {
        const lane = lowestPass(lanes, empty);
        if (lane === undefined) break;
        let ready = context.readyHint(lane);
        if (ready === undefined && options.probeUnknown) ready = await context.probe(lane);
        const pass = passOf(lane);
        if (ready === 0) {
          passes.set(lane.name, Math.max(pass, globalPass));
          empty.add(lane);
          continue;
        }
        globalPass = Math.max(globalPass, pass);
        passes.set(lane.name, pass + strideOf(lane));
        return lane;
      }
      // Every lane is known empty: share the long polls by stride too, so an idle worker
      // spends its waits on the lanes in proportion to their priority.
      const lane = lowestPass(lanes, NONE)!;
      passes.set(lane.name, passOf(lane) + strideOf(lane));
      return lane;
    },
  };
}
