import { type ChildProcess, execFileSync, spawn } from "node:child_process";
import { Redis } from "ioredis";
import { freePort, waitFor } from "./free-port.ts";

const REDIS_SERVER = "/usr/bin/redis-server";

/** A redis-server this process started; only this server is ever flushed or stopped. */
export interface RedisServer {
  host: string;
  port: number;
  version: string;
  /** FLUSHALL and CONFIG RESETSTAT between cases (it is our own server). */
  reset(): Promise<void>;
  stop(): Promise<void>;
}

/** Start redis-server on a free port on 127.0.0.1, no persistence. */
export async function startRedisServer(): Promise<RedisServer> {
  const host = "127.0.0.1";
  const port = await freePort();
  const child: ChildProcess = spawn(
    REDIS_SERVER,
    [
      "--port",
      String(port),
      "--bind",
      host,
      "--save",
      "",
      "--appendonly",
      "no",
      "--daemonize",
      "no",
      "--maxmemory-policy",
      "noeviction",
      "--loglevel",
      "warning",
    ],
    { stdio: ["ignore", "ignore", "inherit"] },
  );
  let exited = false;
  child.once("exit", () => {
    exited = true;
  });
  const admin = new Redis({ host, port, lazyConnect: true, maxRetriesPerRequest: 1 });
  admin.on("error", () => {});
  await waitFor(
    async () => {
      if (exited) throw new Error("redis-server exited at start");
      if (admin.status !== "ready") await admin.connect().catch(() => {});
      return (await admin.ping()) === "PONG";
    },
    10_000,
    `redis-server on port ${port}`,
  );
  const version =
    execFileSync(REDIS_SERVER, ["--version"], { encoding: "utf8" }).match(/v=(\S+)/)?.[1] ??
    "unknown";
  return {
    host,
    port,
    version,
    async reset() {
      await admin.flushall("SYNC");
      await admin.config("RESETSTAT");
    },
    async stop() {
      admin.disconnect();
      if (exited) return;
      const done = new Promise<void>((resolve) => child.once("exit", () => resolve()));
      child.kill("SIGTERM");
      await done;
    },
  };
}
