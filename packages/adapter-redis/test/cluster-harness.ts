/**
 * A replicated Redis Cluster of our own for failover tests: `masters` cluster-enabled
 * redis-servers (valkey-servers in the Valkey run) each with `replicas` replicas, on free
 * ports of 127.0.0.1, AOF on (fsync every second), joined with `redis-cli --cluster
 * create`. It drives the events a production cluster meets, with the server's own
 * commands: a manual failover (CLUSTER FAILOVER), a master killed with SIGKILL and
 * started again on its port and dir (it rejoins as a replica), a slot migrated between
 * masters (CLUSTER SETSLOT and MIGRATE) and a replica's replication link cut.
 *
 * Every wait polls the cluster's own state (CLUSTER INFO, CLUSTER NODES, INFO
 * replication): no fixed sleeps. `stop()` kills every process it started, also the ones
 * a test killed and started again.
 *
 * The link cut needs the replicas to authenticate: every node has an ACL user `repl`
 * (`masteruser`/`masterauth`), and cutting a master's link disables that user on it and
 * drops its replicas' connections, so they cannot reconnect until `restoreReplication`.
 * (A replica whose connection is only dropped reconnects within a second and catches up;
 * clients use the default user, which is unaffected.)
 */
import { execFile } from "node:child_process";
import { promisify } from "node:util";
import { Redis } from "ioredis";
import { REDIS_CLI, type RedisServer, startRedis, waitFor } from "./helpers.ts";

const run = promisify(execFile);
const REPL_USER = "repl";
const REPL_PASSWORD = "repl-secret";

/** One node as `CLUSTER NODES` reports it. */
export interface NodeView {
  id: string;
  port: number;
  role: "master" | "replica";
  /** The master's id, for a replica. */
  masterId: string | undefined;
  /** Flagged fail or pfail by the node that reported it. */
  failing: boolean;
  /** Slot ranges served, for a master: [from, to] inclusive. */
  slots: Array<[number, number]>;
}

export interface ClusterOptions {
  masters?: number;
  replicas?: number;
  /** cluster-node-timeout, ms. Default 2,000. */
  nodeTimeoutMs?: number;
}

export interface ReplicatedCluster {
  /** Every node's port, masters first as created. */
  readonly ports: readonly number[];
  /** Startup nodes for ioredis. */
  readonly startup: ReadonlyArray<{ host: string; port: number }>;
  /** A client of one node (cached, closed by stop()). */
  node(port: number): Redis;
  /** The cluster as a live node sees it. */
  view(): Promise<NodeView[]>;
  /** The slot of `key` (CLUSTER KEYSLOT on a live node). */
  keySlot(key: string): Promise<number>;
  /** The port of the master that serves `slot`. */
  masterOf(slot: number): Promise<number>;
  /** The ports of `masterPort`'s replicas that are online. */
  replicasOf(masterPort: number): Promise<number[]>;
  /**
   * Until every live node reports cluster_state:ok, every node agrees which master serves
   * each slot, none of those is failing, and each master has `replicas` replicas online
   * (pass 0 to not wait for replicas, e.g. while one is down).
   */
  waitHealthy(replicas?: number, timeoutMs?: number): Promise<void>;
  /**
   * Until `masterPort` has its replicas online and they have applied everything it wrote
   * (equal offsets).
   */
  waitReplicated(masterPort: number, timeoutMs?: number): Promise<void>;
  /** Replication offsets: the master's, and its replica's own (what it applied). */
  offsets(masterPort: number, replicaPort: number): Promise<{ master: number; replica: number }>;
  /** SIGKILL, no shutdown save. */
  kill(port: number): Promise<void>;
  /** Start a killed node again on its port and dir (AOF and nodes.conf kept). */
  restart(port: number): Promise<void>;
  /** CLUSTER FAILOVER on `replicaPort`; resolves once it is master on every live node. */
  failover(replicaPort: number, timeoutMs?: number): Promise<void>;
  /** Until `replicaPort` is the master of `slot` on every live node (after a kill). */
  waitPromoted(replicaPort: number, slot: number, timeoutMs?: number): Promise<void>;
  /** Stop `masterPort`'s replicas from replicating it (see the file comment). */
  cutReplication(masterPort: number): Promise<void>;
  restoreReplication(masterPort: number): Promise<void>;
  /**
   * Move `slot` (with its keys) from its master to `toPort`: IMPORTING / MIGRATING, MIGRATE
   * in batches, then SETSLOT NODE on every master. `onMigrating` runs once the slot is
   * marked migrating, before any key moves (to let traffic meet the migration).
   */
  migrateSlot(slot: number, toPort: number, onMigrating?: () => Promise<void>): Promise<void>;
  stop(): Promise<void>;
}

