/**
 * A TCP proxy in front of a server that injects network faults the way a production
 * network meets them:
 *
 * - drop: every connection through it is reset at once (RST both ways, as a NAT or load
 *   balancer that forgets its table does); the client sees ECONNRESET and reconnects.
 * - blackhole: nothing is forwarded for a while, in either direction, on open and on new
 *   connections, but nothing is closed either (a partition that heals); bytes sent meanwhile
 *   wait in the kernel's buffers and arrive, late, when it ends.
 *
 * The proxy forwards by hand rather than with pipe() so that a blackhole can hold both
 * directions without pipe()'s own backpressure handling resuming them.
 */
import { connect, createServer, type Server, type Socket } from "node:net";

export interface FaultProxy {
  /** Where clients connect (127.0.0.1). */
  readonly port: number;
  /** Connections open now. */
  readonly open: number;
  /** Reset every open connection; returns how many were reset. */
  drop(): number;
  /** Stop forwarding, both ways, on every connection (open now or opened meanwhile). */
  blackholeStart(): void;
  /** Forward again: what was held back flows on. */
  blackholeEnd(): void;
  close(): Promise<void>;
}

interface Pair {
  client: Socket;
  upstream: Socket;
}

export async function startFaultProxy(target: { host: string; port: number }): Promise<FaultProxy> {
  const pairs = new Set<Pair>();
  let holding = false;

  const forward = (from: Socket, to: Socket) => {
    from.on("data", (chunk: Buffer) => {
      if (!to.write(chunk)) from.pause();
    });
    to.on("drain", () => {
      if (!holding) from.resume();
    });
  };

  const server: Server = createServer((client) => {
    client.setNoDelay(true);
    const upstream = connect({ host: target.host, port: target.port, noDelay: true });
    const pair: Pair = { client, upstream };
    pairs.add(pair);
    const close = () => {
      if (!pairs.delete(pair)) return;
      client.destroy();
      upstream.destroy();
    };
    for (const socket of [client, upstream]) {
      socket.on("error", close);
      socket.on("close", close);
      socket.on("end", close);
    }
    forward(client, upstream);
    forward(upstream, client);
    if (holding) {
      client.pause();
      upstream.pause();
    }
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => resolve());
  });
  const address = server.address();
  const port = typeof address === "object" && address !== null ? address.port : 0;

  return {
    port,
    get open() {
      return pairs.size;
    },
    drop() {
      const n = pairs.size;
      for (const pair of [...pairs]) {
        pairs.delete(pair);
        pair.client.resetAndDestroy();
        pair.upstream.resetAndDestroy();
      }
      return n;
    },
    blackholeStart() {
      holding = true;
      for (const { client, upstream } of pairs) {
        client.pause();
        upstream.pause();
      }
    },
    blackholeEnd() {
      holding = false;
      for (const { client, upstream } of pairs) {
        client.resume();
        upstream.resume();
      }
    },
    async close() {
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        for (const pair of [...pairs]) {
          pairs.delete(pair);
          pair.client.destroy();
          pair.upstream.destroy();
        }
      });
    },
  };
}
