import type { OpenAPIHono, RouteConfig } from "@hono/zod-openapi";
import type { AnyTask, Capabilities, LaneHandle, Tasklane } from "@tasklane/core";
import type { MiddlewareHandler } from "hono";
import { bodyLimit } from "hono/body-limit";
import {
  type AccessOptions,
  checkAccess,
  checkCsrf,
  type ManagementAction,
  type Scope,
} from "./auth.ts";
import { HttpError } from "./errors.ts";

/** What every route module shares. */
export interface ApiContext {
  readonly tl: Tasklane;
  readonly lanes: ReadonlyMap<string, LaneHandle>;
  readonly tasks: ReadonlyMap<string, AnyTask>;
  /** Most jobs one bulk call selects and changes. */
  readonly bulkLimit: number;
  readonly eventHeartbeatMs: number;
  readonly eventQueueLimit: number;
  /** The route's middleware: authorization for its scope, and CSRF for writes. */
  guard(scope: Scope, operation: string): MiddlewareHandler;
  /** The scope `authorize` granted the request (after its guard ran). */
  scopeOf(request: Request): Scope | undefined;
  /** A lane by config name, or 404. */
  lane(name: string): LaneHandle;
  /** 501 naming the capability when the adapter lacks it. */
  require(capability: keyof Capabilities, what: string): void;
  /** Today, UTC, by the client's clock. */
  today(): string;
}

export type App = OpenAPIHono;

/**
 * GET /'s `notYetSupported`: features with an endpoint that no adapter offers in this
 * version. None now (schedules were the last); every endpoint depends on the adapter's
 * capabilities only. The field stays so clients that read it keep working.
 */
export const NOT_YET_SUPPORTED: readonly string[] = [];

export interface ContextOptions extends AccessOptions {
  tl: Tasklane;
  trustedOrigins: ReadonlySet<string>;
  bulkLimit: number;
  maxBodyBytes: number;
  eventHeartbeatMs: number;
  eventQueueLimit: number;
}

export function createApiContext(options: ContextOptions): ApiContext {
  const { tl } = options;
  const lanes = new Map(tl.lanes().map((lane) => [lane.name, lane]));
  const tasks = new Map(tl.tasks().map((task) => [task.name, task]));
  const adapter = tl.adapter;
  // What each request was granted, for GET / to tell a client (the dashboard) whether to
  // offer writes; weak, so a request's entry goes with it.
  const granted = new WeakMap<Request, Scope>();
  // After authorization: a caller without the scope gets its 401 or 403, not a 413.
  const limitBody = bodyLimit({
    maxSize: options.maxBodyBytes,
    onError: () => {
      throw new HttpError(413, "PAYLOAD_TOO_LARGE", `Body over ${options.maxBodyBytes} bytes`, {
        field: "body",
      });
    },
  });
  return {
    tl,
    lanes,
    tasks,
    bulkLimit: options.bulkLimit,
    eventHeartbeatMs: options.eventHeartbeatMs,
    eventQueueLimit: options.eventQueueLimit,
    guard(scope, operation) {
      return async (c, next) => {
        const action: ManagementAction = { scope, operation };
        const lane = c.req.param("lane");
        const task = c.req.param("name");
        const jobId = c.req.param("id");
        if (lane !== undefined) action.lane = lane;
        if (task !== undefined) action.task = task;
        if (jobId !== undefined) action.jobId = jobId;
        // Who, then from where: a cross-site write is refused before its body is read.
        granted.set(c.req.raw, await checkAccess(c.req.raw, action, options));
        if (scope === "write") checkCsrf(c.req.raw, options.trustedOrigins);
        await limitBody(c, next);
      };
    },
    scopeOf: (request) => granted.get(request),
    lane(name) {
      const lane = lanes.get(name);
      if (lane === undefined) {
        throw new HttpError(
          404,
          "NOT_FOUND",
          `No lane "${name}" (lanes: ${[...lanes.keys()].join(", ")})`,
          {
            field: "lane",
          },
        );
      }
      return lane;
    },
    require(capability, what) {
      if (adapter.capabilities[capability] !== true) {
        throw new HttpError(
          501,
          "UNSUPPORTED",
          `The ${adapter.name} adapter does not support ${what} (capability ${capability})`,
          { capability },
        );
      }
    },
    today: () => new Date(tl.clock.now()).toISOString().slice(0, 10),
  };
}

/** A route config with its scope's guard and an `x-scope` note in the OpenAPI document. */
export function guarded<R extends RouteConfig>(ctx: ApiContext, scope: Scope, config: R): R {
  const operation = config.operationId ?? `${config.method} ${config.path}`;
  return { ...config, middleware: [ctx.guard(scope, operation)], "x-scope": scope } as R;
}
