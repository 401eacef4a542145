import { createRoute } from "@hono/zod-openapi";
import type { PublishOptions } from "@tasklane/core";
import { type ApiContext, type App, guarded } from "../api-context.ts";
import { HttpError } from "../errors.ts";
import {
  EnqueueBody,
  EnqueueHeaders,
  EnqueueResultSchema,
  TaskParams,
  TasksSchema,
} from "../schemas.ts";
import { taskView } from "../views.ts";
import { errorResponses, json, jsonBody } from "./responses.ts";

export function registerTaskRoutes(app: App, ctx: ApiContext, basePath: string): void {
  const { tl } = ctx;

  app.openapi(
    guarded(
      ctx,
      "read",
      createRoute({
        method: "get",
        path: "/tasks",
        operationId: "listTasks",
        summary: "Every task: name, lane, retry policy, time limit and payload JSON Schema",
        responses: { 200: json(TasksSchema, "The tasks, in the client's order") },
      }),
    ),
    (c) => c.json({ tasks: [...ctx.tasks.values()].map(taskView) }, 200),
  );

  app.openapi(
    guarded(
      ctx,
      "write",
      createRoute({
        method: "post",
        path: "/tasks/{name}/jobs",
        operationId: "enqueueJob",
        summary: "Publish a job of a task, its payload validated by the task's schema",
        description:
          "Idempotent with a job id (`jobId` in the body or an `Idempotency-Key` header): publishing again with the same id stores nothing and answers 200 with status duplicate. Needs an adapter that de-duplicates (capability dedup).",
        request: { params: TaskParams, headers: EnqueueHeaders, body: jsonBody(EnqueueBody) },
        responses: {
          201: json(EnqueueResultSchema, "Stored"),
          200: json(EnqueueResultSchema, "A job with this id exists already: nothing was stored"),
          ...errorResponses(400, 404, 413, 415, 501, 503),
        },
      }),
    ),
    async (c) => {
      const { name } = c.req.valid("param");
      const task = ctx.tasks.get(name);
      if (task === undefined) {
        throw new HttpError(404, "NOT_FOUND", `No task "${name}"`, { field: "name" });
      }
      const body = c.req.valid("json");
      const key = c.req.valid("header")["idempotency-key"];
      if (body.jobId !== undefined && key !== undefined && body.jobId !== key) {
        throw new HttpError(400, "BAD_REQUEST", "jobId and the Idempotency-Key header differ", {
          field: "jobId",
        });
      }
      const jobId = body.jobId ?? key;
      // Without de-duplication a repeated request would store a second job: refuse the id
      // rather than pretend the call is idempotent.
      if (jobId !== undefined) ctx.require("dedup", "idempotent publishing by job id");
      const options: PublishOptions = {};
      if (jobId !== undefined) options.jobId = jobId;
      if (body.priority !== undefined) options.priority = body.priority;
      if (body.delayMs !== undefined) options.delayMs = body.delayMs;
      if (body.runAt !== undefined) options.runAt = body.runAt;
      if (body.appData !== undefined) options.appData = body.appData;
      if (body.groupId !== undefined) options.groupId = body.groupId;
      // Checked here rather than left to core, so the 501 names the capability.
      if (body.tags !== undefined && body.tags.length > 0) ctx.require("tags", "tagging jobs");
      // SQS takes a group as its own message group (capability messageGroups).
      if (body.group !== undefined && tl.adapter.capabilities.messageGroups !== true) {
        ctx.require("groups", "fair groups");
      }
      if (body.debounce !== undefined) ctx.require("debounce", "debounced publishing");
      if (body.dependsOn !== undefined) ctx.require("flows", "jobs that wait for others");
      if (body.expiresInMs !== undefined || body.expiresAt !== undefined) {
        ctx.require("expiry", "jobs that expire");
      }
      if (body.tags !== undefined) options.tags = body.tags;
      if (body.dependsOn !== undefined) {
        options.dependsOn = body.dependsOn.map((d) => {
          if (typeof d === "string") return d;
          const { jobId, lane, onFailure } = d;
          return {
            jobId,
            ...(lane !== undefined ? { lane } : {}),
            ...(onFailure !== undefined ? { onFailure } : {}),
          };
        });
      }
      if (body.group !== undefined) options.group = body.group;
      if (body.debounce !== undefined) {
        const { key, ms, keep } = body.debounce;
        options.debounce = keep === undefined ? { key, ms } : { key, ms, keep };
      }
      if (body.expiresInMs !== undefined) options.expiresInMs = body.expiresInMs;
      if (body.expiresAt !== undefined) options.expiresAt = body.expiresAt;
      const result = await tl.publish(task, body.payload as never, options);
      const created = result.status === "created";
      c.header(
        "location",
        `${basePath}/lanes/${encodeURIComponent(task.lane)}/jobs/${encodeURIComponent(result.id)}`,
      );
      return c.json(
        { id: result.id, status: result.status, lane: task.lane, task: task.name },
        created ? 201 : 200,
      );
    },
  );
}
