/**
 * The suite runs twice (see the root vitest.config.ts): against redis-server and against
 * valkey-server. This checks that each run really talks to the server it is named for, so
 * a misconfigured run cannot pass on the other server unnoticed.
 */
import { Redis } from "ioredis";
import { expect, it } from "vitest";
import { startRedis } from "./helpers.ts";

const expected = process.env.TASKLANE_TEST_SERVER ?? "redis";

it.skipIf(process.env.REDIS_URL)(`runs against ${expected}`, async () => {
  const server = await startRedis();
  const client = new Redis(server.port, server.host);
  try {
    const info = await client.info("server");
    const name = /^server_name:(\w+)/m.exec(info)?.[1] ?? "redis";
    expect(name).toBe(expected);
    // The adapter needs Redis 6.2 at least (reserve pops with LPOP and a count).
    const version = /^redis_version:(\d+)\.(\d+)/m.exec(info);
    expect(Number(version?.[1]) * 100 + Number(version?.[2])).toBeGreaterThanOrEqual(602);
  } finally {
    client.disconnect();
    await server.stop();
  }
});
