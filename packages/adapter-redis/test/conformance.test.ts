import { runConformanceSuite } from "@tasklane/conformance";
import { Redis } from "ioredis";
import { afterAll, beforeAll } from "vitest";
import { createRedisAdapter } from "../src/index.ts";
import { blockedPolls, type RedisServer, startRedis, uniquePrefix } from "./helpers.ts";

let server: RedisServer;
let raw: Redis;
beforeAll(async () => {
  server = await startRedis();
  raw = new Redis(server.port, server.host);
});
afterAll(async () => {
  raw?.disconnect();
  await server?.stop();
});

// Both forms of the scripts: the function library (the default on Redis 7+ and Valkey) and
// EVAL (Redis 6.2, or an ACL without FUNCTION). Lifecycle events on: their conformance
// test runs, and every worker test then sees events that must not stop its handlers.
for (const scripting of ["functions", "eval"] as const) {
  runConformanceSuite({
    name: scripting === "functions" ? "redis" : "redis (eval)",
    createAdapter: async () =>
      createRedisAdapter({
        connection: server.url,
        prefix: uniquePrefix(),
        lifecycleEvents: true,
        scripting,
      }),
    // The server's count of blocked connections: this file's tests run one at a time.
    waitingPolls: () => blockedPolls(raw),
  });
}
