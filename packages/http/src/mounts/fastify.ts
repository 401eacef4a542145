/**
 * `@tasklane/http/fastify`: the management handler as a Fastify plugin. Fastify sends the
 * handler's Response itself (status, headers, a streamed body with backpressure), so its
 * hooks and logging see every answer.
 */
import { Readable } from "node:stream";
import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from "fastify";
import type { ManagementHandler } from "../create-management-handler.ts";

/**
 * A plugin for `app.register(plugin)`: routes for the handler's basePath and everything
 * under it. The plugin's context parses no bodies (the handler reads the raw stream); that
 * stays inside the plugin (Fastify's encapsulation), the rest of the app keeps its parsers.
 */
export function createFastifyPlugin(handler: ManagementHandler): FastifyPluginAsync {
  return async (fastify) => {
    fastify.removeAllContentTypeParsers();
    fastify.addContentTypeParser("*", (_request, payload, done) => done(null, payload));
    const route = async (request: FastifyRequest, reply: FastifyReply) => {
      const controller = new AbortController();
      // The client went away before the answer ended (an event stream, a long list).
      reply.raw.on("close", () => {
        if (!reply.raw.writableFinished) controller.abort();
      });
      const headers = new Headers();
      for (const [name, value] of Object.entries(request.headers)) {
        if (Array.isArray(value)) for (const v of value) headers.append(name, v);
        else if (value !== undefined) headers.set(name, value);
      }
      const init: RequestInit & { duplex?: "half" } = {
        method: request.method,
        headers,
        signal: controller.signal,
      };
      if (request.method !== "GET" && request.method !== "HEAD") {
        const stream = request.body instanceof Readable ? request.body : request.raw;
        init.body = Readable.toWeb(stream) as ReadableStream<Uint8Array>;
        init.duplex = "half";
      }
      const response = await handler(
        new Request(`${request.protocol}://${request.host}${request.url}`, init),
      );
      return reply.send(response);
    };
    const base = handler.basePath;
    if (base !== "") fastify.all(base, route);
    fastify.all(`${base}/*`, route);
  };
}
