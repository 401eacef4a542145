import { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type RedisServer, startRedisServer } from "../servers/redis.ts";
import { installRoundTripCounter, type RoundTripCounter } from "./round-trips.ts";

// Against a real redis-server (started and stopped here), because what counts as one
// round trip depends on how the client writes to its socket.
describe("round-trip counter", () => {
  let server: RedisServer;
  let counter: RoundTripCounter;
  let plain: Redis;
  let auto: Redis;
  const delta = async (work: () => Promise<unknown>) => {
    const before = counter.count();
    await work();
    return counter.count() - before;
  };

  beforeAll(async () => {
    server = await startRedisServer();
    counter = installRoundTripCounter(server.port);
    plain = new Redis({ host: server.host, port: server.port });
    auto = new Redis({ host: server.host, port: server.port, enableAutoPipelining: true });
    await Promise.all([plain.ping(), auto.ping()]);
  });

  afterAll(async () => {
    plain.disconnect();
    auto.disconnect();
    counter.uninstall();
    await server.stop();
  });

  it("counts each lone command", async () => {
    expect(await delta(() => Promise.all([1, 2, 3].map((n) => plain.set(`k${n}`, "v"))))).toBe(3);
  });

  it("counts a pipeline or a MULTI block once", async () => {
    const pipeline = plain.pipeline();
    for (const n of [1, 2, 3]) pipeline.get(`k${n}`);
    expect(await delta(() => pipeline.exec())).toBe(1);
    expect(await delta(() => plain.multi().set("a", "1").set("b", "2").exec())).toBe(1);
  });

  it("counts an auto-pipelined tick once", async () => {
    expect(await delta(() => Promise.all([1, 2, 3].map((n) => auto.get(`k${n}`))))).toBe(1);
  });

  it("skips excluded sockets", async () => {
    const socket = (plain as unknown as { stream: import("node:net").Socket }).stream;
    counter.exclude(socket);
    expect(await delta(() => plain.ping())).toBe(0);
  });
});
