/**
 * Every mount on its real framework, over real HTTP: the same requests through node:http,
 * Express (with and without a body parser in front, with and without a mount path),
 * Fastify and Hono, each beside a route of the framework's own.
 */
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { serve as serveHono } from "@hono/node-server";
import type { Tasklane } from "@tasklane/core";
import express from "express";
import Fastify from "fastify";
import { Hono } from "hono";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createManagementHandler, type ManagementHandler } from "../src/index.ts";
import { createExpressMiddleware } from "../src/mounts/express.ts";
import { createFastifyPlugin } from "../src/mounts/fastify.ts";
import { mountHono } from "../src/mounts/hono.ts";
import { createNodeListener } from "../src/mounts/node.ts";
import { call, createClient, ndjson, openSse, sendEmail, waitFor } from "./helpers.ts";

interface Running {
  /** The server's origin, e.g. http://127.0.0.1:1234. */
  origin: string;
  close(): Promise<void>;
}

async function listen(server: Server): Promise<Running> {
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    origin: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** Each mount serves the handler plus its framework's own GET /health. */
const mounts: Record<string, (handler: ManagementHandler) => Promise<Running>> = {
  "node:http": (handler) => {
    const api = createNodeListener(handler);
    return listen(
      createServer((req, res) =>
        api(req, res, () => {
          res.writeHead(200, { "content-type": "application/json" });
          res.end(JSON.stringify({ ok: "node" }));
        }),
      ),
    );
  },
  express: (handler) => {
    const app = express();
    app.use(createExpressMiddleware(handler));
    app.get("/health", (_req, res) => {
      res.json({ ok: "express" });
    });
    return listen(createServer(app));
  },
  "express, after express.json(), on a mount path": (handler) => {
    const app = express();
    app.use(express.json());
    app.use("/ops", createExpressMiddleware(handler));
    app.get("/health", (_req, res) => {
      res.json({ ok: "express" });
    });
    return listen(createServer(app));
  },
  fastify: async (handler) => {
    const app = Fastify();
    app.get("/health", async () => ({ ok: "fastify" }));
    // The app's own JSON parsing is untouched by the plugin's raw body handling.
    app.post("/echo", async (request) => request.body);
    await app.register(createFastifyPlugin(handler));
    await app.listen({ port: 0, host: "127.0.0.1" });
    const { port } = app.server.address() as AddressInfo;
    return { origin: `http://127.0.0.1:${port}`, close: () => app.close() };
  },
  hono: async (handler) => {
    const app = new Hono();
    app.get("/health", (c) => c.json({ ok: "hono" }));
    mountHono(app, handler);
    const server = await new Promise<Server>((resolve) => {
      const s = serveHono({ fetch: app.fetch, port: 0, hostname: "127.0.0.1" }, () =>
        resolve(s as Server),
      );
    });
    const { port } = server.address() as AddressInfo;
    return {
      origin: `http://127.0.0.1:${port}`,
      close: () =>
        new Promise<void>((resolve) => {
          server.closeAllConnections();
          server.close(() => resolve());
        }),
    };
  },
};

for (const [name, mount] of Object.entries(mounts)) {
  describe(`mounted on ${name}`, () => {
    let tl: Tasklane;
    let running: Running;
    let api: string;

    beforeEach(async () => {
      tl = createClient();
      const handler = createManagementHandler({
        tasklane: tl,
        basePath: "/ops",
        authorize: (request) =>
          request.headers.get("authorization") === "Bearer w" ? "write" : false,
      });
      running = await mount(handler);
      api = `${running.origin}/ops`;
    });

    afterEach(async () => {
      await running.close();
      await tl.close();
    });

    const auth = { authorization: "Bearer w" };

    it("answers the API under basePath and leaves the framework's own routes alone", async () => {
      const lanes = await call(`${api}/lanes`, { headers: auth });
      expect(lanes.status).toBe(200);
      expect((lanes.body.lanes as Array<{ name: string }>).map((l) => l.name)).toEqual([
        "high",
        "default",
        "low",
      ]);
      const info = await call(`${api}`, { headers: auth });
      expect(info.body.lanes).toEqual(["high", "default", "low"]);
      const health = await call(`${running.origin}/health`);
      expect(health.status).toBe(200);
      expect(health.body.ok).toEqual(expect.any(String));
      const denied = await call(`${api}/lanes`);
      expect(denied).toMatchObject({ status: 401, body: { code: "UNAUTHORIZED" } });
    });

    it("reads JSON bodies, validates them, and sends status, headers and errors through", async () => {
      const created = await call(`${api}/tasks/send-email/jobs`, {
        method: "POST",
        body: { payload: { to: "ada@example.com", subject: "hi" }, jobId: "j-1" },
        headers: auth,
      });
      expect(created).toMatchObject({ status: 201, body: { id: "j-1", status: "created" } });
      expect(created.headers.get("location")).toBe("/ops/lanes/default/jobs/j-1");
      expect((await tl.lane("default").get("j-1"))?.state).toBe("waiting");
      const invalid = await call(`${api}/tasks/send-email/jobs`, {
        method: "POST",
        body: { payload: { to: "nope", subject: "hi" } },
        headers: auth,
      });
      expect(invalid).toMatchObject({
        status: 400,
        body: { code: "VALIDATION", field: "payload.to" },
      });
      const crossSite = await call(`${api}/lanes/default/pause`, {
        method: "POST",
        headers: { ...auth, "sec-fetch-site": "cross-site" },
      });
      expect(crossSite).toMatchObject({ status: 403, body: { code: "CSRF" } });
      expect(await tl.lane("default").isPaused()).toBe(false);
      const empty = await call(`${api}/lanes/default/pause`, { method: "POST", headers: auth });
      expect(empty).toMatchObject({ status: 200, body: { paused: true } });
    });

    it("streams NDJSON lists", async () => {
      const published = await tl.publishMany(
        sendEmail,
        Array.from({ length: 3_000 }, (_, i) => ({
          payload: { to: `u${i}@example.com`, subject: "s" },
        })),
      );
      const response = await fetch(`${api}/lanes/default/jobs?state=waiting`, { headers: auth });
      expect(response.headers.get("content-type")).toBe("application/x-ndjson; charset=utf-8");
      const lines = (await response.text()).split("\n").filter((l) => l !== "");
      expect(lines.map((l) => (JSON.parse(l) as { id: string }).id)).toEqual(
        published.map((r) => r.id),
      );
    });

    it("streams events and unsubscribes when the client goes away", async () => {
      const before = tl.events.listenerCount("published");
      const sse = await openSse(`${api}/events?source=all`, auth);
      expect((await sse.next()).event).toBe("ready");
      const { id } = await tl.publish(sendEmail, { to: "a@example.com", subject: "s" });
      const event = await sse.until((e) => e.event === "published" && e.data.source === "backend");
      expect(event.data.jobId).toBe(id);
      expect(tl.events.listenerCount("published")).toBe(before + 1);
      sse.close();
      await waitFor(
        () => tl.events.listenerCount("published") === before,
        "the stream's listener to go",
      );
    });

    if (name === "fastify") {
      it("keeps the app's own body parsing outside the plugin", async () => {
        const echo = await call(`${running.origin}/echo`, { method: "POST", body: { a: 1 } });
        expect(echo).toMatchObject({ status: 200, body: { a: 1 } });
      });
    }
  });
}

it("ndjson helper reads lines (sanity)", async () => {
  const tl = createClient();
  const handler = createManagementHandler({ tasklane: tl });
  const running = await mounts["node:http"]?.(handler);
  await tl.publish(sendEmail, { to: "a@example.com", subject: "s" });
  expect(await ndjson(`${running?.origin}/lanes/default/jobs?state=waiting`)).toHaveLength(1);
  await running?.close();
  await tl.close();
});
