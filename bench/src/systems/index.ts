/**
 * Every system under test. Adding one is one file in this folder exporting
 * `system: BenchSystem`, plus one entry here. Modules load lazily: a child imports only
 * the system it measures.
 */
import type { Backend, SystemEntry } from "../types.ts";

export const SYSTEMS: SystemEntry[] = [
  {
    name: "tasklane-memory",
    backend: "memory",
    packageName: "@tasklane/adapter-memory",
    priorities: true,
    description: "tasklane with the memory adapter",
    load: async () => (await import("./tasklane-memory.ts")).system,
  },
  {
    name: "tasklane-memory-ops",
    backend: "memory",
    packageName: "@tasklane/adapter-memory",
    priorities: true,
    description:
      "tasklane-memory with two tags, an expiry, a result and one progress report per job",
    load: async () => (await import("./tasklane-memory-ops.ts")).system,
  },
  {
    name: "p-queue",
    backend: "memory",
    packageName: "p-queue",
    priorities: true,
    description: "bare in-process promise queue (the ceiling for the memory adapter)",
    load: async () => (await import("./p-queue.ts")).system,
  },
  {
    name: "tasklane-redis",
    backend: "redis",
    packageName: "@tasklane/adapter-redis",
    priorities: true,
    description: "tasklane with the Redis adapter",
    load: async () => (await import("./tasklane-redis.ts")).system,
  },
  {
    name: "tasklane-redis-ops",
    backend: "redis",
    packageName: "@tasklane/adapter-redis",
    priorities: true,
    description:
      "tasklane-redis with two tags, an expiry, a result and one progress report per job",
    load: async () => (await import("./tasklane-redis-ops.ts")).system,
  },
  {
    name: "tasklane-redis-otel",
    backend: "redis",
    packageName: "@tasklane/opentelemetry",
    priorities: true,
    scenarios: ["process-c100"],
    description:
      "tasklane-redis with @tasklane/opentelemetry on: the SDK's tracer and meter, no exporter",
    load: async () => (await import("./tasklane-redis-otel.ts")).system,
  },
  {
    name: "tasklane-redis-metrics",
    backend: "redis",
    packageName: "@tasklane/opentelemetry",
    priorities: true,
    scenarios: ["process-c100"],
    description: "tasklane-redis-otel with traces off (metrics only)",
    load: async () => (await import("./tasklane-redis-otel.ts")).metricsOnly,
  },
  {
    name: "bullmq",
    backend: "redis",
    packageName: "bullmq",
    priorities: true,
    description: "BullMQ, jobs removed on completion",
    load: async () => (await import("./bullmq.ts")).system,
  },
  {
    name: "bee-queue",
    backend: "redis",
    packageName: "bee-queue",
    priorities: false,
    description: "Bee-Queue, events off, jobs removed on success",
    load: async () => (await import("./bee-queue.ts")).system,
  },
  {
    name: "raw-ioredis",
    backend: "redis",
    packageName: "ioredis",
    priorities: false,
    description: "LPUSH / auto-pipelined RPOP loops, BRPOP when idle; no ack (physical ceiling)",
    load: async () => (await import("./raw-ioredis.ts")).system,
  },
  {
    name: "redis-put-floor",
    backend: "redis",
    packageName: "ioredis",
    priorities: false,
    scenarios: ["publish-single", "publish-bulk"],
    description:
      "one Lua call per chunk: HMGET the ids, HSET the records, RPUSH the ids (publish floor)",
    load: async () => (await import("./redis-put-floor.ts")).system,
  },
  {
    name: "tasklane-sqs",
    backend: "sqs",
    packageName: "@tasklane/adapter-sqs",
    priorities: true,
    description: "tasklane with the SQS adapter (priority bands in the priority scenario)",
    load: async () => (await import("./tasklane-sqs.ts")).system,
  },
  {
    name: "sqs-consumer",
    backend: "sqs",
    packageName: "sqs-consumer",
    priorities: false,
    description: "sqs-consumer, ceil(c/10) consumers of batchSize min(c,10); SDK producer",
    load: async () => (await import("./sqs-consumer.ts")).system,
  },
  {
    name: "raw-sqs",
    backend: "sqs",
    packageName: "@aws-sdk/client-sqs",
    priorities: false,
    description: "bare SDK loop: receive 10, DeleteMessageBatch, ceil(c/10) pollers (ceiling)",
    load: async () => (await import("./raw-sqs.ts")).system,
  },
];

/** The system each backend's ratios are computed against. */
export const BASELINES: Record<Backend, string> = {
  memory: "p-queue",
  redis: "bullmq",
  sqs: "sqs-consumer",
};

export function findSystem(name: string): SystemEntry {
  const entry = SYSTEMS.find((system) => system.name === name);
  if (!entry)
    throw new Error(`unknown system "${name}" (known: ${SYSTEMS.map((s) => s.name).join(", ")})`);
  return entry;
}
