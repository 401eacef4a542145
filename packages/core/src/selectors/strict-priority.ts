import { highestPriority } from "./draw.ts";
import type { Lane, SelectionContext, Selector } from "./selector.ts";

/**
 * Strict priority (Kale's HighestPriorityFirst): the highest-priority lane that has jobs.
 * Lanes are tried from the highest priority down (configuration order on a tie); a lane
 * known to hold jobs wins at once, a lane known empty is skipped without a request, and
 * only unknown lanes are probed. All empty: the highest-priority lane, for the long poll.
 *
 * Lower lanes run only while every higher lane is empty, so they can starve under load:
 * use it when that is what you want.
 */
export function createStrictPriority(): Selector {
  let orderFor: ReadonlyArray<Lane> | undefined;
  let order: Lane[] = [];
  return {
    name: "strict-priority",
    async select(context: SelectionContext): Promise<Lane> {
      if (orderFor !== context.lanes) {
        // A stable sort keeps configuration order among equal priorities.
        order = context.lanes.slice().sort((a, b) => b.priority - a.priority);
        orderFor = context.lanes;
      }
      for (const lane of order) {
        const ready = context.readyHint(lane) ?? (await context.probe(lane));
        if (ready > 0) return lane;
      }
      return highestPriority(context.lanes);
    },
  };
}
