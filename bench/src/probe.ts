/**
 * What the backend did during a phase of a case: requests (Redis commands counted by the
 * server, commands inside scripts included; SQS requests counted by SDK middleware),
 * client round trips, and backend memory.
 */
import type { SQSClient } from "@aws-sdk/client-sqs";
import type { Backend, CaseSpec } from "./types.ts";

export interface Mark {
  byCommand: Record<string, number>;
  roundTrips: number;
  /** Backend server CPU seconds so far (Redis INFO cpu); NaN where unknown. */
  cpuSeconds: number;
}

export interface Cost {
  requests: number;
  roundTrips: number;
  byCommand: Record<string, number>;
  /** Backend server CPU time spent, ms; NaN where unknown. */
  backendCpuMs: number;
}

export interface Probe {
  mark(): Promise<Mark>;
  cost(from: Mark, to: Mark): Cost;
  /** Redis used_memory, or this process's heap after a full GC for memory systems. */
  memoryBytes(): Promise<number>;
  /** A counting SQS client (SQS probes only). */
  createSqsClient?: () => SQSClient;
  close(): void;
}

/** `after - before` per command, zero entries dropped. */
function diffCounts(
  before: Record<string, number>,
  after: Record<string, number>,
): Record<string, number> {
  const delta: Record<string, number> = {};
  for (const [name, calls] of Object.entries(after)) {
    const d = calls - (before[name] ?? 0);
    if (d !== 0) delta[name] = d;
  }
  return delta;
}

function sumCounts(counts: Record<string, number>): number {
  let total = 0;
  for (const n of Object.values(counts)) total += n;
  return total;
}

/**
 * Created before the system connects (the round-trip counter patches net.Socket). The
 * metric modules load only for their backend, so an in-process case does not carry
 * ioredis or the AWS SDK in its heap.
 */
export async function createProbe(backend: Backend, spec: CaseSpec): Promise<Probe> {
  if (backend === "redis" && spec.redis) {
    const { installRoundTripCounter } = await import("./metrics/round-trips.ts");
    const { connectRedisStats } = await import("./metrics/redis-stats.ts");
    const counter = installRoundTripCounter(spec.redis.port);
    const stats = await connectRedisStats(spec.redis.host, spec.redis.port);
    const socket = (stats.client as unknown as { stream?: import("node:net").Socket }).stream;
    if (socket) counter.exclude(socket);
    return {
      async mark() {
        const roundTrips = counter.count();
        const [byCommand, cpuSeconds] = await Promise.all([
          stats.commandCounts(),
          stats.cpuSeconds(),
        ]);
        return { byCommand, roundTrips, cpuSeconds };
      },
      cost(from, to) {
        const byCommand = diffCounts(from.byCommand, to.byCommand);
        return {
          requests: sumCounts(byCommand),
          roundTrips: to.roundTrips - from.roundTrips,
          byCommand,
          backendCpuMs: (to.cpuSeconds - from.cpuSeconds) * 1000,
        };
      },
      memoryBytes: () => stats.usedMemoryBytes(),
      close: () => stats.close(),
    };
  }
  if (backend === "sqs" && spec.sqs) {
    const { createCountingSqsClient, snapshotSqsRequests } = await import(
      "./metrics/sqs-counter.ts"
    );
    const { endpoint, region } = spec.sqs;
    return {
      async mark() {
        const byCommand = snapshotSqsRequests();
        return { byCommand, roundTrips: sumCounts(byCommand), cpuSeconds: Number.NaN };
      },
      cost(from, to) {
        const byCommand = diffCounts(from.byCommand, to.byCommand);
        const requests = sumCounts(byCommand);
        return { requests, roundTrips: requests, byCommand, backendCpuMs: Number.NaN };
      },
      memoryBytes: async () => Number.NaN,
      createSqsClient: () => createCountingSqsClient(endpoint, region),
      close: () => {},
    };
  }
  return {
    mark: async () => ({ byCommand: {}, roundTrips: Number.NaN, cpuSeconds: Number.NaN }),
    cost: () => ({
      requests: Number.NaN,
      roundTrips: Number.NaN,
      byCommand: {},
      backendCpuMs: Number.NaN,
    }),
    async memoryBytes() {
      const gc = (globalThis as { gc?: () => void }).gc;
      gc?.();
      gc?.();
      return process.memoryUsage().heapUsed;
    },
    close: () => {},
  };
}
