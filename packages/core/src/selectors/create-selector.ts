import { z } from "zod";
import type { Clock } from "../clock.ts";
import { ConfigError } from "../errors.ts";
import { nowSchema, parseOptions, randomSource } from "../options.ts";
import { createHintedStride } from "./hinted-stride.ts";
import { createLottery } from "./lottery.ts";
import { createReducedLottery } from "./reduced-lottery.ts";
import { createRoundRobin } from "./round-robin.ts";
import type { RandomSource, Selector } from "./selector.ts";
import { createStrictPriority } from "./strict-priority.ts";
import { createTrickleStride } from "./trickle-stride.ts";
import { createWeightedFair } from "./weighted-fair.ts";

/** The built-in selectors by name. */
export const SELECTOR_NAMES = [
  "reduced-lottery",
  "lottery",
  "strict-priority",
  "round-robin",
  "weighted-fair",
  "hinted-stride",
  "trickle-stride",
] as const;

export type SelectorName = (typeof SELECTOR_NAMES)[number];

export interface CreateSelectorOptions {
  /**
   * Randomness for the selectors that use it (lotteries, hinted-stride's phase).
   * Default `Math.random`.
   */
  random?: RandomSource;
  /**
   * Time source of the selectors that look at time (trickle-stride's trickle interval).
   * Default the system clock; the client passes its own, so a manual clock drives them too.
   */
  clock?: Pick<Clock, "now">;
}

export const createSelectorOptionsSchema = z
  .object({ random: randomSource.optional(), clock: nowSchema.optional() })
  .strict();

/**
 * A new built-in selector by name. Selectors keep per-worker state (turns, passes): give
 * each worker its own. Throws ConfigError (field "selector") for an unknown name.
 */
export function createSelector(
  name: SelectorName | (string & {}),
  input: CreateSelectorOptions = {},
): Selector {
  const options = parseOptions(createSelectorOptionsSchema, input, "");
  const random = options.random === undefined ? {} : { random: options.random };
  switch (name) {
    case "reduced-lottery":
      return createReducedLottery(random);
    case "lottery":
      return createLottery(random);
    case "strict-priority":
      return createStrictPriority();
    case "round-robin":
      return createRoundRobin();
    case "weighted-fair":
      return createWeightedFair();
    case "hinted-stride":
      return createHintedStride(random);
    case "trickle-stride":
      return createTrickleStride({
        ...random,
        ...(options.clock === undefined ? {} : { clock: options.clock }),
      });
    default:
      throw new ConfigError(
        "selector",
        name,
        `unknown selector; expected one of ${SELECTOR_NAMES.join(", ")}`,
      );
  }
}

/** Whether `name` names a built-in selector. */
export function isSelectorName(name: string): name is SelectorName {
  return (SELECTOR_NAMES as ReadonlyArray<string>).includes(name);
}
