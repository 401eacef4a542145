import {
  type Adapter,
  type AdapterEvent,
  type Capabilities,
  ClosedError,
  ConfigError,
  count,
  type FlowItem,
  type FlowPutResult,
  fullCapabilities,
  isLifecycleEvent,
  type JobFinishedEvent,
  type JobRef,
  type LaneStoreOptions,
  LIFECYCLE_EVENT_TYPES,
  NO_OPERATOR_CAPABILITIES,
  parseOptions,
  type SubscribeOptions,
  settingsObject,
  validateLaneStoreOptions,
  type WorkerInfo,
  type WorkerRegistration,
  wholeTimerMs,
} from "@tasklane/core/adapter";
import { Cluster, type ClusterNode, type ClusterOptions, Redis, type RedisOptions } from "ioredis";
import { z } from "zod";
import { type AdapterShared, type Client, MAX_BATCH } from "./adapter-shared.ts";
import type { Durability } from "./durability.ts";
import { isUnknownCommand, mapRedisError, RedisUnavailableError } from "./errors.ts";
import { createRedisFlows } from "./flows.ts";
import { decodeId } from "./id-codec.ts";
import { checkName, eventsChannel, registryKeys } from "./keys.ts";
import { RedisLane } from "./redis-lane.ts";
import {
  LIBRARY,
  loadLibrary,
  masters,
  runCall,
  SCRIPTS,
  ScriptCall,
  type ScriptingMode,
  type ScriptName,
} from "./scripts.ts";

export interface RedisAdapterOptions {
  /**
   * An ioredis client (`Redis` or `Cluster`) to use for commands. The adapter never closes
   * it; it duplicates it (same options: TLS, ACL user) for its blocking and pub/sub
   * connections, which it does close. Default: none (the adapter connects itself).
   */
  client?: Redis | Cluster;
  /**
   * Where to connect when no `client` is given: a `redis://` / `rediss://` URL or ioredis
   * options (host, port, username, password, tls, ... pass through unchanged).
   * Default `{ host: "127.0.0.1", port: 6379 }`. `undefined` means the default, so
   * `connection: process.env.REDIS_URL` compiles under `exactOptionalPropertyTypes`.
   */
  connection?: string | RedisOptions | undefined;
  /**
   * Connect to a Redis Cluster instead (when no `client` is given): startup nodes and
   * ioredis Cluster options. Default: none.
   */
  cluster?: { nodes: ClusterNode[]; options?: ClusterOptions };
  /**
   * Prefix of every key and of the events channel. Keys are
   * `<prefix>:{<prefix>:<lane>}:<x>`; an ACL rule `~<prefix>:*` (and `&<prefix>:*` for
   * events) covers them. Must not contain `{` or `}`. Default "tasklane" (also for
   * `undefined`, e.g. an unset environment variable).
   */
  prefix?: string | undefined;
  /**
   * Run even when the server's `maxmemory-policy` is not `noeviction`. Redis may then
   * evict job records and lose jobs silently. Default false: `lane()` throws ConfigError.
   */
  allowEviction?: boolean;
  /**
   * Publish a `put` event (pub/sub) for every created job. Costs one PUBLISH per put
   * batch and a message to every subscriber. Default false (`canceled` events are always
   * published).
   */
  putEvents?: boolean;
  /**
   * Publish lifecycle events (pub/sub, on the events channel) for every job this adapter's
   * scripts move: every type of core's LIFECYCLE_EVENT_TYPES (`published`, `started`,
   * `succeeded`, `retrying`, `failed`, `stalled`, `released`, `retried`, `deleted`,
   * `expired` and `progress`; not `moved`, which these scripts do not have yet), and
   * `canceled` for waiting and delayed jobs too. Turn it on in the processes that publish,
   * run and manage jobs; any process's `subscribe()` (or `tl.subscribe()`) then sees them.
   * Costs one PUBLISH per kind of event per script call (a JSON list of the call's ids)
   * and a message to every subscriber, workers included.
   * Default false (capability `lifecycleEvents` false).
   */
  lifecycleEvents?: boolean;
  /**
   * Longest single block of an idle worker on its lane's wake-up key, ms. A long poll
   * re-checks the lane at least this often (a safety net for a lost wake-up, e.g. across
   * a server restart); delayed jobs and lease expiries shorten it. Default 5_000.
   */
  maxBlockMs?: number;
  /**
   * How the Lua scripts run. "functions": one function library (FUNCTION LOAD at start on
   * every master, FCALL by name; Redis 7+, Valkey), whose helpers are created once instead
   * of on every call, so each call costs redis-server fewer instructions (DESIGN.md, "A
   * function library"). "eval": EVALSHA of each script (Redis
   * 6.2; or to keep the server's persisted function libraries untouched). "auto" takes
   * functions, and EVAL where FUNCTION LOAD is unknown (6.2) or refused (an ACL without
   * `FUNCTION`). Default "auto".
   */
  scripting?: "auto" | ScriptingMode;
  /**
   * Timeout of every non-blocking command on the connections the adapter creates, ms.
   * Ignored for an injected `client`. Default 10_000.
   */
  commandTimeoutMs?: number;
  /**
   * Durable puts: after every put call, wait until `replicas` replicas acknowledged it
   * (`WAIT`), or with `aof: true` until the master and `replicas` replicas fsynced it to
   * their append-only files (`WAITAOF`: Redis 7.2+, Valkey; the adapter refuses to start
   * on a server without it, and the master needs `appendonly yes`). A put whose replicas
   * do not answer within `timeoutMs` throws RedisReplicationError: its jobs are on the
   * master, but a failover now may lose them. Puts then go over a connection of their own
   * (WAIT blocks the connection it runs on). Costs a replication round trip per put call
   * (README, Redis Cluster). Default: off (a put returns once the master has it; Redis
   * replicates asynchronously).
   */
  durability?: DurabilityOptions;
}

