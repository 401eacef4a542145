/**
 * Each group's own rate limit with several clients: four tasklane clients, each with its
 * own adapter (its own connections) and a worker of concurrency 4, share one lane whose
 * groups may start 3 jobs per 400 ms each. A big group's 15 jobs and a small group's 6
 * are published at once: no window of 400 ms holds more than 3 starts of one group (the
 * starts as the server logged them, each job's "reserved" entry), each job runs once, and
 * the small group's first window is not spent behind the big group's. On redis-server (and
 * valkey-server in the valkey project), with the function library and with EVAL, and on a
 * three-node Cluster.
 */
import { mostStartsInAWindow } from "@tasklane/conformance";
import { defineTask, type Tasklane } from "@tasklane/core";
import { expect } from "vitest";
import { z } from "zod";
import type { RedisAdapterOptions } from "../src/index.ts";
import { waitFor } from "./helpers.ts";
import { raceOnServerAndCluster, withClients } from "./races.ts";

const CLIENTS = 4;
const MAX = 3;
const WINDOW_MS = 400;
const SIZES = { big: 15, small: 6 } as const;
const LANE = {
  name: "windows",
  groups: { rateLimit: { max: MAX, durationMs: WINDOW_MS } },
  leaseMs: 60_000,
  longPollMs: 2_000,
} as const;

async function race(options: RedisAdapterOptions) {
  const ran: string[] = [];
  const task = defineTask({
    name: "work",
    lane: LANE.name,
    schema: z.object({ group: z.string(), n: z.number() }),
    run: ({ group, n }) => {
      ran.push(`${group}-${n}`);
    },
  });
  await withClients(CLIENTS, options, LANE, task, async (clients) => {
    const publisher = clients[0] as Tasklane;
    const ids = new Map<string, string[]>();
    for (const [group, size] of Object.entries(SIZES)) {
      const published = await publisher.publishMany(
        task,
        Array.from({ length: size }, (_, n) => ({ payload: { group, n }, group })),
      );
      ids.set(
        group,
        published.map((p) => p.id),
      );
    }
    const workers = clients.map((tl) => tl.worker({ concurrency: 4 }));
    await Promise.all(workers.map((w) => w.start()));
    await waitFor(() => ran.length === SIZES.big + SIZES.small, "every job to run", 60_000);
    await Promise.all(workers.map((w) => w.stop()));

    expect(new Set(ran).size).toBe(ran.length);
    const lane = publisher.lane(LANE.name);
    const startsOf = async (group: string) => {
      const starts: number[] = [];
      for (const id of ids.get(group) ?? []) {
        const reserved = (await lane.get(id))?.history.filter((e) => e.event === "reserved");
        expect(reserved).toHaveLength(1);
        starts.push(reserved?.[0]?.at as number);
      }
      return starts.sort((a, b) => a - b);
    };
    const big = await startsOf("big");
    const small = await startsOf("small");
    // Each group's windows held across the clients, and were filled (a breach would show).
    expect(mostStartsInAWindow(big, WINDOW_MS)).toBe(MAX);
    expect(mostStartsInAWindow(small, WINDOW_MS)).toBe(MAX);
    // Five windows for the big group, two for the small one, counted apart: the small
    // group's first starts come with the big group's first, not after its backlog.
    expect((big.at(-1) as number) - (big[0] as number)).toBeGreaterThanOrEqual(4 * WINDOW_MS);
    expect((small[0] as number) - (big[0] as number)).toBeLessThan(WINDOW_MS);
  });
}

raceOnServerAndCluster(
  "each group's own rate limit: four clients on one lane",
  "no group starts more than max in any window; the groups' windows are apart",
  120_000,
  (options) => race(options),
);
