import type { ReservedJob, ReserveResult } from "@tasklane/core/adapter";
import { describe, expect, it } from "vitest";
import { type Harness, need } from "./harness.ts";
import type { ConformanceOptions } from "./options.ts";
import { expectWindowFull, startOf } from "./rate-limit-tests.ts";

/**
 * A rate limit on a lane with fair groups (capabilities `rateLimit` and `groups`): the
 * waiting jobs sit in the groups, and a full window must still say when it opens and
 * wake a long poll then, as on a lane without groups.
 */
export function registerGroupedRateLimitTests(
  get: () => Harness,
  _options: ConformanceOptions,
): void {
  describe("rateLimit with fair groups", () => {
    it("a full window gives nextDueAt and a long poll is served when the window moves", async (ctx) => {
      const h = get();
      need(h.caps, ctx, "rateLimit", "groups");
      const durationMs = 4 * h.unit;
      const leaseMs = 50 * h.unit;
      const lane = await h.freshLane({ groups: {}, rateLimit: { max: 2, durationMs } });
      await lane.put([
        h.job({ id: "x1", group: "x" }),
        h.job({ id: "x2", group: "x" }),
        h.job({ id: "y1", group: "y" }),
        h.job({ id: "y2", group: "y" }),
      ]);
      const first = await lane.reserve({ limit: 20, leaseMs, waitMs: 0 });
      expect(first.jobs.map((j) => j.id)).toEqual(["x1", "y1"]);
      const firstStart = startOf(first.jobs[0] as ReservedJob, leaseMs);
      // When the window lets the next start happen, not the leases' end.
      expectWindowFull(first, h, durationMs);

      const { poll } = await h.pollUntilWaiting(lane, {
        limit: 20,
        leaseMs,
        waitMs: 10 * durationMs,
      });
      let second: ReserveResult | undefined;
      void poll.then((r) => {
        second = r;
      });
      await h.pass(durationMs);
      await h.waitFor(() => second, "the long poll to be served");
      expect(second?.jobs.map((j) => j.id)).toEqual(["x2", "y2"]);
      // Served as the window moved, not at the poll's own deadline.
      expect(startOf(second?.jobs[0] as ReservedJob, leaseMs)).toBeLessThan(
        firstStart + 3 * durationMs,
      );
    });
  });
}