/** The `durability` option. */
export interface DurabilityOptions {
  /** Replicas that must have each put. Default 1; 0 only with `aof` (the master's fsync). */
  replicas?: number;
  /** How long a put waits for them, ms. Default 1_000. */
  timeoutMs?: number;
  /** Wait for fsyncs (WAITAOF) rather than acknowledgements (WAIT). Default false. */
  aof?: boolean;
}

/** The Redis adapter: every optional method is present. */
export interface RedisAdapter extends Adapter {
  lane(name: string, options: LaneStoreOptions): Promise<RedisLane>;
  subscribe(
    listener: (event: AdapterEvent) => void,
    options?: SubscribeOptions,
  ): Promise<() => Promise<void>>;
  watch(jobs: JobRef[], listener: (event: JobFinishedEvent) => void): Promise<() => Promise<void>>;
  registerWorker(worker: WorkerRegistration, ttlMs: number): Promise<void>;
  deregisterWorker(id: string): Promise<void>;
  workers(): Promise<WorkerInfo[]>;
  putFlow(items: FlowItem[]): Promise<FlowPutResult>;
}

/**
 * How long one watch of a lane makes its scripts publish every finish (lua/watch.lua),
 * and how often a watching process renews it: a watcher that dies stops costing the
 * lane's scripts a PUBLISH per finishing call within WATCH_TTL_MS.
 */
const WATCH_TTL_MS = 60_000;
const WATCH_RENEW_MS = 20_000;

/** The event types that end a watched job's wait, and the state each reports. */
const FINISHED_STATES: ReadonlyMap<string, JobFinishedEvent["state"]> = new Map([
  ["succeeded", "succeeded"],
  ["failed", "failed"],
  ["canceled", "canceled"],
  ["expired", "expired"],
  ["deleted", "deleted"],
] as const);

/** The event types the scripts publish (see AdapterEvent); anything else is not ours. */
const EVENT_TYPES: ReadonlySet<string> = new Set<AdapterEvent["type"]>([
  "canceled",
  "put",
  ...LIFECYCLE_EVENT_TYPES,
]);

/** 100 years: effectively unbounded, still exact in epoch-ms doubles. */
const LONG_MS = 100 * 365 * 86_400_000;

/**
 * Everything the contract describes. Of the operator features, those the scripts have
 * (README, Capabilities); the rest explicitly off until the scripts implement them
 * against the conformance suite's operator tests, which skip them through these
 * capabilities.
 */
export const redisCapabilities: Readonly<Capabilities> = Object.freeze({
  ...fullCapabilities({
    maxBatch: MAX_BATCH,
    maxDelayMs: LONG_MS,
    maxLeaseMs: LONG_MS,
    maxWaitMs: 2_147_483_647,
    timeResolutionMs: 1,
  }),
  ...NO_OPERATOR_CAPABILITIES,
  results: true,
  waitFor: true,
  expiry: true,
  changePriority: true,
  promote: true,
  workers: true,
  reports: true,
  move: true,
  // In each lane's slot, fired by lua/fire.lua: a compare-and-set and a put in one script.
  schedules: true,
  // release with runAt (lua/release.lua): a job handed back delayed, its attempt not spent.
  retryAfter: true,
  // The tag and failure indexes (TAGS, FAILURE GROUPS in lua/_common.lua), lua/search.lua.
  tags: true,
  search: true,
  failureGroups: true,
  // Fair groups: round-robin and per-group concurrency in reserve (FAIR GROUPS in
  // lua/_common.lua).
  groups: true,
  // Each group's own rate limit: a log of starts per group (GROUP WINDOWS in
  // lua/_common.lua), decided in reserve.
  groupRateLimit: true,
  // putFlow in crash-safe steps, one script per lane's slot (flows.ts, FLOWS in
  // lua/_common.lua).
  flows: true,
});

