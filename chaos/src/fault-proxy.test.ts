/**
 * The fault proxy between a real TCP client and a real TCP echo server: it forwards,
 * a drop resets the client's connection, and a blackhole holds bytes (on open and new
 * connections) until it ends, then lets them through.
 */
import { once } from "node:events";
import { connect, createServer, type Server, type Socket } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { type FaultProxy, startFaultProxy } from "./fault-proxy.ts";
import { waitFor } from "./servers/free-port.ts";

let echo: Server | undefined;
let proxy: FaultProxy | undefined;
const sockets: Socket[] = [];

afterEach(async () => {
  for (const s of sockets.splice(0)) s.destroy();
  await proxy?.close();
  await new Promise((resolve) => (echo ? echo.close(resolve) : resolve(undefined)));
});

async function setup(): Promise<FaultProxy> {
  echo = createServer((socket) => {
    socket.on("error", () => {}); // the proxy resets it on a drop
    socket.pipe(socket);
  });
  echo.listen(0, "127.0.0.1");
  await once(echo, "listening");
  const address = echo.address();
  const port = typeof address === "object" && address !== null ? address.port : 0;
  proxy = await startFaultProxy({ host: "127.0.0.1", port });
  return proxy;
}

async function client(
  p: FaultProxy,
): Promise<{ socket: Socket; received: () => string; at: () => number }> {
  const socket = connect({ host: "127.0.0.1", port: p.port });
  sockets.push(socket);
  socket.on("error", () => {});
  let text = "";
  let lastAt = 0;
  socket.on("data", (chunk: Buffer) => {
    text += chunk.toString();
    lastAt = Date.now();
  });
  await once(socket, "connect");
  return { socket, received: () => text, at: () => lastAt };
}

describe("fault proxy", () => {
  it("forwards both ways", async () => {
    const p = await setup();
    const c = await client(p);
    c.socket.write("hello");
    await waitFor(() => c.received() === "hello", "the echo", 5_000);
    expect(p.open).toBe(1);
  });

  it("drop resets every open connection", async () => {
    const p = await setup();
    const a = await client(p);
    const b = await client(p);
    await waitFor(() => p.open === 2, "two connections", 5_000);
    const errors = Promise.all(
      [a.socket, b.socket].map(
        (s) =>
          new Promise<string | undefined>((resolve) =>
            s.once("error", (e: NodeJS.ErrnoException) => resolve(e.code)),
          ),
      ),
    );
    expect(p.drop()).toBe(2);
    expect(await errors).toEqual(["ECONNRESET", "ECONNRESET"]);
    expect(p.open).toBe(0);
  });

  it("blackhole holds bytes on open and new connections until it ends", async () => {
    const p = await setup();
    const open = await client(p);
    p.blackholeStart();
    open.socket.write("held");
    const fresh = await client(p);
    fresh.socket.write("also held");
    // The blackhole's length: what is measured is that nothing came back before its end.
    await new Promise((resolve) => setTimeout(resolve, 200));
    const endedAt = Date.now();
    expect(open.received()).toBe("");
    expect(fresh.received()).toBe("");
    p.blackholeEnd();
    await waitFor(
      () => open.received() === "held" && fresh.received() === "also held",
      "the held bytes",
      5_000,
    );
    expect(open.at()).toBeGreaterThanOrEqual(endedAt);
    expect(fresh.at()).toBeGreaterThanOrEqual(endedAt);
  });
});
