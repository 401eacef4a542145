export {
  type CreateSelectorOptions,
  createSelector,
  isSelectorName,
  SELECTOR_NAMES,
  type SelectorName,
} from "./create-selector.ts";
export { drawByTickets, highestPriority } from "./draw.ts";
export { createHintedStride, type HintedStrideOptions } from "./hinted-stride.ts";
export { createLottery, type LotteryOptions } from "./lottery.ts";
export { createReducedLottery, type ReducedLotteryOptions } from "./reduced-lottery.ts";
export { createRoundRobin } from "./round-robin.ts";
export {
  createSeededRandom,
  type Lane,
  type RandomSource,
  type SelectionContext,
  type Selector,
} from "./selector.ts";
export { createStrictPriority } from "./strict-priority.ts";
export { createTrickleStride, type TrickleStrideOptions } from "./trickle-stride.ts";
export { createWeightedFair } from "./weighted-fair.ts";
