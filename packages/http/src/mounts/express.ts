/**
 * `@tasklane/http/express`: the management handler as Express middleware (Express 4 or 5).
 * Typed structurally, so this package needs no Express types.
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import { getRequestListener } from "@hono/node-server";
import type { ManagementHandler } from "../create-management-handler.ts";
import { fetchFrom, pathOf } from "./node-request.ts";

/** What the middleware reads of Express's request. */
export type ExpressRequestLike = IncomingMessage & { originalUrl?: string; body?: unknown };

export type ExpressMiddleware = (
  request: ExpressRequestLike,
  response: ServerResponse,
  next: (error?: unknown) => void,
) => void;

/**
 * Middleware for `app.use(…)`, with or without a mount path: it reads the original URL,
 * answers what is under the handler's basePath and passes the rest to `next`. Mount it
 * before body parsers; after one (express.json()), the parsed body is sent on as JSON.
 */
export function createExpressMiddleware(handler: ManagementHandler): ExpressMiddleware {
  const listen = getRequestListener(fetchFrom(handler), { overrideGlobalObjects: false });
  return (request, response, next) => {
    // Express cuts a mount path off req.url; the handler routes on the whole path.
    const url = request.originalUrl ?? request.url ?? "/";
    if (!handler.owns(pathOf(url))) {
      next();
      return;
    }
    request.url = url;
    const parsed = request.body;
    if (parsed !== undefined && request.readableEnded) {
      // A body parser consumed the stream: hand @hono/node-server the bytes it reads
      // instead (its `rawBody` convention).
      const raw = Buffer.isBuffer(parsed)
        ? parsed
        : Buffer.from(typeof parsed === "string" ? parsed : JSON.stringify(parsed));
      Object.assign(request, { rawBody: raw });
    }
    listen(request, response).catch(next);
  };
}
