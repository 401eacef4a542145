import { OpenAPIHono } from "@hono/zod-openapi";
import { ConfigError, type Tasklane } from "@tasklane/core";
import { z } from "zod";
import { createApiContext } from "./api-context.ts";
import type { Authorize } from "./auth.ts";
import { errorResponse, formatPath, HttpError, toHttpError } from "./errors.ts";
import { buildOpenApiDocument } from "./openapi.ts";
import { registerJobRoutes } from "./routes/jobs.ts";
import { registerLaneRoutes } from "./routes/lanes.ts";
import { registerMetaRoutes } from "./routes/meta.ts";
import { registerScheduleRoutes } from "./routes/schedules.ts";
import { registerTaskRoutes } from "./routes/tasks.ts";

/**
 * A web UI the handler serves beside the API, under `basePath + path`: `createDashboard()`
 * of `@tasklane/dashboard` is one. It answers GET and HEAD requests for its static files;
 * they go to it without `authorize`, as they hold no data (every API call the UI then
 * makes is authorized as usual).
 */
export interface ManagementUi {
  /** Where under `basePath` it is served, e.g. `/ui`: one or more path segments. */
  readonly path: string;
  /**
   * Answer a GET or HEAD under that path. `path` is the rest of the request's path (`""`
   * for the UI's own path without a trailing slash, else `/…`); `base` is the full path it
   * is served under (`basePath + path`).
   */
  fetch(request: Request, where: { path: string; base: string }): Response | Promise<Response>;
}

/** First path segments of the API's own routes: a UI path may not start with one. */
const API_SEGMENTS = new Set([
  "metrics",
  "lanes",
  "jobs",
  "failure-groups",
  "tasks",
  "workers",
  "schedules",
  "events",
  "openapi.json",
]);

export interface ManagementHandlerOptions {
  /** The client whose lanes and tasks the API manages. */
  tasklane: Tasklane;
  /**
   * Where the API is mounted, e.g. `/tasklane`: every route is under it, and the mounts
   * pass on only requests under it. Default `""` (the root).
   */
  basePath?: string;
  /**
   * Who may do what. Called once per request with the operation; answers the caller's
   * scope: `"write"` (includes read), `"read"`, `"none"` (403), or false (not
   * authenticated: 401); may throw an `HttpError`. Without it every caller is anonymous:
   * reads are allowed and writes are refused (401) unless `allowAnonymousWrites`.
   */
  authorize?: Authorize;
  /** Without `authorize`, let anonymous callers write too. Default false. */
  allowAnonymousWrites?: boolean;
  /**
   * Origins (`https://ops.example.com`) whose pages may send writes from a browser, beside
   * this API's own. Default none.
   */
  trustedOrigins?: string[];
  /** Most jobs one bulk call (retry, cancel, delete) selects and changes. Default 1_000. */
  bulkLimit?: number;
  /** Largest request body, bytes (413 past it). Default 1_048_576 (1 MiB). */
  maxBodyBytes?: number;
  /** How often an idle event stream sends a keep-alive comment, ms. Default 15_000. */
  eventHeartbeatMs?: number;
  /** Events held for a slow event-stream reader before they are dropped (and counted). Default 1_000. */
  eventQueueLimit?: number;
  /** Told of every unexpected error (answered 500). Default `console.error`. */
  onError?: (error: unknown, request: Request) => void;
  /** The OpenAPI document's title. Default "tasklane management API". */
  title?: string;
  /**
   * A web UI to serve under `basePath` (e.g. `createDashboard()` from
   * `@tasklane/dashboard`, at `basePath + "/ui"`). Default none.
   */
  dashboard?: ManagementUi;
  /**
   * Serve `GET {basePath}/metrics` (read scope) with the response this gives, e.g.
   * `createPrometheusEndpoint().fetch` from `@tasklane/opentelemetry/prometheus` (Prometheus
   * scrapes it like any endpoint: give its scraper read access in `authorize`). Default
   * none: the route answers 404.
   */
  metrics?: (request: Request) => Response | Promise<Response>;
}