interface BlockingConn {
  client: Client;
  /** CLIENT ID on a single server (refreshed on reconnect), for CLIENT UNBLOCK. */
  id: number | undefined;
  busy: boolean;
}

/** An ioredis client, by shape (a second copy of ioredis would fail `instanceof`). */
const clientSchema = z.custom<Redis | Cluster>(
  (v) =>
    typeof v === "object" &&
    v !== null &&
    typeof (v as Redis).sendCommand === "function" &&
    typeof (v as Redis).duplicate === "function",
  "must be an ioredis Redis or Cluster client",
);

/** A Cluster startup node as ioredis takes it: a port, "host:port", or { host, port }. */
const clusterNodeSchema = z.union(
  [
    z.string().min(1),
    z.number().int().min(1).max(65_535),
    z.object({ host: z.string().optional(), port: z.number().int().min(1).max(65_535).optional() }),
  ],
  'must be a port, a "host:port" string or { host, port }',
);

/** `createRedisAdapter`'s options: a ConfigError names a bad field and its value. */
export const redisAdapterOptionsSchema = z
  .object({
    client: clientSchema.optional(),
    connection: z
      .union(
        [
          // ioredis parses the text (redis:// and rediss:// URLs, "host:port", a socket path)
          z.string().min(1),
          settingsObject<RedisOptions>("ioredis options"),
        ],
        "must be a redis:// or rediss:// URL, or ioredis options",
      )
      .optional(),
    cluster: z
      .object({
        nodes: z
          .array(clusterNodeSchema, "must be an array of startup nodes")
          .min(1, "must name at least one startup node"),
        options: settingsObject<ClusterOptions>("ioredis Cluster options").optional(),
      })
      .strict()
      .optional(),
    prefix: z
      .string()
      .min(1, "must be a non-empty string")
      .regex(/^[^{}]*$/, "must not contain { or } (they delimit the hash tag)")
      .optional(),
    allowEviction: z.boolean().optional(),
    putEvents: z.boolean().optional(),
    lifecycleEvents: z.boolean().optional(),
    maxBlockMs: wholeTimerMs(1).optional(),
    scripting: z
      .enum(["auto", "functions", "eval"], 'must be "auto", "functions" or "eval"')
      .optional(),
    commandTimeoutMs: wholeTimerMs(1).optional(),
    durability: z
      .object({
        replicas: count(0).optional(),
        timeoutMs: wholeTimerMs(1).optional(),
        aof: z.boolean().optional(),
      })
      .strict()
      .refine((d) => d.aof === true || d.replicas !== 0, {
        path: ["replicas"],
        message: "must be >= 1 (0 waits for nothing), unless aof is true",
      })
      .optional(),
  })
  .strict();

/** Where the adapter connects: one of client, connection and cluster, or none (the default). */
const CONNECTION_OPTIONS = ["client", "connection", "cluster"] as const;

/**
 * The Redis adapter: Lua-atomic state changes, one slot per lane (Redis Cluster), fenced
 * leases on Redis TIME, idle workers blocked on a wake-up key, cross-process events.
 *
 * @example
 * const adapter = createRedisAdapter({ connection: "redis://127.0.0.1:6379" });
 * const tl = createTasklane({ adapter, lanes: [...], tasks: [...] });
 */