/** A cluster of `masters` × (1 + `replicas`) nodes, healthy and with replicas in sync. */
export async function startReplicatedCluster(
  options: ClusterOptions = {},
): Promise<ReplicatedCluster> {
  const masterCount = options.masters ?? 3;
  const replicaCount = options.replicas ?? 1;
  const nodeTimeoutMs = options.nodeTimeoutMs ?? 2_000;
  const servers = new Map<number, RedisServer>();
  const clients = new Map<number, Redis>();
  const down = new Set<number>();
  const stopAll = async () => {
    for (const c of clients.values()) c.disconnect();
    clients.clear();
    await Promise.all([...servers.values()].map((s) => s.stop()));
  };
  try {
    const started = await Promise.all(
      Array.from({ length: masterCount * (1 + replicaCount) }, () =>
        startRedis([
          ...["--cluster-enabled", "yes", "--cluster-config-file", "nodes.conf"],
          ...["--cluster-node-timeout", String(nodeTimeoutMs)],
          ...["--appendonly", "yes", "--appendfsync", "everysec"],
          ...["--user", REPL_USER, "on", `>${REPL_PASSWORD}`, "~*", "&*", "+@all"],
          ...["--masteruser", REPL_USER, "--masterauth", REPL_PASSWORD],
        ]),
      ),
    );
    for (const s of started) servers.set(s.port, s);
  } catch (error) {
    await stopAll();
    throw error;
  }
  const ports = [...servers.keys()];

  const node = (port: number): Redis => {
    let c = clients.get(port);
    if (c === undefined) {
      c = new Redis({
        port,
        host: "127.0.0.1",
        maxRetriesPerRequest: 1,
        lazyConnect: true,
        // failures name the harness call that made them
        showFriendlyErrorStack: true,
      });
      c.on("error", () => {});
      clients.set(port, c);
    }
    return c;
  };
  const live = () => ports.filter((p) => !down.has(p));

  const parseNodes = (text: string): NodeView[] =>
    text
      .trim()
      .split("\n")
      .map((line) => {
        const [id, address, flags, master, , , , , ...slots] = line.split(" ");
        const port = Number(/:(\d+)@/.exec(address ?? "")?.[1]);
        const flagSet = new Set((flags ?? "").split(","));
        const ranges: Array<[number, number]> = [];
        for (const s of slots) {
          if (s.startsWith("[")) continue; // a slot being migrated or imported
          const [from, to] = s.split("-").map(Number);
          ranges.push([from as number, (to ?? from) as number]);
        }
        return {
          id: id ?? "",
          port,
          role: flagSet.has("master") ? ("master" as const) : ("replica" as const),
          masterId: master === "-" ? undefined : master,
          failing: flagSet.has("fail") || flagSet.has("fail?"),
          slots: ranges,
        };
      });

  const viewFrom = async (port: number) =>
    parseNodes(String(await node(port).call("CLUSTER", "NODES")));

  const view = async (): Promise<NodeView[]> => {
    let last: unknown;
    for (const port of live()) {
      try {
        return await viewFrom(port);
      } catch (error) {
        last = error;
      }
    }
    throw new Error(`no live node answered CLUSTER NODES: ${String(last)}`);
  };

  const keySlot = async (key: string) => {
    const port = live()[0];
    if (port === undefined) throw new Error("no live node");
    return Number(await node(port).call("CLUSTER", "KEYSLOT", key));
  };

  const ownerIn = (nodes: NodeView[], slot: number) =>
    nodes.find((n) => n.role === "master" && n.slots.some(([a, b]) => slot >= a && slot <= b));

  const masterOf = async (slot: number) => {
    const owner = ownerIn(await view(), slot);
    if (owner === undefined) throw new Error(`no master serves slot ${slot}`);
    return owner.port;
  };

  /** The master's own word (INFO replication): its replicas whose link is up. */
  const replicasOf = async (masterPort: number) => {
    const info = String(await node(masterPort).info("replication"));
    return [...info.matchAll(/^slave\d+:.*port=(\d+),state=online/gm)]
      .map((m) => Number(m[1]))
      .sort((a, b) => a - b);
  };

  /** A node's map: slot range starts → owner port, for comparing nodes' views. */
  const slotMap = (nodes: NodeView[]) =>
    nodes
      .filter((n) => n.role === "master")
      .flatMap((n) => n.slots.map(([a, b]) => `${a}-${b}:${n.port}`))
      .sort()
      .join(",");

  const waitHealthy = async (replicas = replicaCount, timeoutMs = 30_000) => {
    await waitFor(
      async () => {
        try {
          let agreed: string | undefined;
          for (const port of live()) {
            const info = String(await node(port).call("CLUSTER", "INFO"));
            if (!info.includes("cluster_state:ok")) return false;
            const nodes = await viewFrom(port);
            const map = slotMap(nodes);
            if (agreed !== undefined && map !== agreed) return false;
            agreed = map;
            const masters = nodes.filter((n) => n.role === "master" && n.slots.length > 0);
            if (masters.some((m) => m.failing || down.has(m.port))) return false;
            let served = 0;
            for (const m of masters) for (const [a, b] of m.slots) served += b - a + 1;
            if (served !== 16_384) return false;
            if (replicas > 0) {
              for (const m of masters) {
                const repl = String(await node(m.port).info("replication"));
                const online = repl.match(/^slave\d+:.*state=online/gm)?.length ?? 0;
                if (online < replicas) return false;
              }
            }
          }
          return true;
        } catch {
          return false;
        }
      },
      "a healthy cluster",
      timeoutMs,
    );
  };

  const replOffset = async (port: number) => {
    const info = String(await node(port).info("replication"));
    // A replica's master_repl_offset is what it has applied of its master's stream.
    return Number(/^master_repl_offset:(\d+)/m.exec(info)?.[1] ?? -1);
  };

  const offsets = async (masterPort: number, replicaPort: number) => ({
    master: await replOffset(masterPort),
    replica: await replOffset(replicaPort),
  });

  const waitReplicated = async (masterPort: number, timeoutMs = 10_000) => {
    await waitFor(
      async () => {
        const replicas = await replicasOf(masterPort);
        // all of its replicas back online (after a link cut), then caught up
        if (replicas.length < replicaCount) return false;
        const target = await replOffset(masterPort);
        for (const r of replicas) if ((await replOffset(r)) < target) return false;
        return true;
      },
      `the replicas of ${masterPort} online and caught up`,
      timeoutMs,
    );
  };

  const kill = async (port: number) => {
    down.add(port);
    clients.get(port)?.disconnect();
    clients.delete(port);
    await servers.get(port)?.kill();
  };

  const restart = async (port: number) => {
    await servers.get(port)?.restart();
    down.delete(port);
  };

  const isMasterEverywhere = async (port: number, slot?: number) => {
    for (const p of live()) {
      const nodes = await viewFrom(p);
      const me = nodes.find((n) => n.port === port);
      if (me?.role !== "master") return false;
      if (slot !== undefined && ownerIn(nodes, slot)?.port !== port) return false;
    }
    return true;
  };

  const failover = async (replicaPort: number, timeoutMs = 20_000) => {
    await node(replicaPort).call("CLUSTER", "FAILOVER");
    await waitFor(
      () => isMasterEverywhere(replicaPort).catch(() => false),
      `${replicaPort} promoted by CLUSTER FAILOVER`,
      timeoutMs,
    );
  };

  const waitPromoted = async (replicaPort: number, slot: number, timeoutMs = 30_000) => {
    await waitFor(
      () => isMasterEverywhere(replicaPort, slot).catch(() => false),
      `${replicaPort} promoted to serve slot ${slot}`,
      timeoutMs,
    );
  };

  const cutReplication = async (masterPort: number) => {
    const master = node(masterPort);
    await master.call("ACL", "SETUSER", REPL_USER, "off");
    await master.call("CLIENT", "KILL", "USER", REPL_USER);
  };

  const restoreReplication = async (masterPort: number) => {
    await node(masterPort).call("ACL", "SETUSER", REPL_USER, "on");
  };

  const migrateSlot = async (slot: number, toPort: number, onMigrating?: () => Promise<void>) => {
    const fromPort = await masterOf(slot);
    const nodes = await view();
    const idOf = (port: number) => {
      const id = nodes.find((n) => n.port === port)?.id;
      if (id === undefined) throw new Error(`no node on port ${port}`);
      return id;
    };
    const [from, to] = [node(fromPort), node(toPort)];
    await to.call("CLUSTER", "SETSLOT", slot, "IMPORTING", idOf(fromPort));
    await from.call("CLUSTER", "SETSLOT", slot, "MIGRATING", idOf(toPort));
    await onMigrating?.();
    for (;;) {
      const keys = (await from.call("CLUSTER", "GETKEYSINSLOT", slot, 100)) as string[];
      if (keys.length === 0) break;
      await from.call("MIGRATE", "127.0.0.1", toPort, "", 0, 10_000, "KEYS", ...keys);
    }
    // The new owner first, then the old one (which then redirects), then the others.
    await to.call("CLUSTER", "SETSLOT", slot, "NODE", idOf(toPort));
    await from.call("CLUSTER", "SETSLOT", slot, "NODE", idOf(toPort));
    for (const n of nodes) {
      if (n.role !== "master" || n.port === fromPort || n.port === toPort || down.has(n.port)) {
        continue;
      }
      await node(n.port).call("CLUSTER", "SETSLOT", slot, "NODE", idOf(toPort));
    }
  };

  try {
    await run(REDIS_CLI, [
      "--cluster",
      "create",
      ...ports.map((p) => `127.0.0.1:${p}`),
      "--cluster-replicas",
      String(replicaCount),
      "--cluster-yes",
    ]);
    await waitHealthy();
  } catch (error) {
    await stopAll();
    throw error;
  }

  return {
    ports,
    startup: ports.map((port) => ({ host: "127.0.0.1", port })),
    node,
    view,
    keySlot,
    masterOf,
    replicasOf,
    waitHealthy,
    waitReplicated,
    offsets,
    kill,
    restart,
    failover,
    waitPromoted,
    cutReplication,
    restoreReplication,
    migrateSlot,
    stop: stopAll,
  };
}
