/** The lane every process of rate-limit-race.test.ts serves: 5 starts per 500 ms. */
export const RACE_LANE = {
  name: "limited",
  leaseMs: 60_000,
  longPollMs: 5_000,
  rateLimit: { max: 5, durationMs: 500 },
} as const;
