/** What the node:http and Express mounts share. */
import type { ManagementHandler } from "../create-management-handler.ts";

/**
 * The handler behind a real Request. Without its global override, @hono/node-server hands
 * over a light stand-in that passes `instanceof Request` (its prototype chain) but is no
 * Request to undici, so middleware that copies a request (hono/body-limit:
 * `new Request(request, init)`) throws on it. The copy shares the stand-in's body stream
 * and abort signal.
 */
export function fetchFrom(handler: ManagementHandler): (request: Request) => Promise<Response> {
  return (request) => {
    const init: RequestInit & { duplex?: "half" } = {
      method: request.method,
      headers: request.headers,
      signal: request.signal,
    };
    if (request.method !== "GET" && request.method !== "HEAD") {
      init.body = request.body;
      init.duplex = "half";
    }
    return handler(new Request(request.url, init));
  };
}

/** The path of a request target, without its query. */
export function pathOf(url: string | undefined): string {
  const target = url ?? "/";
  const q = target.indexOf("?");
  return q === -1 ? target : target.slice(0, q);
}
