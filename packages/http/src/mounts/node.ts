/**
 * `@tasklane/http/node`: the management handler as a `node:http` request listener, through
 * @hono/node-server (which streams answers with backpressure and aborts the Request's
 * signal when the client goes away).
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import { getRequestListener } from "@hono/node-server";
import type { ManagementHandler } from "../create-management-handler.ts";
import { fetchFrom, pathOf } from "./node-request.ts";

export type NodeListener = (
  request: IncomingMessage,
  response: ServerResponse,
  next?: (error?: unknown) => void,
) => void;

/**
 * A listener for `http.createServer(listener)`. Requests outside the handler's basePath go
 * to `next` when one is given (connect-style middleware), else get the handler's 404.
 */
export function createNodeListener(handler: ManagementHandler): NodeListener {
  // overrideGlobalObjects: false: a library must not replace the process's global Request
  // and Response, as @hono/node-server does by default for speed.
  const listen = getRequestListener(fetchFrom(handler), { overrideGlobalObjects: false });
  return (request, response, next) => {
    if (next !== undefined && !handler.owns(pathOf(request.url))) {
      next();
      return;
    }
    listen(request, response).catch((error: unknown) => {
      if (next) next(error);
      else response.destroy(error instanceof Error ? error : undefined);
    });
  };
}
