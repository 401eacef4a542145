/**
 * Fair groups with several clients: four tasklane clients, each with its own adapter (its
 * own connections) and a worker of concurrency 4, share one lane with groups of
 * concurrency 2. A big group's 40 jobs are published, then a small group's 4: no moment
 * has more than 2 jobs of one group running across all the workers (the limit is kept by
 * the reserve script, atomically, whichever client reserves), each job runs once, and the
 * small group is served in the first rounds instead of behind the big group's backlog. On
 * redis-server (and valkey-server in the valkey project), with the function library and
 * with EVAL, and on a three-node Cluster.
 */
import { defineTask, type Tasklane } from "@tasklane/core";
import { expect } from "vitest";
import { z } from "zod";
import type { RedisAdapterOptions } from "../src/index.ts";
import { waitFor } from "./helpers.ts";
import { raceOnServerAndCluster, withClients } from "./races.ts";

const CLIENTS = 4;
const BIG = 40;
const SMALL = 4;
const LIMIT = 2;
const LANE = {
  name: "fair",
  groups: { concurrency: LIMIT },
  leaseMs: 60_000,
  longPollMs: 2_000,
} as const;

async function race(options: RedisAdapterOptions) {
  // Handlers of every client run in this process: a job's run counts in `running` from its
  // start to its end, and its group's next job can only be reserved after its ack, which
  // follows the end. So `running` exceeds the limit only if the server handed out more.
  const running = new Map<string, number>();
  const most = new Map<string, number>();
  const started: string[] = [];
  const ran: string[] = [];
  const task = defineTask({
    name: "work",
    lane: LANE.name,
    schema: z.object({ group: z.string(), n: z.number() }),
    run: async ({ group, n }) => {
      const now = (running.get(group) ?? 0) + 1;
      running.set(group, now);
      most.set(group, Math.max(most.get(group) ?? 0, now));
      started.push(`${group}-${n}`);
      // the work: long enough for the clients' reserves to overlap
      await new Promise((r) => setTimeout(r, 15));
      running.set(group, (running.get(group) ?? 0) - 1);
      ran.push(`${group}-${n}`);
    },
  });
  await withClients(CLIENTS, options, LANE, task, async (clients) => {
    const publisher = clients[0] as Tasklane;
    await publisher.publishMany(
      task,
      Array.from({ length: BIG }, (_, n) => ({ payload: { group: "big", n }, group: "big" })),
    );
    await publisher.publishMany(
      task,
      Array.from({ length: SMALL }, (_, n) => ({ payload: { group: "small", n }, group: "small" })),
    );
    const workers = clients.map((tl) => tl.worker({ concurrency: 4 }));
    await Promise.all(workers.map((w) => w.start()));
    await waitFor(() => ran.length === BIG + SMALL, "every job to run", 60_000);
    await Promise.all(workers.map((w) => w.stop()));

    expect([...ran].sort()).toEqual(
      [
        ...Array.from({ length: BIG }, (_, n) => `big-${n}`),
        ...Array.from({ length: SMALL }, (_, n) => `small-${n}`),
      ].sort(),
    );
    // The limit held across the clients, and was reached (the test can see a breach).
    expect(most.get("big")).toBe(LIMIT);
    expect(most.get("small")).toBeLessThanOrEqual(LIMIT);
    // One job per group per turn: the small group's 4 start among the first 8 or so, not
    // after the big group's 40. Each group's jobs start in their order.
    const lastSmall = Math.max(...started.map((s, i) => (s.startsWith("small") ? i : -1)));
    expect(lastSmall).toBeLessThan(2 * SMALL + 2 * LIMIT);
    const order = (group: string) => started.filter((s) => s.startsWith(`${group}-`));
    expect(order("small")).toEqual(Array.from({ length: SMALL }, (_, n) => `small-${n}`));
  });
}

raceOnServerAndCluster(
  "fair groups: four clients on one lane",
  "no group runs more than its concurrency at once; a small group is served early",
  120_000,
  (options) => race(options),
);
