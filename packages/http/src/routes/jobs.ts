import { createRoute, type RouteConfig } from "@hono/zod-openapi";
import type { CancelResult, JobInfo, JobState, LaneHandle } from "@tasklane/core";
import type { z } from "zod";
import { type ApiContext, type App, guarded } from "../api-context.ts";
import { HttpError, toHttpError } from "../errors.ts";
import { ndjsonStream } from "../ndjson.ts";
import {
  BulkResultSchema,
  bulkBodySchema,
  IdParams,
  JobParams,
  JobSchema,
  JobsSchema,
  LaneParams,
  ListQuery,
  PriorityBody,
  SingleResultSchema,
} from "../schemas.ts";
import { jobView, withLane } from "../views.ts";
import { errorResponses, json, jsonBody } from "./responses.ts";

/** Jobs fetched per backend round trip while streaming a list. */
const LIST_PAGE_SIZE = 500;

type BulkResult = z.infer<typeof BulkResultSchema>;

export function registerJobRoutes(app: App, ctx: ApiContext): void {
  const { tl } = ctx;
  const caps = tl.adapter.capabilities;

  app.openapi(
    guarded(
      ctx,
      "read",
      createRoute({
        method: "get",
        path: "/lanes/{lane}/jobs",
        operationId: "listJobs",
        summary:
          "A lane's jobs in one state, streamed as NDJSON (one Job per line) in constant memory",
        description:
          'Lines are Job objects. If reading the backend fails after the answer has started, the last line is `{"error": {code, message}}`.',
        request: { params: LaneParams, query: ListQuery },
        responses: {
          200: {
            description: "One Job per line",
            content: { "application/x-ndjson": { schema: JobSchema } },
          },
          ...errorResponses(400, 404, 501, 503),
        },
      }),
    ),
    async (c) => {
      const lane = ctx.lane(c.req.valid("param").lane);
      ctx.require("list", "listing jobs");
      const { state, limit, offset } = c.req.valid("query");
      const options: {
        line: (info: JobInfo) => string;
        errorLine: (e: unknown) => string;
        limit?: number;
        offset?: number;
      } = {
        line: (info) => JSON.stringify(jobView(withLane(info, lane.name))),
        errorLine: (error) => {
          const known = toHttpError(error);
          return JSON.stringify({
            error: known ? known.body() : { code: "INTERNAL", message: "Listing failed" },
          });
        },
      };
      if (limit !== undefined) options.limit = limit;
      if (offset !== undefined) options.offset = offset;
      const stream = await ndjsonStream(lane.list({ state, pageSize: LIST_PAGE_SIZE }), options);
      return new Response(stream, {
        status: 200,
        headers: {
          "content-type": "application/x-ndjson; charset=utf-8",
          "cache-control": "no-store",
        },
      }) as never;
    },
  );

  app.openapi(
    guarded(
      ctx,
      "read",
      createRoute({
        method: "get",
        path: "/lanes/{lane}/jobs/{id}",
        operationId: "getJob",
        summary: "One job: payload, appData, state, attempts, times, error with stack, history",
        request: { params: JobParams },
        responses: { 200: json(JobSchema, "The job"), ...errorResponses(404, 501, 503) },
      }),
    ),
    async (c) => {
      const { lane: name, id } = c.req.valid("param");
      const lane = ctx.lane(name);
      ctx.require("get", "reading a job by id");
      const info = await lane.get(id);
      if (info === undefined) throw noJob(lane, id);
      return c.json(jobView(withLane(info, lane.name)), 200);
    },
  );

  app.openapi(
    guarded(
      ctx,
      "read",
      createRoute({
        method: "get",
        path: "/jobs/{id}",
        operationId: "findJob",
        summary:
          "Find a job by id in every lane (ids are unique per lane, so there may be several)",
        request: { params: IdParams },
        responses: { 200: json(JobsSchema, "The jobs with that id"), ...errorResponses(501, 503) },
      }),
    ),
    async (c) => {
      const { id } = c.req.valid("param");
      ctx.require("get", "reading a job by id");
      const found = await Promise.all(
        [...ctx.lanes.values()].map(async (lane) => {
          const info = await lane.get(id);
          return info && jobView(withLane(info, lane.name));
        }),
      );
      return c.json({ jobs: found.filter((job) => job !== undefined) }, 200);
    },
  );

  // ── one job ──────────────────────────────────────────────────────────────────────────

  /** 404 or 409 for a job an operation did not change: a get tells which, where the adapter can. */
  const unchanged = async (lane: LaneHandle, id: string, wanted: string): Promise<never> => {
    const info = caps.get ? await lane.get(id) : undefined;
    if (info === undefined) throw noJob(lane, id, caps.get ? "" : ` ${wanted}`);
    throw new HttpError(
      409,
      "CONFLICT",
      `Job ${id} is ${info.state}; the operation needs it ${wanted}`,
    );
  };

  app.openapi(
    guarded(
      ctx,
      "write",
      createRoute({
        method: "post",
        path: "/lanes/{lane}/jobs/{id}/retry",
        operationId: "retryJob",
        summary: "Put one failed job back to waiting",
        request: { params: JobParams },
        responses: {
          200: json(SingleResultSchema, "Retried"),
          ...errorResponses(404, 409, 501, 503),
        },
      }),
    ),
    async (c) => {
      const { lane: name, id } = c.req.valid("param");
      const lane = ctx.lane(name);
      ctx.require("retryFailed", "retrying failed jobs");
      if ((await lane.retryFailed([id])) === 1)
        return c.json({ id, outcome: "retried" as const }, 200);
      return unchanged(lane, id, "failed");
    },
  );

  app.openapi(
    guarded(
      ctx,
      "write",
      createRoute({
        method: "post",
        path: "/lanes/{lane}/jobs/{id}/cancel",
        operationId: "cancelJob",
        summary: "Cancel one waiting, delayed or active job (a running handler's signal aborts)",
        request: { params: JobParams },
        responses: {
          200: json(SingleResultSchema, "Canceled"),
          ...errorResponses(404, 409, 501, 503),
        },
      }),
    ),
    async (c) => {
      const { lane: name, id } = c.req.valid("param");
      const lane = ctx.lane(name);
      ctx.require("cancel", "canceling jobs");
      const [result] = await lane.cancel([id]);
      if (result === "canceled") return c.json({ id, outcome: "canceled" as const }, 200);
      if (result === "finished")
        throw new HttpError(409, "CONFLICT", `Job ${id} has already finished`);
      throw noJob(lane, id);
    },
  );

  app.openapi(
    guarded(
      ctx,
      "write",
      createRoute({
        method: "delete",
        path: "/lanes/{lane}/jobs/{id}",
        operationId: "deleteJob",
        summary: "Delete one job in any state but active (cancel a running job first)",
        request: { params: JobParams },
        responses: {
          200: json(SingleResultSchema, "Deleted"),
          ...errorResponses(404, 409, 501, 503),
        },
      }),
    ),
    async (c) => {
      const { lane: name, id } = c.req.valid("param");
      const lane = ctx.lane(name);
      ctx.require("delete", "deleting jobs");
      if ((await lane.delete([id])) === 1) return c.json({ id, outcome: "deleted" as const }, 200);
      return unchanged(lane, id, "not active");
    },
  );

  app.openapi(
    guarded(
      ctx,
      "write",
      createRoute({
        method: "post",
        path: "/lanes/{lane}/jobs/{id}/promote",
        operationId: "promoteJob",
        summary: "Run a delayed job now (501 until the adapter can)",
        request: { params: JobParams },
        responses: errorResponses(404, 501),
      }),
    ),
    async (c) => {
      ctx.lane(c.req.valid("param").lane);
      return ctx.notYet("promote", "Promoting a delayed job");
    },
  );

  app.openapi(
    guarded(
      ctx,
      "write",
      createRoute({
        method: "post",
        path: "/lanes/{lane}/jobs/{id}/priority",
        operationId: "changeJobPriority",
        summary: "Change a waiting or delayed job's priority (501 until the adapter can)",
        request: { params: JobParams, body: jsonBody(PriorityBody) },
        responses: errorResponses(400, 404, 415, 501),
      }),
    ),
    async (c) => {
      ctx.lane(c.req.valid("param").lane);
      return ctx.notYet("changePriority", "Changing a job's priority");
    },
  );

  // ── many jobs: { ids } or { filter, limit }, at most bulkLimit per call ──────────────

  /**
   * The ids a bulk call works on: the given ones, or up to `limit` found by the filter.
   * `more` says the filter found more: the operation moves the jobs it changes out of
   * the filter's state, so calling again goes on where this call stopped.
   */
  const select = async (
    lane: LaneHandle,
    body: {
      ids?: string[] | undefined;
      filter?: { state: JobState } | undefined;
      limit?: number | undefined;
    },
  ): Promise<{ ids: string[]; more: boolean }> => {
    if (body.ids !== undefined) return { ids: [...new Set(body.ids)], more: false };
    const state = (body.filter as { state: JobState }).state;
    ctx.require("list", "finding jobs by filter");
    const limit = body.limit ?? ctx.bulkLimit;
    const ids: string[] = [];
    for await (const info of lane.list({ state, pageSize: Math.min(limit + 1, 1000) })) {
      if (ids.length === limit) return { ids, more: true };
      ids.push(info.id);
    }
    return { ids, more: false };
  };

  const bulkRoute = <B extends z.ZodType, R extends RouteConfig["responses"]>(
    verb: string,
    operationId: string,
    summary: string,
    body: B,
    responses: R,
  ) =>
    guarded(
      ctx,
      "write",
      createRoute({
        method: "post",
        path: `/lanes/{lane}/jobs/${verb}`,
        operationId,
        summary,
        request: { params: LaneParams, body: jsonBody(body) },
        responses,
      }),
    );
  const bulkResponses = {
    200: json(BulkResultSchema, "What this call did"),
    ...errorResponses(400, 404, 413, 415, 501, 503),
  };

  const RetryBody = bulkBodySchema("BulkRetryRequest", ["failed"], ctx.bulkLimit);
  app.openapi(
    bulkRoute("retry", "retryJobs", "Put failed jobs back to waiting", RetryBody, bulkResponses),
    async (c) => {
      const lane = ctx.lane(c.req.valid("param").lane);
      ctx.require("retryFailed", "retrying failed jobs");
      const { ids, more } = await select(lane, c.req.valid("json"));
      const changed = ids.length === 0 ? 0 : await lane.retryFailed(ids);
      return c.json({ matched: ids.length, changed, more } satisfies BulkResult, 200);
    },
  );

  const CancelBody = bulkBodySchema(
    "BulkCancelRequest",
    ["waiting", "delayed", "active"],
    ctx.bulkLimit,
  );
  app.openapi(
    bulkRoute(
      "cancel",
      "cancelJobs",
      "Cancel waiting, delayed or active jobs",
      CancelBody,
      bulkResponses,
    ),
    async (c) => {
      const lane = ctx.lane(c.req.valid("param").lane);
      ctx.require("cancel", "canceling jobs");
      const body = c.req.valid("json");
      if (body.filter?.state === "active") ctx.require("cancelActive", "canceling active jobs");
      const { ids, more } = await select(lane, body);
      const results: CancelResult[] = ids.length === 0 ? [] : await lane.cancel(ids);
      const outcomes: Record<CancelResult, number> = { canceled: 0, not_found: 0, finished: 0 };
      for (const r of results) outcomes[r]++;
      return c.json(
        { matched: ids.length, changed: outcomes.canceled, more, outcomes } satisfies BulkResult,
        200,
      );
    },
  );

  const DeleteBody = bulkBodySchema(
    "BulkDeleteRequest",
    ["waiting", "delayed", "succeeded", "failed", "canceled"],
    ctx.bulkLimit,
  );
  app.openapi(
    bulkRoute(
      "delete",
      "deleteJobs",
      "Delete jobs in any state but active",
      DeleteBody,
      bulkResponses,
    ),
    async (c) => {
      const lane = ctx.lane(c.req.valid("param").lane);
      ctx.require("delete", "deleting jobs");
      const { ids, more } = await select(lane, c.req.valid("json"));
      const changed = ids.length === 0 ? 0 : await lane.delete(ids);
      return c.json({ matched: ids.length, changed, more } satisfies BulkResult, 200);
    },
  );

  const PromoteBody = bulkBodySchema("BulkPromoteRequest", ["delayed"], ctx.bulkLimit);
  app.openapi(
    bulkRoute(
      "promote",
      "promoteJobs",
      "Run delayed jobs now (501 until the adapter can)",
      PromoteBody,
      errorResponses(400, 404, 415, 501),
    ),
    async (c) => {
      ctx.lane(c.req.valid("param").lane);
      return ctx.notYet("promote", "Promoting delayed jobs");
    },
  );

  const PriorityBulkBody = bulkBodySchema(
    "BulkPriorityRequest",
    ["waiting", "delayed"],
    ctx.bulkLimit,
    {
      priority: PriorityBody.shape.priority,
    },
  );
  app.openapi(
    bulkRoute(
      "priority",
      "changeJobsPriority",
      "Change jobs' priority (501 until the adapter can)",
      PriorityBulkBody,
      errorResponses(400, 404, 415, 501),
    ),
    async (c) => {
      ctx.lane(c.req.valid("param").lane);
      return ctx.notYet("changePriority", "Changing jobs' priority");
    },
  );
}

function noJob(lane: LaneHandle, id: string, what = ""): HttpError {
  return new HttpError(404, "NOT_FOUND", `No${what} job ${id} in lane ${lane.name}`, {
    field: "id",
  });
}
