/**
 * Durable puts (the adapter's `durability` option): after a put, WAIT (or WAITAOF) until
 * enough replicas have it. Redis replicates asynchronously, so a put acknowledged by the
 * master alone is lost if the master dies before its replica received it and the replica
 * is promoted; WAIT shrinks that window to nothing for the replicas it counted.
 *
 * WAIT counts the writes made on its own connection, and blocks that connection until it
 * answers: durable puts go over a connection of their own (so a worker's reserves and
 * acks never queue behind a WAIT), and on a Cluster the WAIT goes to the node that owns
 * the lane's slot, on the connection the put just used.
 */
import { Command } from "ioredis";
import type { Client } from "./adapter-shared.ts";
import { RedisReplicationError } from "./errors.ts";

/** The `durability` option, defaults filled in. */
export interface Durability {
  /** Replicas that must acknowledge (WAIT) or fsync (WAITAOF) each put. */
  replicas: number;
  /** How long a put waits for them, ms. */
  timeoutMs: number;
  /** WAITAOF: the master and the replicas fsynced it to their append-only files. */
  aof: boolean;
}

/** WAIT / WAITAOF routed to one slot's node (they name no key ioredis could route by). */
class SlotCommand extends Command {
  private readonly laneSlot: number;

  constructor(name: string, args: Array<string | number>, slot: number) {
    super(name, args, { replyEncoding: "utf8" });
    this.laneSlot = slot;
  }

  override getSlot(): number {
    return this.laneSlot;
  }
}

/**
 * Wait for `durability`'s replicas after a put sent on `client` (the durable connection);
 * `slot` is the lane's slot on a Cluster. Throws RedisReplicationError when too few
 * answered in time.
 */
export async function awaitReplicas(
  client: Client,
  slot: number | undefined,
  durability: Durability,
  what: string,
): Promise<void> {
  const { replicas, timeoutMs, aof } = durability;
  const args = aof ? [1, replicas, timeoutMs] : [replicas, timeoutMs];
  const name = aof ? "waitaof" : "wait";
  let reply: unknown;
  if (slot === undefined) {
    reply = await client.call(name, ...args);
  } else {
    const command = new SlotCommand(name, args, slot);
    client.sendCommand(command);
    reply = await command.promise;
  }
  if (aof) {
    const [local, fsynced] = (reply as number[]).map(Number) as [number, number];
    if (local >= 1 && fsynced >= replicas) return;
    throw new RedisReplicationError(
      what,
      `${local >= 1 ? "" : "not fsynced by the master, and "}fsynced by ${fsynced} of the ${replicas} replicas asked for within ${timeoutMs} ms (WAITAOF); a failover or crash now may lose it`,
      { replicas: fsynced, localFsync: local >= 1 },
    );
  }
  const acknowledged = Number(reply);
  if (acknowledged >= replicas) return;
  throw new RedisReplicationError(
    what,
    `acknowledged by ${acknowledged} of the ${replicas} replicas asked for within ${timeoutMs} ms (WAIT); a failover now may lose it`,
    { replicas: acknowledged },
  );
}
