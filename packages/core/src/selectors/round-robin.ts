import type { Lane, SelectionContext, Selector } from "./selector.ts";

/**
 * Round robin: the lanes in configuration order, one after the other, ignoring priority.
 * A lane known to be empty is skipped without a request. A lane the worker knows nothing
 * about is returned without probing: the worker's reserve on it answers the same question
 * for the same one request, and takes jobs when there are some. When every lane is known
 * empty, the next lane in the cycle is returned for the long poll.
 */
export function createRoundRobin(): Selector {
  let next = 0;
  return {
    name: "round-robin",
    select(context: SelectionContext): Promise<Lane> {
      const lanes = context.lanes;
      const start = next % lanes.length;
      for (let i = 0; i < lanes.length; i++) {
        const index = (start + i) % lanes.length;
        const lane = lanes[index]!;
        if (context.readyHint(lane) !== 0) {
          next = index + 1;
          return Promise.resolve(lane);
        }
      }
      next = start + 1;
      return Promise.resolve(lanes[start]!);
    },
  };
}