/** The API as one Fetch-standard function, and where it is mounted. */
export interface ManagementHandler {
  (request: Request): Promise<Response>;
  /** The path every route is under (`""` for the root). */
  readonly basePath: string;
  /** Whether a request path is the handler's (mounts pass the others on). */
  owns(pathname: string): boolean;
}

const fn = <T>(what: string) =>
  z.custom<T>((v) => typeof v === "function", `must be a function (${what})`);

const optionsSchema = z
  .object({
    tasklane: z.custom<Tasklane>(
      (v) =>
        typeof v === "object" &&
        v !== null &&
        typeof (v as Tasklane).lanes === "function" &&
        typeof (v as Tasklane).publish === "function",
      "must be a tasklane client (createTasklane())",
    ),
    basePath: z
      .string()
      .regex(/^(\/[^/?#\s]+)*$/, 'must be "" or a path like "/tasklane", without a trailing slash')
      .default(""),
    authorize: fn<Authorize>("request, action").optional(),
    allowAnonymousWrites: z.boolean().default(false),
    trustedOrigins: z
      .array(
        z.string().refine((o) => {
          try {
            return new URL(o).origin === o;
          } catch {
            return false;
          }
        }, "must be an origin like https://ops.example.com (scheme, host, port; no path)"),
      )
      .default([]),
    bulkLimit: z.number().int().min(1).max(10_000).default(1_000),
    maxBodyBytes: z.number().int().min(1_024).default(1_048_576),
    eventHeartbeatMs: z.number().int().min(10).default(15_000),
    eventQueueLimit: z.number().int().min(1).default(1_000),
    onError: fn<(error: unknown, request: Request) => void>("error, request").optional(),
    title: z.string().min(1).default("tasklane management API"),
    dashboard: z
      .object({
        path: z
          .string()
          .regex(/^(\/[^/?#\s]+)+$/, 'must be a path like "/ui", without a trailing slash')
          .refine(
            (path) => !API_SEGMENTS.has(path.split("/")[1] ?? ""),
            "must not start with one of the API's own paths (lanes, jobs, failure-groups, tasks, workers, schedules, events, metrics, openapi.json)",
          ),
        fetch: fn<ManagementUi["fetch"]>("request, where"),
      })
      .loose()
      .optional(),
    metrics: fn<(request: Request) => Response | Promise<Response>>("request").optional(),
  })
  .strict();

function parseOptions(input: ManagementHandlerOptions): z.output<typeof optionsSchema> {
  const result = optionsSchema.safeParse(input);
  if (!result.success) {
    const issue = result.error.issues[0];
    const path = issue?.path ?? [];
    let value: unknown = input;
    for (const key of path)
      value = (value as Record<PropertyKey, unknown> | undefined)?.[key as PropertyKey];
    if (issue?.code === "unrecognized_keys") {
      throw new ConfigError(
        formatPath(path) || issue.keys.join(", "),
        issue.keys,
        "unknown option",
      );
    }
    throw new ConfigError(formatPath(path) || "options", value, issue?.message ?? "invalid");
  }
  if (result.data.authorize !== undefined && result.data.allowAnonymousWrites) {
    throw new ConfigError(
      "allowAnonymousWrites",
      true,
      'has no effect with authorize: have authorize return "write" instead',
    );
  }
  return result.data;
}

/** The zod issue a request failed, as a 400 naming its field. */
function requestError(error: z.ZodError, target: string): HttpError {
  const issue = error.issues[0];
  let path: PropertyKey[] = [...(issue?.path ?? [])];
  if (issue?.code === "unrecognized_keys") path = [...path, issue.keys[0] ?? ""];
  const field = formatPath(path) || (target === "json" ? "body" : target);
  const message =
    issue?.code === "unrecognized_keys" ? "unknown field" : (issue?.message ?? "invalid");
  return new HttpError(400, "BAD_REQUEST", `${field}: ${message}`, { field });
}

/**
 * The management API of a tasklane client as one Fetch-standard handler. Mount it with
 * `@tasklane/http/node`, `/express`, `/fastify` or `/hono`, or call it with any `Request`.
 *
 * @example
 * const handler = createManagementHandler({ tasklane: tl, basePath: "/tasklane", authorize });
 * http.createServer(createNodeListener(handler)).listen(3000);
 */
export function createManagementHandler(options: ManagementHandlerOptions): ManagementHandler {
  const o = parseOptions(options);
  const { basePath } = o;
  const onError = o.onError ?? ((error: unknown) => console.error("tasklane http:", error));
  const owns = (pathname: string) =>
    basePath === "" || pathname === basePath || pathname.startsWith(`${basePath}/`);

  const app = new OpenAPIHono({
    // Routes are declared relative to basePath (as the OpenAPI document lists them, with
    // basePath as its server URL); a path outside it matches no route.
    getPath: (request) => {
      const { pathname } = new URL(request.url);
      if (!owns(pathname)) return "\0";
      return pathname.slice(basePath.length) || "/";
    },
    defaultHook: (result) => {
      if (!result.success) throw requestError(result.error as z.ZodError, result.target);
    },
  });
  app.onError((error, c) => {
    const known = toHttpError(error);
    if (known !== undefined) return errorResponse(known);
    onError(error, c.req.raw);
    return errorResponse(new HttpError(500, "INTERNAL", "Internal error"));
  });
  app.notFound((c) =>
    errorResponse(
      new HttpError(404, "NOT_FOUND", `No route ${c.req.method} ${new URL(c.req.url).pathname}`),
    ),
  );
  const ctx = createApiContext({
    tl: o.tasklane,
    authorize: o.authorize,
    allowAnonymousWrites: o.allowAnonymousWrites,
    trustedOrigins: new Set(o.trustedOrigins),
    bulkLimit: o.bulkLimit,
    maxBodyBytes: o.maxBodyBytes,
    eventHeartbeatMs: o.eventHeartbeatMs,
    eventQueueLimit: o.eventQueueLimit,
  });
  registerMetaRoutes(app, ctx);
  registerLaneRoutes(app, ctx);
  registerJobRoutes(app, ctx);
  registerTaskRoutes(app, ctx, basePath);
  registerScheduleRoutes(app, ctx);

  let document: unknown;
  app.get("/openapi.json", ctx.guard("read", "getOpenApi"), (c) => {
    // Built once: the routes and tasks of a handler never change.
    document ??= buildOpenApiDocument(app, ctx.tasks.values(), { title: o.title, basePath });
    return c.json(document as object);
  });

  const metrics = o.metrics;
  if (metrics !== undefined) {
    app.get("/metrics", ctx.guard("read", "getMetrics"), (c) => metrics(c.req.raw));
  }

  const ui = options.dashboard;
  const uiBase = ui === undefined ? undefined : basePath + ui.path;
  const handler = async (request: Request): Promise<Response> => {
    if (ui !== undefined && uiBase !== undefined) {
      const { pathname } = new URL(request.url);
      const rest =
        pathname === uiBase
          ? ""
          : pathname.startsWith(`${uiBase}/`)
            ? pathname.slice(uiBase.length)
            : undefined;
      // Only reads: any other method under the UI's path falls through to the API's 404.
      if (rest !== undefined && (request.method === "GET" || request.method === "HEAD")) {
        try {
          return await ui.fetch(request, { path: rest, base: uiBase });
        } catch (error) {
          onError(error, request);
          return errorResponse(new HttpError(500, "INTERNAL", "Internal error"));
        }
      }
    }
    return app.fetch(request);
  };
  return Object.assign(handler, { basePath, owns });
}
