/**
 * ACL: a user whose key pattern is `~<prefix>:*` (and channels `&<prefix>:*`) runs every
 * script of its prefix; another prefix's keys are refused with a typed error.
 */
import { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createRedisAdapter, RedisPermissionError } from "../src/index.ts";
import { commandCalls, newJob as job, type RedisServer, startRedis } from "./helpers.ts";

let server: RedisServer;
let admin: Redis;

beforeAll(async () => {
  server = await startRedis();
  admin = new Redis(server.port, server.host);
  const user = (name: string, ...extra: string[]) =>
    admin.acl(
      "SETUSER",
      name,
      "on",
      ">secret",
      "resetkeys",
      "~app:*",
      "resetchannels",
      "&app:*",
      "+@all",
      ...extra,
    );
  await user("app");
  // The same, without FUNCTION: the adapter runs its scripts by EVALSHA instead.
  await user("evalonly", "-function");
});

const as = (username: string) => ({
  host: server.host,
  port: server.port,
  username,
  password: "secret",
});

afterAll(async () => {
  admin?.disconnect();
  await server?.stop();
});

describe("ACL", () => {
  it.each([
    ["app", "functions"],
    ["evalonly", "eval"],
  ])("runs every script as a user limited to its prefix (%s: %s)", async (user, mode) => {
    const adapter = createRedisAdapter({ connection: as(user), prefix: "app" });
    const calls = async () =>
      (await commandCalls(admin))[mode === "functions" ? "fcall" : "evalsha"];
    const before = await calls();
    try {
      const unsubscribe = await adapter.subscribe(() => {});
      const q = await adapter.lane(`work-${user}`, {
        maxStalls: 1,
        historyLimit: 5,
        maxConcurrency: 10,
        retention: { succeeded: { maxCount: 1, maxAgeMs: 60_000 } },
      });
      const [a, b, c, d] = [job(), job(), job(), job()];
      await q.put([a, b, c, { ...d, runAt: Date.now() + 60_000 }]);
      const got = (await q.reserve({ limit: 3, leaseMs: 10_000, waitMs: 0 })).jobs;
      expect(got).toHaveLength(3);
      expect(await q.extend([got[0]!.lock], 10_000)).toEqual(["ok"]);
      expect(await q.ack([got[0]!.lock])).toEqual(["ok"]);
      const error = { name: "Error", message: "x", reason: "error" as const };
      expect(await q.nack([{ lock: got[1]!.lock, dead: true, error }])).toEqual(["ok"]);
      expect(await q.release([{ lock: got[2]!.lock, uncounted: true }])).toEqual(["ok"]);
      expect(await q.retryFailed()).toBe(1);
      expect(await q.cancel([d.id])).toEqual(["canceled"]);
      expect(await q.delete([d.id])).toBe(1);
      await q.pause();
      expect(await q.isPaused()).toBe(true);
      await q.resume();
      expect(await q.probe()).toBe(2);
      expect((await q.counts()).waiting).toBe(2);
      expect((await q.get(a.id))?.state).toBe("succeeded");
      let listed = 0;
      for await (const _ of q.list({ state: "waiting" })) listed++;
      expect(listed).toBe(2);
      expect(await q.stats(new Date().toISOString().slice(0, 10))).toBeDefined();
      // A blocking poll (BLPOP on the wake-up key, CLIENT UNBLOCK on abort) as this user.
      await q.pause();
      const controller = new AbortController();
      const poll = q.reserve({
        limit: 1,
        leaseMs: 1_000,
        waitMs: 20_000,
        signal: controller.signal,
      });
      setTimeout(() => controller.abort(), 30);
      expect((await poll).jobs).toEqual([]);
      await q.resume();
      expect((await q.reserve({ limit: 1, leaseMs: 1_000, waitMs: 1_000 })).jobs).toHaveLength(1);
      await unsubscribe();
      // every call above ran in the mode "auto" chose for this user
      expect((await calls()) - before).toBeGreaterThan(15);
    } finally {
      await adapter.close();
    }
  });

  it("refuses to start in functions mode when the ACL refuses FUNCTION", async () => {
    const adapter = createRedisAdapter({
      connection: as("evalonly"),
      prefix: "app",
      scripting: "functions",
    });
    try {
      const failed = adapter.lane("work", { maxStalls: 1, historyLimit: 5 });
      await expect(failed).rejects.toBeInstanceOf(RedisPermissionError);
      await expect(failed).rejects.toThrow(/function library tasklane_/);
    } finally {
      await adapter.close();
    }
  });

  it("refuses another prefix's keys with a typed error", async () => {
    const adapter = createRedisAdapter({ connection: as("app"), prefix: "other" });
    try {
      const q = await adapter.lane("work", { maxStalls: 1, historyLimit: 5 });
      await expect(q.put([job()])).rejects.toBeInstanceOf(RedisPermissionError);
      await expect(q.reserve({ limit: 1, leaseMs: 1_000, waitMs: 0 })).rejects.toMatchObject({
        code: "ADAPTER",
      });
    } finally {
      await adapter.close();
    }
  });
});
