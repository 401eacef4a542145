import { createRoute } from "@hono/zod-openapi";
import type { ScheduleInfo } from "@tasklane/core";
import { type ApiContext, type App, guarded } from "../api-context.ts";
import { HttpError } from "../errors.ts";
import {
  ScheduleParams,
  ScheduleRemovedSchema,
  ScheduleSchema,
  SchedulesSchema,
} from "../schemas.ts";
import { errorResponses, json } from "./responses.ts";

/**
 * Recurring schedules (capability schedules): list, pause, resume and remove. Creating
 * one takes a task and its payload in code (`tl.schedules.upsert`), so the API does not.
 */
export function registerScheduleRoutes(app: App, ctx: ApiContext): void {
  const { tl } = ctx;
  const notFound = (id: string) =>
    new HttpError(404, "NOT_FOUND", `No schedule ${id}`, { field: "id" });
  const found = (id: string, info: ScheduleInfo | undefined): ScheduleInfo => {
    if (info === undefined) throw notFound(id);
    return info;
  };

  app.openapi(
    guarded(
      ctx,
      "read",
      createRoute({
        method: "get",
        path: "/schedules",
        operationId: "listSchedules",
        summary: "Every lane's recurring schedules, with their next slot (capability schedules)",
        responses: {
          200: json(SchedulesSchema, "The schedules"),
          ...errorResponses(501, 503),
        },
      }),
    ),
    async (c) => {
      ctx.require("schedules", "recurring schedules");
      return c.json({ schedules: await tl.schedules.list() }, 200);
    },
  );

  for (const [verb, operationId, summary] of [
    ["pause", "pauseSchedule", "Pause a schedule: no run until it is resumed"],
    [
      "resume",
      "resumeSchedule",
      "Resume a schedule from its first slot after now (slots while paused are not caught up)",
    ],
  ] as const) {
    app.openapi(
      guarded(
        ctx,
        "write",
        createRoute({
          method: "post",
          path: `/schedules/{id}/${verb}`,
          operationId,
          summary,
          request: { params: ScheduleParams },
          responses: {
            200: json(ScheduleSchema, "The schedule now"),
            ...errorResponses(404, 501, 503),
          },
        }),
      ),
      async (c) => {
        ctx.require("schedules", "recurring schedules");
        const { id } = c.req.valid("param");
        const info = await (verb === "pause" ? tl.schedules.pause(id) : tl.schedules.resume(id));
        return c.json(found(id, info), 200);
      },
    );
  }

  app.openapi(
    guarded(
      ctx,
      "write",
      createRoute({
        method: "delete",
        path: "/schedules/{id}",
        operationId: "removeSchedule",
        summary: "Remove a schedule (the jobs it put stay)",
        request: { params: ScheduleParams },
        responses: {
          200: json(ScheduleRemovedSchema, "Removed"),
          ...errorResponses(404, 501, 503),
        },
      }),
    ),
    async (c) => {
      ctx.require("schedules", "recurring schedules");
      const { id } = c.req.valid("param");
      if (!(await tl.schedules.remove(id))) throw notFound(id);
      return c.json({ id, removed: true as const }, 200);
    },
  );
}
