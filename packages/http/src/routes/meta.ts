import { createRoute } from "@hono/zod-openapi";
import { type Capabilities, LIFECYCLE_EVENT_TYPES, OPERATOR_CAPABILITIES } from "@tasklane/core";
import { type ApiContext, type App, guarded, NOT_YET_SUPPORTED } from "../api-context.ts";
import { HttpError } from "../errors.ts";
import { type EventSource, openEventStream } from "../event-stream.ts";
import { EventsQuery, InfoSchema, WorkersSchema } from "../schemas.ts";
import { errorResponses, json } from "./responses.ts";

/** Every event type a stream can carry: this process's and the backend's. */
const EVENT_TYPES = new Set<string>([
  ...LIFECYCLE_EVENT_TYPES,
  "canceled",
  "put",
  "progress",
  "retrying",
  "lock_lost",
  "drained",
  "error",
]);

export function registerMetaRoutes(app: App, ctx: ApiContext): void {
  const { tl } = ctx;
  const caps = tl.adapter.capabilities;

  app.openapi(
    guarded(
      ctx,
      "read",
      createRoute({
        method: "get",
        path: "/",
        operationId: "getInfo",
        summary:
          "The adapter and its capabilities, the lanes and tasks, and what answers 501 in this version",
        responses: { 200: json(InfoSchema, "What this API can do here") },
      }),
    ),
    (c) =>
      c.json(
        {
          adapter: { name: tl.adapter.name, capabilities: capabilitiesOf(caps) },
          scope: ctx.scopeOf(c.req.raw) ?? "read",
          lanes: [...ctx.lanes.keys()],
          tasks: [...ctx.tasks.keys()],
          notYetSupported: [...NOT_YET_SUPPORTED],
        },
        200,
      ),
  );

  app.openapi(
    guarded(
      ctx,
      "read",
      createRoute({
        method: "get",
        path: "/workers",
        operationId: "listWorkers",
        summary:
          "The running workers serving this client's lanes, from every process (capability workers)",
        description:
          "Each worker registers at start and on every heartbeat, deregisters at stop, and drops out three heartbeat periods after its last renewal (a crashed process). Lanes are named as configured.",
        responses: {
          200: json(WorkersSchema, "The workers, oldest first"),
          ...errorResponses(501, 503),
        },
      }),
    ),
    async (c) => {
      ctx.require("workers", "listing workers (the worker registry)");
      return c.json({ workers: await tl.workers() }, 200);
    },
  );

  app.openapi(
    guarded(
      ctx,
      "read",
      createRoute({
        method: "get",
        path: "/events",
        operationId: "streamEvents",
        summary: "Job events as Server-Sent Events",
        description: [
          "Each event's `event:` is its type and `data:` its JSON, with `source`: `backend` (every process's lifecycle events, through tl.subscribe: published, started, succeeded, retrying, failed, stalled, released, retried, deleted, canceled, and with the operator capabilities expired, moved, progress) or `process` (this process's tl.events: published, started, progress, succeeded, retrying, failed, lock_lost, canceled, put, stalled, drained, error).",
          "The first event, `ready`, comes once every source is subscribed. A comment line keeps the stream alive. A client that reads slower than events come loses some: a `dropped` event with their `count` says how many. Delivery is at most once.",
        ].join("\n\n"),
        request: { query: EventsQuery },
        responses: {
          200: {
            description: "An event stream",
            content: { "text/event-stream": { schema: { type: "string" } } },
          },
          ...errorResponses(400, 501),
        },
      }),
    ),
    async (c) => {
      const query = c.req.valid("query");
      const list = (text: string | undefined, field: string, known: ReadonlySet<string>) => {
        if (text === undefined) return undefined;
        const names = new Set(
          text
            .split(",")
            .map((s) => s.trim())
            .filter((s) => s !== ""),
        );
        for (const name of names) {
          if (!known.has(name)) {
            throw new HttpError(
              400,
              "BAD_REQUEST",
              `Unknown ${field.replace(/s$/, "")} "${name}"`,
              { field },
            );
          }
        }
        return names;
      };
      const lanes = list(query.lanes, "lanes", new Set(ctx.lanes.keys()));
      const types = list(query.types, "types", EVENT_TYPES);
      const source = query.source ?? (caps.lifecycleEvents ? "backend" : "process");
      const sources = new Set<EventSource>(source === "all" ? ["backend", "process"] : [source]);
      if (sources.has("backend")) ctx.require("subscribe", "events from other processes");
      const stream = await openEventStream(tl, {
        sources,
        lanes,
        types,
        heartbeatMs: ctx.eventHeartbeatMs,
        maxQueued: ctx.eventQueueLimit,
        signal: c.req.raw.signal,
      });
      return new Response(stream, {
        status: 200,
        headers: {
          "content-type": "text/event-stream; charset=utf-8",
          "cache-control": "no-cache",
          // nginx buffers responses by default, which would hold events back.
          "x-accel-buffering": "no",
        },
      }) as never;
    },
  );
}

/**
 * Every capability as a value: an operator capability (or `flows`) an adapter leaves out
 * is false.
 */
function capabilitiesOf(caps: Capabilities): Record<string, boolean | number> {
  const out: Record<string, boolean | number> = {};
  for (const [name, value] of Object.entries(caps)) {
    if (typeof value === "boolean" || typeof value === "number") out[name] = value;
  }
  for (const name of OPERATOR_CAPABILITIES) out[name] = caps[name] === true;
  out.flows = caps.flows === true;
  return out;
}
