/**
 * `@tasklane/http`: the management API of a tasklane client as one Fetch-standard handler.
 * Mounts for servers: `@tasklane/http/node`, `/express`, `/fastify`, `/hono`.
 */
export type {
  Authorize,
  AuthorizeResult,
  ManagementAction,
  Scope,
} from "./auth.ts";
export type {
  ManagementHandler,
  ManagementHandlerOptions,
  ManagementUi,
} from "./create-management-handler.ts";
export { createManagementHandler } from "./create-management-handler.ts";
export type { ErrorBody } from "./errors.ts";
export { HttpError } from "./errors.ts";
