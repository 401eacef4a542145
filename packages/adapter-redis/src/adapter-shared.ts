/**
 * What the Redis adapter and its lanes share: the connection type, the adapter state a
 * lane reaches through (`AdapterShared`), the call sent behind a blocking wait
 * (`FollowUp`) and the batch limit. A module of its own so that redis-adapter.ts and
 * redis-lane.ts both import it and neither imports the other's internals.
 */
import type { LaneStoreOptions } from "@tasklane/core/adapter";
import type { Cluster, Redis } from "ioredis";
import type { Durability } from "./durability.ts";
import type { ScriptingMode } from "./scripts.ts";

/** What a move needs of a lane it opens (RedisLane; an interface here: no import cycle). */
export interface RedisLaneLike {
  readonly name: string;
  run(script: "move-in", args: string[]): Promise<unknown>;
}

/** Most jobs in one call of any script (the adapter's maxBatch); merged puts fit in it. */
export const MAX_BATCH = 1_000;

export type Client = Redis | Cluster;

/** What the lanes of one adapter share. */
export interface AdapterShared {
  readonly client: Client;
  /** Settled once the adapter has started (lanes exist only after that). */
  scripting: ScriptingMode;
  readonly prefix: string;
  readonly channel: string;
  readonly putEvents: boolean;
  readonly lifecycleEvents: boolean;
  readonly maxBlockMs: number;
  /** Durable puts (the `durability` option): their own connection, and what they wait for. */
  readonly durable: { readonly client: Client; readonly durability: Durability } | undefined;
  closed: boolean;
  /**
   * How many times the command connection has closed (dropped or reset). ioredis sends
   * the commands that were awaiting a reply again once it reconnects, so a settling call
   * whose reply comes after a close may have run twice: see RedisLane.settled.
   */
  closes: number;
  /**
   * The lane of this name, opened if this process has not (with `options`): where a
   * move interrupted elsewhere continues to.
   */
  openLane(name: string, options: LaneStoreOptions): RedisLaneLike;
  /**
   * Deliver the ends queued in a lane's outbox to the jobs waiting for them (flows.ts),
   * and what those deliveries queue in turn. Resolves once what it found is delivered.
   */
  drainOutbox(lane: string): Promise<void>;
  /** Throws ClosedError when closed; fails fast when the connection is down. */
  check(what: string): void;
  /** A script call in flight: close() waits for it (bounded) before it drops connections. */
  track(call: Promise<unknown>): void;
  /**
   * Block on a wake-up marker for at most `ms`, with `next` sent behind the block (see
   * FollowUp). Resolves with its reply, or undefined when the wait was aborted or closed
   * first or the call failed (the caller then runs it itself). `dueInMs`: a job falls due
   * then. The block is ended from here on time (BLPOP's own timeout ends on redis-server's
   * next clock tick, up to 100 ms late at the default `hz` 10).
   */
  waitForWake(
    key: string,
    ms: number,
    signal: AbortSignal | undefined,
    next: FollowUp,
    dueInMs?: number,
  ): Promise<unknown>;
}

/**
 * A call the blocking connection sends right behind its BLPOP, so redis-server runs it the
 * moment the block ends: a long-polling reserve costs no round trip back to Node and out
 * again between the wake-up and the reserve (the latency path: put, wake, reserve). The
 * call runs however the block ends (marker, timeout, abort), as the reserve that follows
 * every block always did; only after an abort does nobody wait for its reply, which then
 * goes to `orphan`, which must hand back any job it holds. close() waits for those.
 */
export interface FollowUp {
  send(conn: Client): Promise<unknown>;
  orphan(reply: unknown): Promise<void>;
}
