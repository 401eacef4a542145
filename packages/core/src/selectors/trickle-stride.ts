import { z } from "zod";
import { type Clock, systemClock } from "../clock.ts";
import { ConfigError } from "../errors.ts";
import { count, nowSchema, parseOptions, randomSource } from "../options.ts";
import { createHintedStride } from "./hinted-stride.ts";
import type { Lane, RandomSource, SelectionContext, Selector } from "./selector.ts";

export interface TrickleStrideOptions {
  /**
   * Randomness for hinted-stride underneath (each lane's initial phase, the long-poll
   * lottery), in [0, 1). Default `Math.random`; inject a seeded source to replay.
   */
  random?: RandomSource;
  /**
   * How long a trickle lane may go without a turn from this worker before it gets a
   * trickle, ms; default 200. Counted from the worker's last turn on the lane, whether
   * the lane was then known empty or not: a lane drained a moment ago is "known empty"
   * for the worker's whole hint TTL (1 s), and in the simulator that stale zero, not a
   * full fleet, is what makes the low lane's longest waits on steady load.
   */
  trickleMs?: number;
  /**
   * Upper bound of the back-off, ms; default 1000 (the worker's hint TTL, after which
   * hinted-stride looks at the lane anyway). A trickle that finds the lane empty doubles
   * that lane's interval up to this; one that finds a job halves it back towards
   * `trickleMs`. Four workers each trickling every 200 ms check a lane 20 times a second,
   * more often than a 16 jobs/s lane needs: the back-off is what keeps the extra empty
   * receives small.
   */
  maxTrickleMs?: number;
  /** Jobs a trickle reserves at most, in one reserve that does not wait; default 1. */
  trickleJobs?: number;
  /**
   * Which lanes trickle: those with `priority ≤ top priority × trickleShare`; default 0.1
   * (with Kale's 100/40/5 only `low`). The top lane never trickles: it gets the long
   * polls. Middle lanes are left out because a trickle is a slot taken from the top lane
   * while the fleet is full, and a middle lane already gets turns often enough.
   */
  trickleShare?: number;
  /** Time source. Default the system clock. */
  clock?: Pick<Clock, "now">;
}

const positive = z.number().positive("must be a positive number");
export const trickleStrideOptionsSchema = z
  .object({
    random: randomSource.optional(),
    trickleMs: positive.default(200),
    maxTrickleMs: positive.default(1_000),
    trickleJobs: count(1).default(1),
    trickleShare: positive.max(1, "must be at most 1").default(0.1),
    clock: nowSchema.optional(),
  })
  .strict();

/**
 * hinted-stride with a trickle starvation guard. When a low lane has had no turn from
 * this worker for `trickleMs`, its next turn is a trickle: one reserve of at most
 * `trickleJobs` jobs that does not wait, after which the worker selects again. So the
 * lane's oldest job is looked at every few hundred ms for about one request, instead of
 * a whole stay (up to `numIterations` batches of 500 ms jobs, as the aging guard gives),
 * which is what costs the high lane when the fleet is full.
 *
 * A trickle needs the worker to cap the turn (`SelectionContext.limitTurn`). A worker
 * without it gets plain hinted-stride: a selector cannot make a stay shorter by itself.
 *
 * The trickle reads its own outcome from the hint the worker leaves: with a one-job cap,
 * a hint of 0 afterwards means the reserve came back empty (on an exact backend it may
 * also mean it took the last job; the back-off then errs on the side of fewer requests).
 */
export function createTrickleStride(input: TrickleStrideOptions = {}): Selector {
  const options = parseOptions(trickleStrideOptionsSchema, input, "");
  const { trickleMs, maxTrickleMs, trickleJobs, trickleShare } = options;
  if (maxTrickleMs < trickleMs) {
    throw new ConfigError("maxTrickleMs", maxTrickleMs, "must be at least trickleMs");
  }
  const clock = options.clock ?? systemClock;
  const stride = createHintedStride(options.random === undefined ? {} : { random: options.random });
  /** This worker's last turn on each lane (trickle or not). */
  const lastTurnAt = new Map<string, number>();
  /** Each trickle lane's current interval, between trickleMs and maxTrickleMs. */
  const interval = new Map<string, number>();
  /** The lane the previous selection trickled, to read its outcome now. */
  let trickled: Lane | undefined;

  const learn = (context: SelectionContext) => {
    if (trickled === undefined) return;
    const current = interval.get(trickled.name) ?? trickleMs;
    const empty = context.readyHint(trickled) === 0;
    interval.set(
      trickled.name,
      empty ? Math.min(current * 2, maxTrickleMs) : Math.max(current / 2, trickleMs),
    );
    trickled = undefined;
  };

  /** The trickle lane most overdue, if any (earliest deadline first). */
  const overdue = (context: SelectionContext, now: number): Lane | undefined => {
    let top = 0;
    for (const lane of context.lanes) top = Math.max(top, lane.priority);
    let earliest: Lane | undefined;
    let earliestDeadline = now;
    for (const lane of context.lanes) {
      if (lane.priority >= top || lane.priority > top * trickleShare) continue;
      const last = lastTurnAt.get(lane.name);
      if (last === undefined) {
        // First sight: its clock starts now rather than making it overdue at once.
        lastTurnAt.set(lane.name, now);
        continue;
      }
      const deadline = last + (interval.get(lane.name) ?? trickleMs);
      if (deadline < earliestDeadline) {
        earliest = lane;
        earliestDeadline = deadline;
      }
    }
    return earliest;
  };

  return {
    name: "trickle-stride",
    async select(context: SelectionContext): Promise<Lane> {
      learn(context);
      const now = clock.now();
      if (context.limitTurn !== undefined) {
        const lane = overdue(context, now);
        if (lane !== undefined) {
          context.limitTurn(trickleJobs);
          trickled = lane;
          lastTurnAt.set(lane.name, now);
          return lane;
        }
      }
      const lane = await stride.select(context);
      lastTurnAt.set(lane.name, now);
      return lane;
    },
  };
}
