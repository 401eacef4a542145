import { Socket } from "node:net";

/**
 * Counts client round trips to one TCP port: every `socket.write` to it is one request
 * the client sent (ioredis writes a pipeline or MULTI block with one write, a lone
 * command with one write; node_redis likewise). Writes while the socket is corked count
 * once, at uncork. Sockets in `excluded` (the harness's own stats connection) are
 * skipped. Installed once per child process, before any connection is made.
 */
export interface RoundTripCounter {
  count(): number;
  exclude(socket: Socket): void;
  /** Put net.Socket back as it was (tests). */
  uninstall(): void;
}

export function installRoundTripCounter(port: number): RoundTripCounter {
  const excluded = new WeakSet<Socket>();
  let writes = 0;
  const proto = Socket.prototype as unknown as {
    write: (...args: unknown[]) => boolean;
    uncork: () => void;
  };
  const originalWrite = proto.write;
  const originalUncork = proto.uncork;
  proto.write = function (this: Socket, ...args: unknown[]) {
    if (this.remotePort === port && this.writableCorked === 0 && !excluded.has(this)) writes++;
    return originalWrite.apply(this, args);
  };
  proto.uncork = function (this: Socket) {
    if (this.remotePort === port && this.writableCorked === 1 && !excluded.has(this)) writes++;
    originalUncork.call(this);
  };
  return {
    count: () => writes,
    exclude: (socket) => excluded.add(socket),
    uninstall() {
      proto.write = originalWrite;
      proto.uncork = originalUncork;
    },
  };
}