export function createRedisAdapter(input: RedisAdapterOptions = {}): RedisAdapter {
  if (typeof input !== "object" || input === null) {
    throw new ConfigError("options", input, "must be an object");
  }
  const options = parseOptions(redisAdapterOptionsSchema, input, "");
  const given = CONNECTION_OPTIONS.filter((k) => options[k] !== undefined);
  if (given.length > 1) {
    const second = given[1] as (typeof CONNECTION_OPTIONS)[number];
    throw new ConfigError(
      second,
      options[second],
      `give one of client, connection and cluster, not ${given.join(" and ")}`,
    );
  }
  const prefix = checkName("prefix", options.prefix ?? "tasklane");
  const maxBlockMs = options.maxBlockMs ?? 5_000;
  const commandTimeoutMs = options.commandTimeoutMs ?? 10_000;
  const channel = eventsChannel(prefix);
  const scripting = options.scripting ?? "auto";
  const durability: Durability | undefined =
    options.durability === undefined
      ? undefined
      : {
          replicas: options.durability.replicas ?? 1,
          timeoutMs: options.durability.timeoutMs ?? 1_000,
          aof: options.durability.aof === true,
        };

  const owned = options.client === undefined;
  let client: Client;
  if (options.client !== undefined) {
    client = options.client;
  } else if (options.cluster !== undefined) {
    const given = options.cluster.options ?? {};
    client = new Cluster(options.cluster.nodes, {
      // See below: auto-pipelining costs more than it saves here.
      enableAutoPipelining: false,
      // A call whose node connection closed is not sent again after a pause (ioredis:
      // 100 ms, with a slot map refresh, up to maxRedirections times): it fails at once.
      // A dead master's lanes cannot be served until a replica takes over
      // (cluster-node-timeout, seconds), which no client retry rides out, and each retry
      // meets the dead node again through a MOVED: with ioredis's default such a call
      // failed after ~1.2 s (a worker's loop waiting on it), now within milliseconds. The
      // caller retries (the worker sets the lane aside and probes it; a settling call is
      // retried within its lease). TRYAGAIN (a slot migrating) and CLUSTERDOWN (the
      // cluster-wide pause while a failover elects a replica) are still retried every
      // 100 ms, for up to ~1.6 s: they pass by themselves. README, Redis Cluster.
      retryDelayOnFailover: 0,
      ...given,
      redisOptions: {
        maxRetriesPerRequest: 1,
        commandTimeout: commandTimeoutMs,
        ...given.redisOptions,
      },
    });
  } else {
    const base: RedisOptions = {
      maxRetriesPerRequest: 1,
      commandTimeout: commandTimeoutMs,
      // Off: every call is already a batch (one script per batch), and auto-pipelining
      // holds each command back until the event loop turns (setImmediate), which kept
      // reserves from overlapping running jobs and added a loop turn to every single
      // publish (the adapter's README gives the measured cost).
      enableAutoPipelining: false,
    };
    const conn = options.connection;
    client =
      typeof conn === "string"
        ? new Redis(conn, base)
        : new Redis({ host: "127.0.0.1", port: 6379, ...base, ...conn });
  }
  /**
   * An owned client's last connection error since it was last ready. Connection errors are
   * reported through failing calls, not as unhandled 'error' events, and ioredis gives up
   * on a call with "Reached the max retries per request limit": the reason (refused, a
   * certificate it could not verify, a name that does not resolve) is only in the error
   * events, so failures name it.
   */
  let lastConnectionError: Error | undefined;
  if (owned) {
    client.on("error", (error: unknown) => {
      if (error instanceof Error) lastConnectionError = error;
    });
    client.on("ready", () => {
      lastConnectionError = undefined;
    });
  }

  const isCluster = client instanceof Cluster;
  const blocking: BlockingConn[] = [];
  const pendingWaits = new Set<() => void>();
  /**
   * Script calls and follow-up replies not settled yet: close() waits for them before it
   * drops the connections (a put whose NOSCRIPT recovery is still to come, a follow-up
   * whose jobs must be handed back).
   */
  const inFlight = new Set<Promise<unknown>>();
  const track = (promise: Promise<unknown>) => {
    const settled: Promise<unknown> = promise.then(
      () => inFlight.delete(settled),
      () => inFlight.delete(settled),
    );
    inFlight.add(settled);
  };
  /** Each listener, and whether it wants lifecycle events (see SubscribeOptions). */
  const listeners = new Map<(event: AdapterEvent) => void, boolean>();
  let subscriber: Client | undefined;
  let subscribing: Promise<void> | undefined;
  const lanes = new Map<string, RedisLane>();
  /** Watched jobs ("<lane>\n<id>") and their listeners (see watch). */
  const watchers = new Map<string, Set<(event: JobFinishedEvent) => void>>();
  /** Lanes watched now: how many watches hold each, and the renewal of its watch flag. */
  const watchedLanes = new Map<
    string,
    { holders: number; ready: Promise<void>; timer: ReturnType<typeof setInterval> }
  >();

  const duplicate = (): Client => {
    const dup = isCluster
      ? (client as Cluster).duplicate([], {
          redisOptions: {
            ...(client as Cluster).options.redisOptions,
            maxRetriesPerRequest: null,
            commandTimeout: undefined,
          },
        } as unknown as ClusterOptions)
      : (client as Redis).duplicate({
          maxRetriesPerRequest: null,
          commandTimeout: undefined,
          enableOfflineQueue: true,
          enableAutoPipelining: false,
          lazyConnect: false,
        } as unknown as Partial<RedisOptions>);
    dup.on("error", () => {});
    return dup;
  };

  /**
   * Durable puts' connection (see durability.ts): a command connection like the first,
   * whose timeout leaves room for the WAIT that follows each put.
   */
  const durableClient = (d: Durability): Client => {
    const base = (client.options as { commandTimeout?: number }).commandTimeout;
    const commandTimeout = base === undefined ? undefined : base + d.timeoutMs;
    const dup = isCluster
      ? (client as Cluster).duplicate([], {
          redisOptions: { ...(client as Cluster).options.redisOptions, commandTimeout },
        } as ClusterOptions)
      : (client as Redis).duplicate({ commandTimeout } as Partial<RedisOptions>);
    dup.on("error", () => {});
    return dup;
  };

  const shared: AdapterShared = {
    client,
    scripting: "eval",
    prefix,
    channel,
    putEvents: options.putEvents === true,
    lifecycleEvents: options.lifecycleEvents === true,
    maxBlockMs,
    durable:
      durability === undefined ? undefined : { client: durableClient(durability), durability },
    closed: false,
    closes: 0,
    check(what) {
      if (shared.closed) throw new ClosedError(what);
      const status = client.status;
      if (status !== "ready" && status !== "wait" && status !== "connect") {
        // Publishing during an outage fails at once instead of queueing behind reconnects.
        const last = lastConnectionError;
        throw new RedisUnavailableError(
          what,
          `connection is ${status}${last ? `; last error: ${last.message}` : ""}`,
          last ? { cause: last } : undefined,
        );
      }
    },
    track,
    drainOutbox: (name) => flows.drainOutbox(name),
    openLane(name, laneOptions) {
      let lane = lanes.get(name);
      if (lane === undefined) {
        lane = new RedisLane(name, laneOptions, shared);
        lanes.set(name, lane);
      }
      return lane;
    },
    waitForWake(key, ms, signal, next, dueInMs) {
      if (shared.closed || signal?.aborted) return Promise.resolve(undefined);
      let conn = blocking.find((c) => !c.busy);
      if (conn === undefined) {
        const c: BlockingConn = { client: duplicate(), id: undefined, busy: false };
        if (!isCluster) {
          const refresh = () => {
            (c.client as Redis).client("ID").then(
              (id) => {
                c.id = Number(id);
              },
              () => {},
            );
          };
          c.client.on("ready", refresh);
        }
        blocking.push(c);
        conn = c;
      }
      const c = conn;
      c.busy = true;
      return new Promise<unknown>((resolve) => {
        let settled = false;
        let dueTimer: ReturnType<typeof setTimeout> | undefined;
        const finish = (value: unknown) => {
          if (settled) return;
          settled = true;
          if (dueTimer !== undefined) clearTimeout(dueTimer);
          signal?.removeEventListener("abort", onAbort);
          pendingWaits.delete(onAbort);
          resolve(value);
        };
        const nudge = () => {
          // Wakes the longest-blocked waiter on this lane: ours when it is the only one;
          // another process's wakes spuriously (harmless), ours then ends within maxBlockMs.
          client.lpush(key, "1").catch(() => {});
        };
        // End the block now: CLIENT UNBLOCK on a single server; on Cluster (no per-node
        // client id at hand) or when the ACL refuses it, a wake-up marker.
        const unblock = () => {
          if (c.id !== undefined) {
            (client as Redis).client("UNBLOCK", c.id).catch(nudge);
          } else {
            nudge();
          }
        };
        const onAbort = () => {
          finish(undefined);
          // Free the connection at once, also on close: the follow-up's reply must come
          // back (close() waits for it).
          unblock();
        };
        signal?.addEventListener("abort", onAbort, { once: true });
        // BLPOP's own timeout ends a block on redis-server's next clock tick, up to 100 ms
        // late at the default hz 10: a job due at the end of a poll, or just after it, would
        // start that late. On a single server the block is ended from here, on time (CLIENT
        // UNBLOCK); elsewhere only for a job falling due, with a marker (which may wake
        // another process's waiter instead: one that takes the job is as good).
        const endMs = c.id !== undefined ? Math.min(ms, dueInMs ?? ms) : dueInMs;
        if (endMs !== undefined && endMs <= ms) {
          // The reserve behind the block runs when it ends, and its reply is ours.
          dueTimer = setTimeout(() => {
            dueTimer = undefined;
            if (!settled) unblock();
          }, endMs);
          dueTimer.unref?.();
        }
        pendingWaits.add(onAbort);
        const seconds = Math.max(0.001, Math.ceil(ms) / 1000).toFixed(3);
        // The BLPOP and the call behind it leave in one write (one syscall here, one read
        // in redis-server) instead of two: this runs once per job on the latency path. Only
        // a single-node client that is ready writes each command at once, synchronously;
        // a Cluster picks a node per command, and a client that is not ready queues them.
        const stream =
          !isCluster && c.client.status === "ready" ? (c.client as Redis).stream : undefined;
        stream?.cork();
        let following: Promise<void>;
        try {
          c.client.blpop(key, seconds).then(
            (popped) => {
              // A marker taken by a wait nobody listens to any more is handed on.
              if (popped && settled && !shared.closed) client.lpush(key, "1").catch(() => {});
            },
            () => {},
          );
          // Sent now, behind the BLPOP on the same connection: it runs when the block ends.
          following = next.send(c.client).then(
            async (reply) => {
              c.busy = false;
              if (!settled) finish(reply);
              else await next.orphan(reply);
            },
            () => {
              c.busy = false;
              finish(undefined);
            },
          );
        } finally {
          stream?.uncork();
        }
        track(following);
      });
    },
  };
  const flows = createRedisFlows(shared, lanes);

  // Counted for the lanes' settling calls (see AdapterShared.closes). Cluster emits "close"
  // for the whole cluster only, so there it counts less than every node's drop.
  client.on("close", () => {
    shared.closes++;
  });

  const init = (async () => {
    try {
      if (client.status === "wait") await client.connect();
      await client.ping();
      if (options.allowEviction !== true) await checkEvictionPolicy(client);
      if (durability?.aof) await checkWaitAof(client);
      shared.scripting = await loadCode(client, scripting);
    } catch (error) {
      if (error instanceof ConfigError) throw error;
      const mapped = mapRedisError("connecting", error);
      const last = lastConnectionError;
      if (mapped instanceof RedisUnavailableError && last !== undefined && last !== error) {
        throw new RedisUnavailableError("connecting", last.message, { cause: last });
      }
      throw mapped;
    }
  })();
  // Reported by lane()/subscribe(); never an unhandled rejection.
  init.catch(() => {});

  const checkOpen = () => {
    if (shared.closed) throw new ClosedError("redis adapter");
  };

  /** The worker registry's script (lua/workers.lua): its own keys, no lane's options. */
  const registry = new ScriptCall(SCRIPTS.workers, registryKeys(prefix), [
    "",
    "0",
    "0",
    "0",
    "",
    "",
  ]);
  const registryCall = async (what: string, args: string[]): Promise<unknown> => {
    checkOpen();
    await init;
    shared.check("redis worker registry");
    const call = runCall(client, registry, args, what, shared.scripting);
    track(call);
    return call;
  };

  const dispatch = (_channel: string, message: string) => {
    let parsed: { t?: unknown; q?: unknown; ids?: unknown; to?: unknown };
    try {
      parsed = JSON.parse(message);
    } catch {
      return; // not ours
    }
    const type = parsed.t;
    if (typeof type !== "string" || !EVENT_TYPES.has(type) || typeof parsed.q !== "string") {
      return;
    }
    if (!Array.isArray(parsed.ids)) return;
    const toLane = type === "put" && typeof parsed.to === "string" ? parsed.to : undefined;
    // a job moved out of the lane (a put event naming its target) ends a watch there
    const finished =
      watchers.size > 0 ? (toLane !== undefined ? "moved" : FINISHED_STATES.get(type)) : undefined;
    for (const id of parsed.ids) {
      if (typeof id !== "string") continue;
      const event = { type, lane: parsed.q, jobId: decodeId(id) } as AdapterEvent;
      if (toLane !== undefined) (event as { toLane?: string }).toLane = toLane;
      if (finished !== undefined) {
        const watching = watchers.get(`${event.lane}\n${event.jobId}`);
        if (watching !== undefined) {
          const done: JobFinishedEvent = { lane: event.lane, jobId: event.jobId, state: finished };
          for (const listener of [...watching]) {
            try {
              listener(done);
            } catch {
              // a failing watcher must not break the others
            }
          }
        }
      }
      // Workers subscribe without lifecycle events: they get canceled and put only.
      const lifecycle = isLifecycleEvent(event);
      for (const [listener, wantsLifecycle] of listeners) {
        if (lifecycle && !wantsLifecycle) continue;
        try {
          listener(event);
        } catch {
          // one failing listener must not starve the others
        }
      }
    }
  };

  const ensureSubscribed = async (): Promise<void> => {
    if (subscriber === undefined) {
      const sub = duplicate();
      subscriber = sub;
      sub.on("message", dispatch);
      subscribing = sub.subscribe(channel).then(
        () => {},
        (error: unknown) => {
          subscriber = undefined;
          subscribing = undefined;
          sub.disconnect();
          throw mapRedisError("subscribing to events", error);
        },
      );
    }
    await subscribing;
  };

  /** A lane's scripts set (or kept) publishing every finish; renewed while it is watched. */
  const watchLane = (name: string): Promise<void> => {
    const held = watchedLanes.get(name);
    if (held !== undefined) {
      held.holders++;
      return held.ready;
    }
    // A lane this adapter has not opened: the watch script reads no lane option.
    const lane = lanes.get(name) ?? new RedisLane(name, { maxStalls: 0, historyLimit: 0 }, shared);
    const renew = () => lane.watchFor(WATCH_TTL_MS);
    const timer = setInterval(() => {
      renew().catch(() => {
        // The next renewal tries again; a waiter polls meanwhile (core's WAIT_POLL_MS).
      });
    }, WATCH_RENEW_MS);
    timer.unref?.();
    const entry = { holders: 1, ready: renew(), timer };
    watchedLanes.set(name, entry);
    entry.ready.catch(() => {
      if (watchedLanes.get(name) === entry) {
        clearInterval(timer);
        watchedLanes.delete(name);
      }
    });
    return entry.ready;
  };

  const unwatchLane = (name: string): void => {
    const held = watchedLanes.get(name);
    if (held === undefined) return;
    held.holders--;
    if (held.holders > 0) return;
    // The flag lapses by itself (WATCH_TTL_MS): other processes may watch the lane too.
    clearInterval(held.timer);
    watchedLanes.delete(name);
  };

  return {
    name: "redis",
    capabilities: shared.lifecycleEvents
      ? redisCapabilities
      : Object.freeze({ ...redisCapabilities, lifecycleEvents: false }),

    async lane(name, laneOptions) {
      checkOpen();
      checkName("name", name);
      validateLaneStoreOptions(laneOptions);
      await init;
      checkOpen();
      let lane = lanes.get(name);
      if (lane === undefined) {
        lane = new RedisLane(name, laneOptions, shared);
        lanes.set(name, lane);
      } else {
        lane.configure(laneOptions);
      }
      return lane;
    },

    async registerWorker(worker, ttlMs) {
      if (!(Number.isFinite(ttlMs) && ttlMs > 0)) {
        throw new ConfigError("ttlMs", ttlMs, "must be a finite number of ms > 0");
      }
      await registryCall("registering a worker", [
        "register",
        worker.id,
        JSON.stringify(worker),
        String(Math.ceil(ttlMs)),
      ]);
    },

    async putFlow(items) {
      checkOpen();
      await init;
      return flows.putFlow(items);
    },

    async deregisterWorker(id) {
      await registryCall("deregistering a worker", ["deregister", id]);
    },

    async workers() {
      const reply = (await registryCall("listing workers", ["list"])) as string[];
      const out: WorkerInfo[] = [];
      for (let i = 0; i + 2 < reply.length; i += 3) {
        const text = String(reply[i + 1]);
        const space = text.indexOf(" ");
        try {
          const registration = JSON.parse(text.slice(space + 1)) as WorkerRegistration;
          out.push({
            ...registration,
            lastHeartbeatAt: Number(text.slice(0, space)),
            expiresAt: Number(reply[i + 2]),
          });
        } catch {
          // not an entry tasklane wrote: left out
        }
      }
      return out.sort((a, b) => a.startedAt - b.startedAt || (a.id < b.id ? -1 : 1));
    },

    async subscribe(listener, options) {
      checkOpen();
      await init;
      await ensureSubscribed();
      const wrapped = (event: AdapterEvent) => listener(event);
      listeners.set(wrapped, options?.lifecycle !== false);
      return async () => {
        listeners.delete(wrapped);
      };
    },

    /**
     * Subscribed first, then each lane's watch flag set (lua/watch.lua): from then on
     * every finish of the lane's jobs is published, lifecycle events on or off, so a
     * waiter that reads the job after this resolves misses none.
     */
    async watch(jobs, listener) {
      checkOpen();
      await init;
      await ensureSubscribed();
      const keys = [...new Set(jobs.map((j) => `${j.lane}\n${j.jobId}`))];
      const wrapped = (event: JobFinishedEvent) => listener(event);
      for (const key of keys) {
        let set = watchers.get(key);
        if (set === undefined) {
          set = new Set();
          watchers.set(key, set);
        }
        set.add(wrapped);
      }
      const laneNames = [...new Set(jobs.map((j) => j.lane))];
      let stopped = false;
      const stop = async () => {
        if (stopped) return;
        stopped = true;
        for (const key of keys) {
          const set = watchers.get(key);
          set?.delete(wrapped);
          if (set?.size === 0) watchers.delete(key);
        }
        for (const name of laneNames) unwatchLane(name);
      };
      try {
        await Promise.all(laneNames.map((name) => watchLane(name)));
      } catch (error) {
        await stop();
        throw error;
      }
      return stop;
    },

    async close() {
      if (shared.closed) return;
      // Puts made in this tick still wait for its end (see RedisLane.put): send them now,
      // ahead of QUIT, so a put made before close() is carried out, not refused.
      for (const lane of lanes.values()) lane.sendQueuedPuts();
      shared.closed = true;
      listeners.clear();
      watchers.clear();
      for (const held of watchedLanes.values()) clearInterval(held.timer);
      watchedLanes.clear();
      for (const abort of [...pendingWaits]) abort();
      if (inFlight.size > 0) {
        let timer: ReturnType<typeof setTimeout> | undefined;
        await Promise.race([
          Promise.all([...inFlight]),
          new Promise((resolve) => {
            timer = setTimeout(resolve, 2_000);
          }),
        ]);
        clearTimeout(timer);
      }
      for (const c of blocking.splice(0)) c.client.disconnect();
      shared.durable?.client.disconnect();
      subscriber?.disconnect();
      subscriber = undefined;
      if (owned) {
        if (client.status === "ready") {
          // QUIT waits for replies in flight; bounded so a dying server cannot hang close.
          const quit = client.quit().catch(() => {});
          const timer = setTimeout(() => client.disconnect(), 1_000);
          await quit;
          clearTimeout(timer);
        }
        client.disconnect();
      }
    },
  };
}

