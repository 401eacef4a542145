import type { Clock } from "../clock.ts";
import { drawByTickets } from "./draw.ts";
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
  /**
   * Which lane to long-poll when every lane is known empty: "stride" shares the waits
   * by priority in turn; a RandomSource draws a lottery by tickets (ReducedLottery's rule).
   */
  readonly fallback: "stride" | RandomSource;
  /** Starvation guard; see HintedStrideOptions.agingMs. */
  readonly aging: { readonly agingMs: number; readonly clock: Pick<Clock, "now"> } | undefined;
}

const NONE: ReadonlySet<Lane> = new Set();
const REBASE_AT = 2 ** 40;

export function createStrideSelector(options: StrideOptions): Selector {
  const passes = new Map<string, number>();
  // When each lane last had a turn (or was seen empty, with nothing waiting): aging only.
  const lastTurnAt = new Map<string, number>();
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
  const take = (lane: Lane, now: number | undefined): Lane => {
    const pass = passOf(lane);
    globalPass = Math.max(globalPass, pass);
    passes.set(lane.name, pass + strideOf(lane));
    if (globalPass > REBASE_AT) {
      // Keep passes small so float steps stay exact over months of uptime; only
      // differences between passes matter.
      for (const [name, p] of passes) passes.set(name, p - globalPass);
      globalPass = 0;
    }
    if (now !== undefined) lastTurnAt.set(lane.name, now);
    return lane;
  };
  /**
   * The lane past its aging limit with the earliest deadline (last turn + limit), if
   * any: earliest-deadline-first among the overdue lanes.
   */
  const overdue = (context: SelectionContext, now: number, agingMs: number): Lane | undefined => {
    let top = 0;
    for (const lane of context.lanes) top = Math.max(top, lane.priority);
    let earliest: Lane | undefined;
    let earliestDeadline = now;
    for (const lane of context.lanes) {
      const last = lastTurnAt.get(lane.name);
      if (last === undefined || context.readyHint(lane) === 0) {
        // Nothing known to be waiting there: its clock starts now.
        lastTurnAt.set(lane.name, now);
        continue;
      }
      // A lane with a tenth of the top priority may wait ten times as long.
      const deadline = last + (agingMs * top) / lane.priority;
      if (deadline < earliestDeadline) {
        earliest = lane;
        earliestDeadline = deadline;
      }
    }
    return earliest;
  };

  return {
    name: options.name,
    async select(context: SelectionContext): Promise<Lane> {
      const lanes = context.lanes;
      const now = options.aging?.clock.now();
      if (options.aging !== undefined && now !== undefined) {
        const lane = overdue(context, now, options.aging.agingMs);
        if (lane !== undefined) return take(lane, now);
      }
      const empty = new Set<Lane>();
      for (;;) {
        const lane = lowestPass(lanes, empty);
        if (lane === undefined) break;
        let ready = context.readyHint(lane);
        if (ready === undefined && options.probeUnknown) ready = await context.probe(lane);
        if (ready === 0) {
          passes.set(lane.name, Math.max(passOf(lane), globalPass));
          empty.add(lane);
          continue;
        }
        return take(lane, now);
      }
      // Every lane is known empty: the worker will long-poll the lane returned.
      if (options.fallback === "stride") {
        const lane = lowestPass(lanes, NONE)!;
        passes.set(lane.name, passOf(lane) + strideOf(lane));
        return lane;
      }
      return drawByTickets(lanes, options.fallback);
    },
  };
}
