/**
 * Redis and script errors mapped to tasklane errors: one table, first match wins.
 * Expected races are never errors (scripts return them as status codes).
 */
import { AdapterError, type TasklaneError } from "@tasklane/core/adapter";

/** Redis refused a write because it is at `maxmemory` (with `noeviction`). Nothing was written. */
export class RedisOutOfMemoryError extends AdapterError {
  readonly reason = "oom";
  constructor(what: string, options?: ErrorOptions) {
    super(
      "redis",
      `${what}: Redis is out of memory (maxmemory reached); nothing was written`,
      options,
    );
  }
}

/**
 * A transient failure: Redis is unreachable or the connection is not ready (failed fast,
 * nothing sent), a connection closed under a call (which may or may not have run), or on
 * a Cluster the lane's slot has no reachable, stable owner for now (a failover, a slot
 * migration, a node down: CLUSTERDOWN, TRYAGAIN, MOVED/ASK loops). The same call may
 * succeed later. The reply or connection error is in the message and in `cause`.
 */
export class RedisUnavailableError extends AdapterError {
  readonly reason = "unavailable";
  constructor(what: string, detail: string, options?: ErrorOptions) {
    super("redis", `${what}: Redis is unavailable (${detail})`, options);
  }
}

/**
 * A put with `durability` was written on the master, but fewer replicas than asked for
 * acknowledged it (WAIT) or fsynced it (WAITAOF) within the timeout: a failover now may
 * lose its jobs. They are on the master and will run unless that happens; publishing them
 * again with the same job ids is safe (duplicates are refused), with new ids it makes a
 * second job.
 */
export class RedisReplicationError extends AdapterError {
  readonly reason = "replication";
  /** Replicas that acknowledged (WAIT) or fsynced (WAITAOF) the write in time. */
  readonly replicas: number;
  /** With WAITAOF: whether the master fsynced it to its own append-only file. */
  readonly localFsync: boolean | undefined;
  constructor(
    what: string,
    detail: string,
    acknowledged: { replicas: number; localFsync?: boolean },
    options?: ErrorOptions,
  ) {
    super("redis", `${what}: written on the master, but ${detail}`, options);
    this.replicas = acknowledged.replicas;
    this.localFsync = acknowledged.localFsync;
  }
}

/** The ACL user may not run a command or touch a key the adapter needs. */
export class RedisPermissionError extends AdapterError {
  readonly reason = "noperm";
  constructor(what: string, detail: string, options?: ErrorOptions) {
    super("redis", `${what}: permission denied by the Redis ACL (${detail})`, options);
  }
}

type Mapper = (what: string, message: string, cause: unknown) => TasklaneError;

const unavailable: Mapper = (what, m, cause) => new RedisUnavailableError(what, m, { cause });

/**
 * Error text (prefix or pattern) → tasklane error. Script-raised errors start "TASKLANE_".
 * A Cluster client's wrapper ("Too many Cluster redirections. Last error: …") is matched
 * by the reply it carries (see mapRedisError).
 */
const ERROR_TABLE: ReadonlyArray<readonly [RegExp, Mapper]> = [
  [/^OOM\b/, (what, _m, cause) => new RedisOutOfMemoryError(what, { cause })],
  [/^NOPERM\b/, (what, m, cause) => new RedisPermissionError(what, m, { cause })],
  // A failover or slot migration in progress (Cluster), a server loading its data or a
  // replica refusing writes: transient, the same call succeeds later.
  [/^(CLUSTERDOWN|TRYAGAIN|LOADING|MASTERDOWN|READONLY)\b/, unavailable],
  [
    /Stream isn't writeable|Connection is closed|MaxRetriesPerRequest|ECONNREFUSED|ECONNRESET|ETIMEDOUT|EPIPE|Command timed out|not connected/i,
    unavailable,
  ],
  // ioredis's Cluster client: no node could give it the slot map, or none is reachable.
  [
    /Failed to refresh slots cache|None of startup nodes is available|Cluster isn't ready/,
    unavailable,
  ],
  [
    /^BUSY\b/,
    (what, m, cause) => new AdapterError("redis", `${what}: Redis is busy (${m})`, { cause }),
  ],
  [
    /TASKLANE_BAD_ARGUMENT/,
    (what, m, cause) => new AdapterError("redis", `${what}: bad argument (${m})`, { cause }),
  ],
];

/**
 * ioredis's Cluster client gives up on a command after `maxRedirections` tries with a
 * plain Error whose text ends with the last reply it met: a MOVED or ASK loop, TRYAGAIN
 * while a slot migrates, CLUSTERDOWN while a failover runs, a node's closed connection.
 */
const REDIRECTIONS = /^Too many Cluster redirections\. Last error: (?:[A-Za-z]*Error: )?/;

export function mapRedisError(what: string, error: unknown): TasklaneError {
  if (error instanceof AdapterError) return error;
  const message = error instanceof Error ? error.message : String(error);
  const wrapped = REDIRECTIONS.exec(message);
  // A wrapped reply maps as the reply would (an OOM or NOPERM met on the last try is
  // itself); the message keeps the whole text, and the cause is ioredis's error.
  const reply = wrapped ? message.slice(wrapped[0].length) : message;
  for (const [pattern, map] of ERROR_TABLE) {
    if (pattern.test(reply)) return map(what, message, error);
  }
  // Whatever else the last reply was (MOVED, ASK), the redirections ran out: the lane's
  // slot has no reachable, stable owner right now (a failover, a migration, a node down).
  if (wrapped) return unavailable(what, message, error);
  if (/^(MOVED|ASK)\b/.test(message)) {
    // Unwrapped, a redirection comes from a client that does not follow them: a plain
    // connection to a Cluster node. A configuration error, not a transient one.
    return new AdapterError(
      "redis",
      `${what}: ${message} (the server is a Redis Cluster node: use the adapter's cluster option, or an ioredis Cluster as client)`,
      { cause: error },
    );
  }
  return new AdapterError("redis", `${what}: ${message}`, { cause: error });
}

export function isNoScript(error: unknown): boolean {
  return error instanceof Error && error.message.startsWith("NOSCRIPT");
}

/** FCALL of a function the server does not have (FUNCTION FLUSH, a new node, ...). */
export function isFunctionMissing(error: unknown): boolean {
  return error instanceof Error && /^ERR Function not found/i.test(error.message);
}

/** A command the server does not know (FUNCTION on Redis 6.2, or renamed away). */
export function isUnknownCommand(error: unknown): boolean {
  return error instanceof Error && /unknown command/i.test(error.message);
}

/** FUNCTION DELETE of a library that is not there (another process deleted it first). */
export function isLibraryMissing(error: unknown): boolean {
  return error instanceof Error && /library not found/i.test(error.message);
}
