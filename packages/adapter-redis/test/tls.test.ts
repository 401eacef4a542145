/**
 * TLS: connection options pass through to ioredis unchanged (`tls: { ca }`), and every
 * connection the adapter makes speaks TLS: commands, the blocking connection of long polls
 * (duplicated from the first) and the subscriber for events. A server certificate the
 * client cannot verify, or a plain connection to a TLS port, fails with a typed error
 * rather than hanging. The server listens for TLS only; the certificates are made per run.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { AdapterEvent } from "@tasklane/core/adapter";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createRedisAdapter, RedisUnavailableError } from "../src/index.ts";
import {
  newJob as job,
  LANE_OPTIONS,
  makeTlsFiles,
  type RedisServer,
  startRedis,
  type TlsFiles,
  waitFor,
} from "./helpers.ts";

let dir: string;
let tls: TlsFiles;
let server: RedisServer;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "tasklane-tls-"));
  tls = await makeTlsFiles(dir);
  server = await startRedis([], tls);
}, 30_000);

afterAll(async () => {
  await server?.stop();
  rmSync(dir, { recursive: true, force: true });
});

const opts = LANE_OPTIONS;

describe("redis over TLS", () => {
  it("runs put, a long poll woken by a put, ack and a cancel event", async () => {
    const adapter = createRedisAdapter({
      connection: { host: server.host, port: server.port, tls: { ca: tls.ca } },
      prefix: "tls",
    });
    try {
      const events: AdapterEvent[] = [];
      const unsubscribe = await adapter.subscribe((e) => events.push(e));
      const q = await adapter.lane("secure", opts);
      const a = job();
      // Blocks on the duplicated (blocking) connection until the put wakes it.
      const poll = q.reserve({ limit: 1, leaseMs: 10_000, waitMs: 10_000 });
      expect(await q.put([a])).toEqual([{ id: a.id, status: "created" }]);
      const [got] = (await poll).jobs;
      expect(got?.id).toBe(a.id);
      expect(await q.ack([got!.lock])).toEqual(["ok"]);

      const b = job();
      await q.put([b]);
      const [held] = (await q.reserve({ limit: 1, leaseMs: 10_000, waitMs: 0 })).jobs;
      expect(await q.cancel([b.id])).toEqual(["canceled"]);
      await waitFor(
        () => events.some((e) => e.type === "canceled" && e.jobId === b.id),
        "the canceled event over the TLS subscriber",
      );
      expect(await q.ack([held!.lock])).toEqual(["canceled"]);
      expect(await q.counts()).toMatchObject({ succeeded: 1, canceled: 1 });
      await unsubscribe();
    } finally {
      await adapter.close();
    }
  });

  it("refuses a server certificate it cannot verify", async () => {
    const adapter = createRedisAdapter({
      connection: { host: server.host, port: server.port, tls: {} },
      prefix: "tls",
    });
    try {
      const error = await adapter.lane("secure", opts).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(RedisUnavailableError);
      expect(String((error as Error).message)).toMatch(/certificate/i);
    } finally {
      await adapter.close();
    }
  });

  it("fails a plain connection to the TLS port with a typed error", async () => {
    const adapter = createRedisAdapter({
      connection: { host: server.host, port: server.port, connectTimeout: 2_000 },
      prefix: "tls",
    });
    try {
      await expect(adapter.lane("secure", opts)).rejects.toBeInstanceOf(RedisUnavailableError);
    } finally {
      await adapter.close();
    }
  });
});
