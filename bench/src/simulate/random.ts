import { createSeededRandom, type RandomSource } from "@tasklane/core";
import type { DurationSpec } from "./model.ts";

/** A seeded stream derived from a base seed and a label, so streams do not overlap. */
export function stream(seed: number, label: string): RandomSource {
  let h = 2166136261 ^ seed;
  for (let i = 0; i < label.length; i++) h = Math.imul(h ^ label.charCodeAt(i), 16777619);
  return createSeededRandom(h >>> 0);
}

/** Exponential variate with the given mean. */
export function exponential(random: RandomSource, mean: number): number {
  return -Math.log(1 - random()) * mean;
}

/** Standard normal variate (Box–Muller; one of the pair is dropped for simplicity). */
export function normal(random: RandomSource): number {
  const u = 1 - random();
  const v = random();
  return Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * v);
}

export function sampleDuration(spec: DurationSpec, random: RandomSource): number {
  switch (spec.kind) {
    case "fixed":
      return spec.ms;
    case "exponential":
      return exponential(random, spec.meanMs);
    case "lognormal": {
      const sigma2 = Math.log(1 + spec.cv * spec.cv);
      const mu = Math.log(spec.meanMs) - sigma2 / 2;
      return Math.exp(mu + Math.sqrt(sigma2) * normal(random));
    }
  }
}
