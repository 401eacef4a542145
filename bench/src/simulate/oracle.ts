/**
 * The oracle: a selector only the simulator can run, because it reads every lane
 * (`Peek`) instead of hints. It bounds what any selector could reach on a workload: if
 * even the oracle cannot meet a goal, a real selector, which pays a request to learn what
 * the oracle reads for free, will not either.
 *
 * Rule: a lane is eligible when it holds a whole batch, or when its oldest job has waited
 * at least the lane's `tauMs` (so small batches are taken only once they are old: that is
 * what keeps the requests per job down). Among eligible lanes it takes the one with the
 * largest `oldest wait × priority^beta` (an aged-priority rule: beta 1 is plain weighted
 * age, smaller values let a low lane's old job overtake sooner), for one reserve
 * (`limitTurn(batchSize)`), then decides again. With no eligible lane it behaves as
 * hinted-stride, whose long-poll lottery then picks where to wait.
 */
import {
  createHintedStride,
  type Lane,
  type RandomSource,
  type SelectionContext,
  type Selector,
} from "@tasklane/core";
import type { Peek } from "./engine.ts";

export interface OracleOptions {
  /** Per lane in configuration order (the last value repeats), ms. */
  tauMs: ReadonlyArray<number>;
  /** Exponent of priority in the score. */
  beta: number;
}

export function createOracle(peek: Peek, random: RandomSource, options: OracleOptions): Selector {
  const fallback = createHintedStride({ random });
  const tauOf = (i: number) => options.tauMs[Math.min(i, options.tauMs.length - 1)] ?? 0;
  return {
    name: "oracle",
    async select(context: SelectionContext): Promise<Lane> {
      const seen = peek();
      let best: Lane | undefined;
      let bestScore = Number.NEGATIVE_INFINITY;
      let bestBatch = 1;
      context.lanes.forEach((lane, i) => {
        const peeked = seen[i];
        if (peeked === undefined || peeked.ready === 0) return;
        const batch = peeked.batchSize;
        if (peeked.ready < batch && peeked.oldestWaitMs < tauOf(i)) return;
        const score = peeked.oldestWaitMs * lane.priority ** options.beta;
        if (score > bestScore) {
          best = lane;
          bestScore = score;
          bestBatch = batch;
        }
      });
      if (best === undefined) return fallback.select(context);
      context.limitTurn?.(bestBatch);
      return best;
    },
  };
}

/** `oracle`, `oracle+tau=MS[/MS…]`, `oracle+tau=…+beta=B`; undefined when malformed. */
export function parseOracle(spec: string): OracleOptions | undefined {
  const match = /^oracle((?:\+(?:tau=[\d.]+(?:\/[\d.]+)*|beta=[\d.]+))*)$/.exec(spec);
  if (match === null) return undefined;
  let tauMs: number[] = [50];
  let beta = 0.3;
  for (const part of (match[1] ?? "").split("+").filter(Boolean)) {
    const [key, value = ""] = part.split("=");
    if (key === "tau") tauMs = value.split("/").map(Number);
    else beta = Number(value);
  }
  if (!tauMs.every((t) => Number.isFinite(t) && t >= 0) || !(Number.isFinite(beta) && beta >= 0)) {
    return undefined;
  }
  return { tauMs, beta };
}
