import { parseOptions } from "../options.ts";
import { drawByTickets, lotteryOptionsSchema } from "./draw.ts";
import type { Lane, RandomSource, SelectionContext, Selector } from "./selector.ts";

export interface ReducedLotteryOptions {
  /** Source of randomness in [0, 1). Default `Math.random`; inject a seeded one to replay. */
  random?: RandomSource;
}

/**
 * Kale's ReducedLottery. Draw a lane by tickets from a pool that starts with every lane;
 * return it if it has jobs, otherwise drop it from the pool and draw again. When the pool
 * runs dry every lane is empty, and a lottery winner over all lanes is returned for the
 * worker to long-poll.
 *
 * Unlike Kale, emptiness comes from the worker's hints first: a lane known to hold jobs is
 * returned at once, a lane known empty is dropped without a request, and only a lane the
 * worker knows nothing about is probed (one backend request). So a busy worker selects
 * without touching the backend at all.
 */
export function createReducedLottery(options: ReducedLotteryOptions = {}): Selector {
  const random = parseOptions(lotteryOptionsSchema, options, "").random ?? Math.random;
  return {
    name: "reduced-lottery",
    async select(context: SelectionContext): Promise<Lane> {
      const pool = context.lanes.slice();
      while (pool.length > 0) {
        const lane = drawByTickets(pool, random);
        const ready = context.readyHint(lane) ?? (await context.probe(lane));
        if (ready > 0) return lane;
        pool.splice(pool.indexOf(lane), 1);
      }
      return drawByTickets(context.lanes, random);
    },
  };
}
