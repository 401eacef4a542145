import type { RandomSource } from "@tasklane/core";
import type { ArrivalSpec } from "./model.ts";
import { exponential } from "./random.ts";

/** Yields arrival times (ms from the start), increasing, until none is left before `endMs`. */
export type ArrivalProcess = () => number | undefined;

export function createArrivals(
  spec: ArrivalSpec,
  random: RandomSource,
  endMs: number,
): ArrivalProcess {
  switch (spec.kind) {
    case "poisson": {
      let t = 0;
      return () => {
        if (spec.ratePerSec <= 0) return undefined;
        t += exponential(random, 1000 / spec.ratePerSec);
        return t < endMs ? t : undefined;
      };
    }
    case "bursty": {
      // Both phases are memoryless, so at a phase end we simply restart the draw.
      let t = 0;
      let bursting = false;
      let phaseEnd = exponential(random, spec.gapMs);
      return () => {
        for (;;) {
          const rate = bursting ? spec.burstRatePerSec : spec.baseRatePerSec;
          const next = rate > 0 ? t + exponential(random, 1000 / rate) : Number.POSITIVE_INFINITY;
          if (next < phaseEnd) {
            t = next;
            return t < endMs ? t : undefined;
          }
          t = phaseEnd;
          if (t >= endMs) return undefined;
          bursting = !bursting;
          phaseEnd = t + exponential(random, bursting ? spec.burstMs : spec.gapMs);
        }
      };
    }
    case "diurnal": {
      // Thinning (Lewis & Shedler): candidates at the peak rate, kept with rate(t)/peak.
      const peak = spec.meanRatePerSec * (1 + spec.amplitude);
      let t = 0;
      return () => {
        if (peak <= 0) return undefined;
        for (;;) {
          t += exponential(random, 1000 / peak);
          if (t >= endMs) return undefined;
          const rate =
            spec.meanRatePerSec *
            (1 + spec.amplitude * Math.sin((2 * Math.PI * t) / spec.periodMs));
          if (random() * peak < rate) return t;
        }
      };
    }
    case "piecewise": {
      let t = 0;
      let index = 0;
      return () => {
        for (;;) {
          const segment = spec.segments[index];
          if (segment === undefined) return undefined;
          const limit = Math.min(segment.untilMs, endMs);
          const next =
            segment.ratePerSec > 0
              ? t + exponential(random, 1000 / segment.ratePerSec)
              : Number.POSITIVE_INFINITY;
          if (next < limit) {
            t = next;
            return t;
          }
          t = limit;
          if (t >= endMs) return undefined;
          index++;
        }
      };
    }
  }
}
