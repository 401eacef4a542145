import { runConformanceSuite } from "@tasklane/conformance";
import { afterAll, beforeAll } from "vitest";
import { createRedisAdapter } from "../src/index.ts";
import { type RedisServer, startRedis, uniquePrefix } from "./helpers.ts";

let server: RedisServer;
beforeAll(async () => {
  server = await startRedis();
});
afterAll(async () => {
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
  });
}
