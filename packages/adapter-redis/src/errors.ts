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

/** Redis is unreachable or the connection is not ready: failed fast, nothing was sent. */
export class RedisUnavailableError extends AdapterError {
  readonly reason = "unavailable";
  constructor(what: string, detail: string, options?: ErrorOptions) {
    super("redis", `${what}: Redis is unavailable (${detail})`, options);
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

/** Error text (prefix or pattern) → tasklane error. Script-raised errors start "TASKLANE_". */
const ERROR_TABLE: ReadonlyArray<readonly [RegExp, Mapper]> = [
  [/^OOM\b/, (what, _m, cause) => new RedisOutOfMemoryError(what, { cause })],
  [/^NOPERM\b/, (what, m, cause) => new RedisPermissionError(what, m, { cause })],
  [
    /^(CLUSTERDOWN|TRYAGAIN|LOADING|MASTERDOWN|READONLY)\b/,
    (what, m, cause) => new RedisUnavailableError(what, m, { cause }),
  ],
  [
    /Stream isn't writeable|Connection is closed|MaxRetriesPerRequest|ECONNREFUSED|ECONNRESET|ETIMEDOUT|EPIPE|Command timed out|not connected/i,
    (what, m, cause) => new RedisUnavailableError(what, m, { cause }),
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

export function mapRedisError(what: string, error: unknown): TasklaneError {
  if (error instanceof AdapterError) return error;
  const message = error instanceof Error ? error.message : String(error);
  for (const [pattern, map] of ERROR_TABLE) {
    if (pattern.test(message)) return map(what, message, error);
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
