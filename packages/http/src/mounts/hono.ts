/**
 * `@tasklane/http/hono`: the management handler on a Hono app. The handler is itself a
 * Fetch handler, so this only routes the basePath to it with the original Request.
 */
import type { ManagementHandler } from "../create-management-handler.ts";

/** What the mount needs of a Hono app (any Hono 4 app has it). */
export interface HonoAppLike {
  all(path: string, handler: (c: { req: { raw: Request } }) => Promise<Response>): unknown;
}

/** Route the handler's basePath (and everything under it) on `app`; returns `app`. */
export function mountHono<A extends HonoAppLike>(app: A, handler: ManagementHandler): A {
  const route = (c: { req: { raw: Request } }) => handler(c.req.raw);
  const base = handler.basePath;
  app.all(base === "" ? "/" : base, route);
  app.all(`${base}/*`, route);
  return app;
}
