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

runConformanceSuite({
  name: "redis",
  // Lifecycle events on: their conformance test runs, and every worker test then sees
  // events that must not stop its handlers.
  createAdapter: async () =>
    createRedisAdapter({ connection: server.url, prefix: uniquePrefix(), lifecycleEvents: true }),
});
