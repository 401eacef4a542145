/** The simulator's inputs: lanes, arrival processes, job durations, workers, backend. */

/** How jobs arrive in one lane. Rates are jobs per second of virtual time. */
export type ArrivalSpec =
  /** A Poisson process: exponential gaps at a constant rate. */
  | { kind: "poisson"; ratePerSec: number }
  /**
   * A Markov-modulated Poisson process: calm phases at `baseRatePerSec` and bursts at
   * `burstRatePerSec`, each phase lasting an exponential time (means `gapMs`, `burstMs`).
   */
  | {
      kind: "bursty";
      baseRatePerSec: number;
      burstRatePerSec: number;
      burstMs: number;
      gapMs: number;
    }
  /** A day compressed into `periodMs`: rate = mean · (1 + amplitude · sin(2πt / period)). */
  | { kind: "diurnal"; meanRatePerSec: number; amplitude: number; periodMs: number }
  /** Piecewise constant: each segment's rate holds until its `untilMs` (from the start). */
  | { kind: "piecewise"; segments: ReadonlyArray<{ untilMs: number; ratePerSec: number }> };

/** How long a job runs. */
export type DurationSpec =
  | { kind: "fixed"; ms: number }
  | { kind: "exponential"; meanMs: number }
  /** Log-normal with the given mean and coefficient of variation (stddev / mean). */
  | { kind: "lognormal"; meanMs: number; cv: number };

/** One lane: the lane config fields selection depends on, and its traffic. */
export interface LaneSpec {
  name: string;
  /** Tickets, 1..1000. */
  priority: number;
  batchSize: number;
  longPollMs: number;
  numIterations: number;
  arrivals: ArrivalSpec;
  duration: DurationSpec;
}

/**
 * What a reserve tells the worker about the lane. "sqs": nothing (ReceiveMessage returns
 * no count), so the hint is 0 after a short batch and unknown after a full one.
 * "exact": the ready count left (the memory and Redis adapters).
 */
export type BackendKind = "sqs" | "exact";

export interface WorkloadSpec {
  name: string;
  description: string;
  lanes: ReadonlyArray<LaneSpec>;
  workers: number;
  /** Jobs one worker runs at once. */
  concurrency: number;
}

export interface SimulationOptions {
  /** Virtual time simulated, ms. Arrivals stop at the end; nothing drains after it. */
  durationMs: number;
  seed: number;
  backend: BackendKind;
  /** Round trip of one backend request (receive or probe), ms. */
  requestMs: number;
  /** How long a ready count learned from a reserve or probe is trusted, ms (worker default). */
  hintTtlMs: number;
  /**
   * End a stay as soon as a reserve comes back short (or, with an exact backend, says
   * nothing is left), as tasklane's worker does. `false` models the older loop that
   * reserved once more and left on the empty batch. Default true.
   */
  leaveOnShortBatch?: boolean;
  /**
   * Jobs a worker may reserve beyond its concurrency (the worker's `prefetch`): they wait
   * in the worker, holding their lease, until a slot frees. Default as the worker's:
   * `max(B, 2B − concurrency)`, B the largest batch size; 0 models a worker that
   * reserves only for free slots.
   */
  prefetch?: number;
  /** Sample lane depths and busy slots this often into `RunResult.timeline`. Default: no timeline. */
  timelineMs?: number;
}
