import { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type RedisServer, startRedisServer } from "../servers/redis.ts";
import { connectRedisStats, diffCounts, type RedisStats, sumCounts } from "./redis-stats.ts";

describe("redis commandstats", () => {
  let server: RedisServer;
  let stats: RedisStats;
  let client: Redis;

  beforeAll(async () => {
    server = await startRedisServer();
    stats = await connectRedisStats(server.host, server.port);
    client = new Redis({ host: server.host, port: server.port });
  });

  afterAll(async () => {
    client.disconnect();
    stats.close();
    await server.stop();
  });

  it("counts the commands a script runs, and the script call, not the harness's INFO", async () => {
    const before = await stats.commandCounts();
    await client.eval(
      "redis.call('SET', KEYS[1], 1); redis.call('INCR', KEYS[1]); return redis.call('GET', KEYS[1])",
      1,
      "k",
    );
    const delta = diffCounts(before, await stats.commandCounts());
    expect(delta).toEqual({ eval: 1, set: 1, incr: 1, get: 1 });
    expect(sumCounts(delta)).toBe(4);
  });

  it("reads used_memory, which grows with stored data", async () => {
    const before = await stats.usedMemoryBytes();
    await client.set("big", "x".repeat(100_000));
    expect((await stats.usedMemoryBytes()) - before).toBeGreaterThan(100_000);
  });
});