/**
 * Load the scripts on every master at start, in the mode asked for (see
 * RedisAdapterOptions.scripting); returns the mode the adapter runs in.
 *
 * Functions: FUNCTION LOAD of the library. Under "auto", a server that does not know the
 * command (Redis 6.2) or an ACL that refuses it turns the adapter to EVAL ("functions"
 * fails to start instead). Any other failure (a node going away) is best effort, as a
 * missing function (FUNCTION FLUSH, a restart without persistence, a new node) is loaded
 * again by the call that meets it (runScript).
 *
 * EVAL: SCRIPT LOAD of every script, best effort: the first put, reserve or ack of a
 * process then runs by SHA at once instead of meeting NOSCRIPT and sending its source (a
 * second round trip, and a 1,000-job put's arguments twice). Where it fails (an ACL
 * without SCRIPT LOAD, a node going away) the NOSCRIPT path still covers each script.
 */
async function loadCode(client: Client, scripting: "auto" | ScriptingMode): Promise<ScriptingMode> {
  if (scripting !== "eval") {
    try {
      await loadLibrary(client);
      return "functions";
    } catch (error) {
      const refused =
        isUnknownCommand(error) || (error instanceof Error && /NOPERM/i.test(error.message));
      // Anything else (a node going away) is left to the call that meets a missing function.
      if (!refused) return "functions";
      if (scripting === "functions") {
        throw mapRedisError(`loading the function library ${LIBRARY.name}`, error);
      }
    }
  }
  // The operator features' scripts are loaded by their first call (NOSCRIPT, then EVAL):
  // every script loaded grows the server's Lua heap, which every EVAL call's garbage
  // collection walks (five more scripts cost a one-job put ~1.6% more instructions), so a
  // server whose lanes never use them does not carry them.
  const sources = Object.entries(SCRIPTS)
    .filter(([name]) => !OPERATOR_SCRIPTS.has(name as ScriptName))
    .map(([, script]) => script.source);
  await Promise.all(
    masters(client).flatMap((node) =>
      sources.map((source) => node.script("LOAD", source).catch(() => undefined)),
    ),
  );
  return "eval";
}

