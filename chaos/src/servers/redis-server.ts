/**
 * A redis-server of the suite's own on a free port of 127.0.0.1, with its own directory so
 * its append-only file survives a kill -9 and is loaded again by the next start on the
 * same port. Only this server is ever killed, flushed or stopped.
 */
import { type ChildProcess, execFileSync, spawn } from "node:child_process";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Redis } from "ioredis";
import { freePort, waitFor } from "./free-port.ts";

export const REDIS_SERVER = process.env.REDIS_SERVER_BIN ?? "/usr/bin/redis-server";

export interface RedisServerOptions {
  /**
   * "always": every write is fsynced before its reply, so an acknowledged write survives a
   * kill -9. "everysec": up to about a second of acknowledged writes can be lost.
   * Absent: no persistence at all (a restart starts empty).
   */
  appendfsync?: "always" | "everysec";
  /** More redis-server options, e.g. ["--maxmemory", "64mb"]. */
  extra?: string[];
}

export interface ChaosRedis {
  readonly host: string;
  readonly port: number;
  readonly version: string;
  /** The running server's pid (undefined while it is down). */
  readonly pid: number | undefined;
  /** A client straight to the server (not through any proxy), for the checker and INFO. */
  readonly admin: Redis;
  /** SIGKILL the server (no shutdown, no final fsync) and wait for it to exit. */
  kill(): Promise<void>;
  /** Start it again on the same port and directory; resolves once it answers PING (loaded). */
  start(): Promise<void>;
  stop(): Promise<void>;
}

/**
 * Every redis-server this process started and that still runs: killed when the process
 * exits, however it exits (a scenario that throws in its setup never reaches teardown).
 */
const running = new Set<ChildProcess>();
process.on("exit", () => {
  for (const child of running) child.kill("SIGKILL");
});

export async function startChaosRedis(options: RedisServerOptions = {}): Promise<ChaosRedis> {
  if (!existsSync(REDIS_SERVER)) {
    throw new Error(
      `${REDIS_SERVER} not found: install Debian's redis-server package (.ci/run does), or set REDIS_SERVER_BIN`,
    );
  }
  const host = "127.0.0.1";
  const port = await freePort();
  const dir = mkdtempSync(join(tmpdir(), "tasklane-chaos-redis-"));
  const persistence =
    options.appendfsync === undefined
      ? ["--appendonly", "no"]
      : ["--appendonly", "yes", "--appendfsync", options.appendfsync];
  const args = [
    ...["--port", String(port), "--bind", host, "--dir", dir, "--save", ""],
    ...persistence,
    ...["--maxmemory-policy", "noeviction", "--daemonize", "no", "--loglevel", "warning"],
    ...(options.extra ?? []),
  ];
  let proc: ChildProcess | undefined;
  const admin = new Redis({ host, port, lazyConnect: true, maxRetriesPerRequest: 1 });
  admin.on("error", () => {});

  const isUp = () => proc !== undefined && proc.exitCode === null && proc.signalCode === null;
  const start = async () => {
    if (isUp()) return;
    const child = spawn(REDIS_SERVER, args, { stdio: ["ignore", "ignore", "inherit"] });
    proc = child;
    running.add(child);
    child.once("exit", () => running.delete(child));
    // A server still loading its AOF answers LOADING: PING fails until it is ready.
    await waitFor(
      async () => {
        if (child.exitCode !== null) throw new Error("redis-server exited at start");
        if (admin.status === "wait" || admin.status === "end") await admin.connect();
        return (await admin.ping()) === "PONG";
      },
      `redis-server on port ${port}`,
      30_000,
    );
  };
  const kill = async () => {
    const p = proc;
    if (p === undefined || !isUp()) return;
    const exited = new Promise<void>((resolve) => p.once("exit", () => resolve()));
    p.kill("SIGKILL");
    await exited;
  };
  await start();
  const version =
    execFileSync(REDIS_SERVER, ["--version"], { encoding: "utf8" }).match(/v=(\S+)/)?.[1] ??
    "unknown";
  return {
    host,
    port,
    version,
    get pid() {
      return isUp() ? proc?.pid : undefined;
    },
    admin,
    kill,
    start,
    async stop() {
      admin.disconnect();
      await kill();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** A number field of INFO (e.g. used_memory), or undefined. */
export async function infoField(client: Redis, section: string, field: string) {
  const text = await client.info(section);
  const match = new RegExp(`^${field}:(\\S+)`, "m").exec(text);
  return match === null ? undefined : Number(match[1]);
}
