/**
 * Test support: real redis-server processes on free ports of 127.0.0.1, each with its own
 * temp dir, stopped after the tests (or the server at REDIS_URL, never stopped).
 */
import { type ChildProcess, execFile, spawn } from "node:child_process";
import { randomUUID } from "node:crypto";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import type { NewJob } from "@tasklane/core/adapter";
import { Redis } from "ioredis";

const run = promisify(execFile);
export const REDIS_SERVER = process.env.REDIS_SERVER_BIN ?? "/usr/bin/redis-server";
export const REDIS_CLI = process.env.REDIS_CLI_BIN ?? "/usr/bin/redis-cli";

export interface RedisServer {
  host: string;
  port: number;
  url: string;
  dir: string;
  /** Kill the process (SIGKILL: no shutdown save) and wait for it to exit. */
  kill(): Promise<void>;
  /** Start it again on the same port and dir (after kill). */
  restart(): Promise<void>;
  stop(): Promise<void>;
}

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.unref();
    srv.on("error", reject);
    srv.listen(0, "127.0.0.1", () => {
      const address = srv.address();
      const port = typeof address === "object" && address ? address.port : 0;
      srv.close(() => resolve(port));
    });
  });
}

export async function waitFor<T>(
  check: () => Promise<T | undefined | false> | T | undefined | false,
  what: string,
  timeoutMs = 10_000,
): Promise<T> {
  const started = Date.now();
  for (;;) {
    const value = await check();
    if (value) return value;
    if (Date.now() - started > timeoutMs) throw new Error(`Timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

/** A test CA and a server certificate for 127.0.0.1 signed by it (see makeTlsFiles). */
export interface TlsFiles {
  /** Paths, for the server's --tls-* options. */
  caFile: string;
  certFile: string;
  keyFile: string;
  /** The CA certificate's PEM text, for a client's `tls: { ca }`. */
  ca: string;
}

/**
 * Make a throwaway CA and a server certificate for IP 127.0.0.1 in `dir` with the openssl
 * CLI (P-256 keys, valid one day).
 */
export async function makeTlsFiles(dir: string): Promise<TlsFiles> {
  await run("openssl", ["version"]).catch((error: unknown) => {
    throw new Error("openssl not found: install Debian's openssl package (.ci/run does)", {
      cause: error,
    });
  });
  const at = (name: string) => join(dir, name);
  const subject = (cn: string) => ["-subj", `/CN=${cn}`];
  const ec = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"];
  await run("openssl", [
    "req",
    "-x509",
    ...ec,
    "-keyout",
    at("ca.key"),
    "-out",
    at("ca.crt"),
    "-days",
    "1",
    ...subject("tasklane test CA"),
  ]);
  await run("openssl", [
    "req",
    ...ec,
    "-keyout",
    at("server.key"),
    "-out",
    at("server.csr"),
    ...subject("127.0.0.1"),
  ]);
  writeFileSync(at("server.ext"), "subjectAltName=IP:127.0.0.1\n");
  await run("openssl", [
    "x509",
    "-req",
    "-in",
    at("server.csr"),
    "-CA",
    at("ca.crt"),
    "-CAkey",
    at("ca.key"),
    "-CAcreateserial",
    "-out",
    at("server.crt"),
    "-days",
    "1",
    "-extfile",
    at("server.ext"),
  ]);
  return {
    caFile: at("ca.crt"),
    certFile: at("server.crt"),
    keyFile: at("server.key"),
    ca: readFileSync(at("ca.crt"), "utf8"),
  };
}

async function ping(port: number, tls?: TlsFiles): Promise<boolean> {
  const client = new Redis({
    port,
    host: "127.0.0.1",
    lazyConnect: true,
    retryStrategy: () => null,
    ...(tls ? { tls: { ca: tls.ca } } : {}),
  });
  client.on("error", () => {});
  try {
    await client.connect();
    return (await client.ping()) === "PONG";
  } catch {
    return false;
  } finally {
    client.disconnect();
  }
}

/**
 * Start a redis-server of our own (extra args are redis-server options, e.g. "--appendonly",
 * "yes"). With `tls`, it listens for TLS only (no plain port), clients not asked for a
 * certificate.
 */
export async function startRedis(extra: string[] = [], tls?: TlsFiles): Promise<RedisServer> {
  const external = process.env.REDIS_URL;
  if (external && extra.length === 0 && tls === undefined) {
    const u = new URL(external);
    const port = Number(u.port || 6379);
    return {
      host: u.hostname,
      port,
      url: external,
      dir: "",
      kill: async () => {
        throw new Error("cannot kill the server at REDIS_URL");
      },
      restart: async () => {},
      stop: async () => {},
    };
  }
  if (!existsSync(REDIS_SERVER)) {
    throw new Error(
      REDIS_SERVER.includes("valkey")
        ? `${REDIS_SERVER} not found: install Debian's valkey-server package from ` +
            "bookworm-backports (.ci/run does), or set VALKEY_SERVER_BIN and VALKEY_CLI_BIN"
        : `${REDIS_SERVER} not found: install Debian's redis-server package ` +
            "(apt-get install -y redis-server; .ci/run does), or set REDIS_SERVER_BIN, or " +
            "REDIS_URL to use a server of your own",
    );
  }
  const dir = mkdtempSync(join(tmpdir(), "tasklane-redis-"));
  const port = await freePort();
  let proc: ChildProcess | undefined;
  const start = async () => {
    const listen = tls
      ? [
          ...["--port", "0", "--tls-port", String(port), "--tls-auth-clients", "no"],
          ...["--tls-cert-file", tls.certFile, "--tls-key-file", tls.keyFile],
          ...["--tls-ca-cert-file", tls.caFile],
        ]
      : ["--port", String(port)];
    proc = spawn(
      REDIS_SERVER,
      [...listen, "--bind", "127.0.0.1", "--dir", dir, "--save", "", ...extra],
      { stdio: "ignore" },
    );
    await waitFor(() => ping(port, tls), `redis-server on port ${port}`);
  };
  const kill = async () => {
    const p = proc;
    if (!p || p.exitCode !== null || p.signalCode !== null) return;
    await new Promise<void>((resolve) => {
      p.once("exit", () => resolve());
      p.kill("SIGKILL");
    });
  };
  await start();
  return {
    host: "127.0.0.1",
    port,
    url: `${tls ? "rediss" : "redis"}://127.0.0.1:${port}`,
    dir,
    kill,
    restart: start,
    async stop() {
      await kill();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

export interface RedisClusterNodes {
  ports: number[];
  stop(): Promise<void>;
}

/** Three cluster-enabled masters joined with redis-cli --cluster create. */
export async function startCluster(): Promise<RedisClusterNodes> {
  const nodes: RedisServer[] = [];
  for (let i = 0; i < 3; i++) {
    nodes.push(
      await startRedis([
        "--cluster-enabled",
        "yes",
        "--cluster-config-file",
        "nodes.conf", // inside the node's own --dir
        "--cluster-node-timeout",
        "5000",
      ]),
    );
  }
  const ports = nodes.map((n) => n.port);
  await run(REDIS_CLI, [
    "--cluster",
    "create",
    ...ports.map((p) => `127.0.0.1:${p}`),
    "--cluster-replicas",
    "0",
    "--cluster-yes",
  ]);
  // Every node, not just the first, must agree the cluster is whole before a client
  // connects: a node that has not yet learned the slot map by gossip answers CLUSTERDOWN,
  // and a client refreshing its map from it can fail the first commands.
  for (const port of ports) {
    await waitFor(async () => {
      const c = new Redis({ port, host: "127.0.0.1" });
      try {
        const info = String(await c.cluster("INFO"));
        return info.includes("cluster_state:ok") && info.includes("cluster_known_nodes:3");
      } finally {
        c.disconnect();
      }
    }, `cluster_state:ok on node ${port}`);
  }
  await waitForClusterPubSub(ports);
  return {
    ports,
    async stop() {
      await Promise.all(nodes.map((n) => n.stop()));
    },
  };
}

/**
 * PUBLISH reaches the other nodes over the cluster bus, and cluster_state:ok does not
 * mean every node's bus links are up yet: on Valkey 8.0 a node sometimes missed the other
 * nodes' messages for a while after it (the events test then lost a lane's `canceled`
 * event). Wait until a message published on each node reaches a subscriber on each node.
 */
async function waitForClusterPubSub(ports: number[]): Promise<void> {
  const channel = `cluster-probe:${randomUUID()}`;
  const heard = new Map<number, Set<string>>();
  const subscribers = await Promise.all(
    ports.map(async (port) => {
      const sub = new Redis({ port, host: "127.0.0.1" });
      heard.set(port, new Set());
      sub.on("message", (_channel: string, message: string) => heard.get(port)?.add(message));
      await sub.subscribe(channel);
      return sub;
    }),
  );
  const publisher = (port: number) => new Redis({ port, host: "127.0.0.1" });
  const publishers = ports.map(publisher);
  try {
    let round = 0;
    await waitFor(async () => {
      round++;
      const sent = ports.map((port) => `${round}:${port}`);
      await Promise.all(publishers.map((p, i) => p.publish(channel, sent[i] as string)));
      await new Promise((r) => setTimeout(r, 50));
      return ports.every((port) => sent.every((m) => heard.get(port)?.has(m)));
    }, "pub/sub across the cluster bus");
  } finally {
    for (const client of [...subscribers, ...publishers]) client.disconnect();
  }
}

/** Lane options most tests use: one stall allowed, a short history. */
export const LANE_OPTIONS = { maxStalls: 1, historyLimit: 10 };

/** A new job for put(): a fresh id, task "t", due now, priority 0. */
export function newJob(over: Partial<NewJob> = {}): NewJob {
  return {
    id: randomUUID(),
    task: "t",
    payload: '{"n":1}',
    priority: 0,
    publishedAt: Date.now(),
    ...over,
  };
}

/** Calls of the script commands on a server so far (INFO commandstats). */
export async function commandCalls(
  client: Redis,
): Promise<{ fcall: number; evalsha: number; eval: number }> {
  const stats = (await client.info("commandstats")) as string;
  const calls = (name: string) =>
    Number(new RegExp(`cmdstat_${name}:calls=(\\d+)`).exec(stats)?.[1] ?? 0);
  return { fcall: calls("fcall"), evalsha: calls("evalsha"), eval: calls("eval") };
}

/** Load a one-function library named `name` on `node` (a stand-in for another build's). */
export function loadStubLibrary(node: Redis, name: string): Promise<unknown> {
  return node.call(
    "FUNCTION",
    "LOAD",
    `#!lua name=${name}\nredis.register_function('${name}_f', function() return 1 end)`,
  );
}

/** The function libraries on `node`, by name, sorted. */
export async function libraryNames(node: Redis): Promise<string[]> {
  const list = (await node.call("FUNCTION", "LIST")) as unknown[][];
  return list.map((entry) => String(entry[entry.indexOf("library_name") + 1])).sort();
}

export function uniquePrefix(): string {
  return `t${randomUUID().slice(0, 8)}`;
}

/**
 * Connections blocked in BLPOP on `client`'s server now: long polls waiting on a lane's
 * wake-up key (any lane: CLIENT LIST does not show the key). Tests wait for this count to
 * rise instead of sleeping to "let the poll block".
 */
export async function blockedPolls(client: Redis): Promise<number> {
  return (await blockedPollList(client)).length;
}

/** One connection blocked in BLPOP, as CLIENT LIST shows it. */
export interface BlockedPoll {
  id: string;
  /** Commands the connection has run (Valkey 8, Redis 7.4+; undefined on older servers). */
  cmds: number | undefined;
  /** Seconds since its last command (whole seconds). */
  idleS: number;
}

/** The connections blocked in BLPOP on `client`'s server now (see blockedPolls). */
export async function blockedPollList(client: Redis): Promise<BlockedPoll[]> {
  const list = (await client.client("LIST")) as string;
  // flags "b": blocked now. `cmd` is only the last command a connection ran, which stays
  // "blpop" for a connection whose block has ended until it runs another.
  return list
    .split("\n")
    .filter((line) => line.includes("cmd=blpop") && /\bflags=\w*b/.test(line))
    .map((line) => {
      const field = (name: string) => new RegExp(`(?:^| )${name}=(\\S*)`).exec(line)?.[1];
      const cmds = field("tot-cmds");
      return {
        id: field("id") ?? "",
        cmds: cmds === undefined ? undefined : Number(cmds),
        idleS: Number(field("idle") ?? 0),
      };
    });
}

/**
 * Whether `now` (read `elapsedMs` after `before`, the server's blocked polls then) has a
 * block that began since: on a connection that was not blocked then, or that has run
 * commands since (a block ended and a new one began between two readings). A count can
 * not tell that: a poll that leaves (an aborted one whose CLIENT UNBLOCK is still on its
 * way) while ours arrives between two readings leaves it as it was. Servers without
 * `tot-cmds` (Redis before 7.4): a connection whose idle time went back.
 */
export function blockedSince(
  before: readonly BlockedPoll[],
  now: readonly BlockedPoll[],
  elapsedMs: number,
): boolean {
  const then = new Map(before.map((p) => [p.id, p]));
  return now.some((p) => {
    const old = then.get(p.id);
    if (old === undefined) return true;
    if (p.cmds !== undefined && old.cmds !== undefined) return p.cmds !== old.cmds;
    // idle is whole seconds: the same block reads at least old + elapsed − 1
    return p.idleS < old.idleS + Math.floor(elapsedMs / 1000) - 1;
  });
}
