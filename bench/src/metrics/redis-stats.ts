import { Redis } from "ioredis";

/** Per-command call counts from INFO commandstats (commands run inside scripts included). */
export type CommandCounts = Record<string, number>;

/**
 * A separate connection the harness uses to read the server's counters. Its own INFO
 * calls are left out of the sums, and its socket is excluded from round-trip counting.
 */
export interface RedisStats {
  client: Redis;
  commandCounts(): Promise<CommandCounts>;
  usedMemoryBytes(): Promise<number>;
  /** CPU time the server has used (INFO cpu: user + sys), seconds. */
  cpuSeconds(): Promise<number>;
  close(): void;
}

/** Commands the harness itself sends on the stats connection. */
const HARNESS_COMMANDS = new Set(["info"]);

export async function connectRedisStats(host: string, port: number): Promise<RedisStats> {
  const client = new Redis({ host, port, lazyConnect: true });
  await client.connect();
  return {
    client,
    async commandCounts() {
      const text = await client.info("commandstats");
      const counts: CommandCounts = {};
      for (const match of text.matchAll(/^cmdstat_([^:]+):calls=(\d+)/gm)) {
        const name = match[1] ?? "";
        if (!HARNESS_COMMANDS.has(name)) counts[name] = Number(match[2]);
      }
      return counts;
    },
    async usedMemoryBytes() {
      const text = await client.info("memory");
      return Number(text.match(/^used_memory:(\d+)/m)?.[1] ?? Number.NaN);
    },
    async cpuSeconds() {
      const text = await client.info("cpu");
      const user = Number(text.match(/^used_cpu_user:([\d.]+)/m)?.[1] ?? Number.NaN);
      const sys = Number(text.match(/^used_cpu_sys:([\d.]+)/m)?.[1] ?? Number.NaN);
      return user + sys;
    },
    close() {
      client.disconnect();
    },
  };
}

/** `after - before` per command, zero entries dropped. */
export function diffCounts(before: CommandCounts, after: CommandCounts): CommandCounts {
  const delta: CommandCounts = {};
  for (const [name, calls] of Object.entries(after)) {
    const d = calls - (before[name] ?? 0);
    if (d !== 0) delta[name] = d;
  }
  return delta;
}

export function sumCounts(counts: CommandCounts): number {
  let total = 0;
  for (const calls of Object.values(counts)) total += calls;
  return total;
}
