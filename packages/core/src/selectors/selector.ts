/**
 * Lane selection: which lane a worker reserves from next.
 *
 * A selector sees the lanes with their priorities (lottery tickets, 1..1000) and what the
 * worker already knows of each lane's ready count (from recent reserves, which return it
 * for free on most backends). It may `probe` a lane, which costs one backend request (an
 * SQS GetQueueAttributes, a Redis ZCOUNT), so a good selector probes only lanes it knows
 * nothing about. When every lane is empty it still returns one: the worker long-polls it.
 */

/** A lane as selectors see it. */
export interface Lane {
  readonly name: string;
  /** Tickets / weight, 1..1000. Higher means selected more often. */
  readonly priority: number;
}

export interface SelectionContext {
  /** The lanes, in configuration order. Never empty. */
  readonly lanes: ReadonlyArray<Lane>;
  /**
   * The ready count the worker learned recently without asking (fresh enough to trust),
   * or undefined when it knows nothing. 0 means "known empty".
   */
  readyHint(lane: Lane): number | undefined;
  /** Ask the backend for the lane's ready count (one request). Updates the hint. */
  probe(lane: Lane): Promise<number>;
  /**
   * Cap the turn this selection starts at `maxJobs` jobs in all (at least 1), taken in a
   * single reserve: the worker reserves `min(free slots, batch size, maxJobs)` once and
   * then selects again, instead of staying for up to `numIterations` reserves. A capped
   * turn never long-polls, except that tasklane's worker serves a second capped turn in a
   * row as a normal one when the first found nothing and every lane is known empty (so a
   * selector cannot make it spin). Call it before returning the lane; it applies to that
   * one turn only. Optional: undefined where the worker cannot cap a turn, and a
   * selector must then do without.
   */
  limitTurn?(maxJobs: number): void;
}

export interface Selector {
  /** Stable name, e.g. "reduced-lottery". */
  readonly name: string;
  select(context: SelectionContext): Promise<Lane>;
}

/** Source of randomness in [0, 1). Inject a seeded one in tests and simulations. */
export type RandomSource = () => number;

/**
 * A small seeded PRNG (mulberry32): deterministic, fast, good enough for lotteries and
 * jitter. Not for cryptography.
 */
export function createSeededRandom(seed: number): RandomSource {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
