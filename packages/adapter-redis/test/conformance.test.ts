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
  createAdapter: async () => createRedisAdapter({ connection: server.url, prefix: uniquePrefix() }),
});
