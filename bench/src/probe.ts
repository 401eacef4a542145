/**
 * What the backend did during a phase of a case: requests (Redis commands counted by the
 * server, commands inside scripts included; SQS requests counted by SDK middleware),
 * client round trips, and backend memory.
 */
import {
  connectRedisStats,
  diffCounts,
  type RedisStats,
  sumCounts,
} from "./metrics/redis-stats.ts";
import { installRoundTripCounter, type RoundTripCounter } from "./metrics/round-trips.ts";
import { snapshotSqsRequests } from "./metrics/sqs-counter.ts";
import type { Backend, CaseSpec } from "./types.ts";

export interface Mark {
  byCommand: Record<string, number>;
  roundTrips: number;
}

export interface Cost {
  requests: number;
  roundTrips: number;
  byCommand: Record<string, number>;
}

export interface Probe {
  mark(): Promise<Mark>;
  cost(from: Mark, to: Mark): Cost;
  /** Redis used_memory, or this process's heap after a full GC for memory systems. */
  memoryBytes(): Promise<number>;
  close(): void;
}

/** Created before the system connects (the round-trip counter patches net.Socket). */
export async function createProbe(backend: Backend, spec: CaseSpec): Promise<Probe> {
  if (backend === "redis" && spec.redis) {
    const counter: RoundTripCounter = installRoundTripCounter(spec.redis.port);
    const stats: RedisStats = await connectRedisStats(spec.redis.host, spec.redis.port);
    const socket = (stats.client as unknown as { stream?: import("node:net").Socket }).stream;
    if (socket) counter.exclude(socket);
    return {
      async mark() {
        return { byCommand: await stats.commandCounts(), roundTrips: counter.count() };
      },
      cost(from, to) {
        const byCommand = diffCounts(from.byCommand, to.byCommand);
        return {
          requests: sumCounts(byCommand),
          roundTrips: to.roundTrips - from.roundTrips,
          byCommand,
        };
      },
      memoryBytes: () => stats.usedMemoryBytes(),
      close: () => stats.close(),
    };
  }
  if (backend === "sqs") {
    const total = (counts: Record<string, number>) =>
      Object.values(counts).reduce((sum, n) => sum + n, 0);
    return {
      async mark() {
        const byCommand = snapshotSqsRequests();
        return { byCommand, roundTrips: total(byCommand) };
      },
      cost(from, to) {
        const byCommand = diffCounts(from.byCommand, to.byCommand);
        const requests = total(byCommand);
        return { requests, roundTrips: requests, byCommand };
      },
      memoryBytes: async () => Number.NaN,
      close: () => {},
    };
  }
  return {
    mark: async () => ({ byCommand: {}, roundTrips: Number.NaN }),
    cost: () => ({ requests: Number.NaN, roundTrips: Number.NaN, byCommand: {} }),
    async memoryBytes() {
      const gc = (globalThis as { gc?: () => void }).gc;
      gc?.();
      gc?.();
      return process.memoryUsage().heapUsed;
    },
    close: () => {},
  };
}