/** Scripts an EVAL-mode adapter does not load at start (see loadCode). */
const OPERATOR_SCRIPTS: ReadonlySet<ScriptName> = new Set<ScriptName>([
  "watch",
  "set-priority",
  "promote",
  "workers",
  "report",
  "move-out",
  "move-in",
  "move-done",
]);

/** durability.aof needs WAITAOF (Redis 7.2+, Valkey) on every master. */
async function checkWaitAof(client: Client): Promise<void> {
  for (const node of masters(client)) {
    let reply: unknown;
    try {
      reply = await node.call("COMMAND", "INFO", "WAITAOF");
    } catch {
      return; // COMMAND refused by the ACL: the first put will tell
    }
    if (!Array.isArray(reply) || reply[0] == null) {
      throw new ConfigError(
        "durability.aof",
        true,
        "the server has no WAITAOF (Redis 7.2+ and Valkey have it); use durability without aof (WAIT)",
      );
    }
  }
}

/** Refuse to run where Redis may evict keys (jobs would vanish). */
async function checkEvictionPolicy(client: Client): Promise<void> {
  const nodes = masters(client);
  for (const node of nodes) {
    let policy: string | undefined;
    try {
      const info = await node.info("memory");
      policy = /^maxmemory_policy:(\S+)/m.exec(info)?.[1];
    } catch {
      try {
        const reply = (await node.config("GET", "maxmemory-policy")) as string[];
        policy = reply[1];
      } catch (error) {
        throw new ConfigError(
          "allowEviction",
          false,
          `cannot read maxmemory-policy (${error instanceof Error ? error.message : String(error)}); allow INFO for this user or set allowEviction: true`,
        );
      }
    }
    if (policy !== undefined && policy !== "noeviction") {
      throw new ConfigError(
        "maxmemory-policy",
        policy,
        "Redis may evict job records and lose jobs; set it to noeviction or pass allowEviction: true",
      );
    }
  }
}
