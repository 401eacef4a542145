import { parseOptions } from "../options.ts";
import { drawByTickets, lotteryOptionsSchema } from "./draw.ts";
import type { Lane, RandomSource, SelectionContext, Selector } from "./selector.ts";

export interface LotteryOptions {
  /** Source of randomness in [0, 1). Default `Math.random`; inject a seeded one to replay. */
  random?: RandomSource;
}

/**
 * Plain lottery: every selection draws a lane by tickets (`priority`), whatever is known
 * about it. Never probes; a worker may land on an empty lane (and, when its hint says
 * empty, long-poll it while other lanes have jobs). Kept as the baseline ReducedLottery
 * improves on.
 */
export function createLottery(options: LotteryOptions = {}): Selector {
  const random = parseOptions(lotteryOptionsSchema, options, "").random ?? Math.random;
  return {
    name: "lottery",
    select(context: SelectionContext): Promise<Lane> {
      return Promise.resolve(drawByTickets(context.lanes, random));
    },
  };
}
