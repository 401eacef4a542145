import { z } from "zod";
import { randomSource } from "../options.ts";
import type { Lane, RandomSource } from "./selector.ts";

/**
 * Draw one lane with probability proportional to its tickets (`priority`).
 * `lanes` must not be empty. One call to `random`.
 */
export function drawByTickets<T extends Lane>(lanes: ReadonlyArray<T>, random: RandomSource): T {
  let total = 0;
  for (const lane of lanes) total += lane.priority;
  let r = random() * total;
  for (const lane of lanes) {
    r -= lane.priority;
    if (r < 0) return lane;
  }
  // Only reachable through floating-point rounding when random() is just below 1.
  return lanes[lanes.length - 1]!;
}

/** The lane with the most tickets; the first in configuration order on a tie. */
export function highestPriority<T extends Lane>(lanes: ReadonlyArray<T>): T {
  let best = lanes[0]!;
  for (const lane of lanes) if (lane.priority > best.priority) best = lane;
  return best;
}

/** Options of the selectors that only draw lots. */
export const lotteryOptionsSchema = z.object({ random: randomSource.optional() }).strict();
