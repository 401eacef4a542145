import { createRoute, type RouteConfig } from "@hono/zod-openapi";
import type {
  CancelResult,
  ChangeResult,
  JobFilter,
  JobInfo,
  JobSummary,
  LaneHandle,
  MoveResult,
} from "@tasklane/core";
import { z } from "zod";
import { type ApiContext, type App, guarded } from "../api-context.ts";
import { HttpError, toHttpError } from "../errors.ts";
import { ndjsonStream } from "../ndjson.ts";
import {
  BulkCursorField,
  BulkResultSchema,
  bulkBodySchema,
  IdParams,
  JobParams,
  JobResultSchema,
  JobSchema,
  JobSummarySchema,
  JobsSchema,
  LaneParams,
  ListQuery,
  MoveBody,
  MoveShape,
  PriorityBody,
  ResultQuery,
  SingleResultSchema,
} from "../schemas.ts";
import { jobView, summaryView } from "../views.ts";
import { decodeCursor, encodeCursor, type FilterInput, searchFilter } from "./filters.ts";
import { errorResponses, json, jsonBody } from "./responses.ts";

/** Jobs fetched per backend round trip while streaming a list. */
const LIST_PAGE_SIZE = 500;

type BulkResult = z.infer<typeof BulkResultSchema>;

/** The states a job ends in: a result request answers done for them. */
const FINISHED = new Set(["succeeded", "failed", "canceled", "expired"]);

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
          "A lane's jobs matching a filter, streamed as NDJSON (one Job per line) in constant memory",
        description: [
          'Lines are Job objects (JobSummary with `fields=summary`). If reading the backend fails after the answer has started, the last line is `{"error": {code, message}}` (with `next` to go on from, where the listing has a cursor).',
          'With capability search, a listing that `limit` stopped before its end ends with the line `{"next": "<cursor>"}`: pass it as `cursor`, with the same filter, for the jobs after it. No such line: nothing more matched. A job that stays in its state is listed exactly once across the pages.',
        ].join("\n\n"),
        request: { params: LaneParams, query: ListQuery },
        responses: {
          200: {
            description: "One Job (or JobSummary) per line",
            content: {
              "application/x-ndjson": { schema: z.union([JobSchema, JobSummarySchema]) },
            },
          },
          ...errorResponses(400, 404, 501, 503),
        },
      }),
    ),
    async (c) => {
      const lane = ctx.lane(c.req.valid("param").lane);
      const { fields, cursor, limit, offset, ...conditions } = c.req.valid("query");
      const filter = searchFilter(ctx, conditions, { needState: true });
      if (cursor !== undefined) ctx.require("search", "going on from a cursor");
      if (!caps.search) ctx.require("list", "listing jobs");
      const summary = fields === "summary";
      const line = summary
        ? (job: JobSummary) => JSON.stringify(summaryView(job, lane.name))
        : (job: JobSummary) => JSON.stringify(jobView(job as JobInfo, lane.name));
      const errorBody = (error: unknown) => {
        const known = toHttpError(error);
        return known ? known.body() : { code: "INTERNAL", message: "Listing failed" };
      };

      if (!caps.search) {
        // A state alone, through the adapter's list: limit and offset are counted here.
        const state = filter.state as NonNullable<JobFilter["state"]>;
        const stream = await ndjsonStream(lane.list({ state, pageSize: LIST_PAGE_SIZE }), {
          line,
          errorLine: (error) => JSON.stringify({ error: errorBody(error) }),
          ...(limit !== undefined ? { limit } : {}),
          ...(offset !== undefined ? { offset } : {}),
        });
        return ndjsonResponse(stream);
      }

      // listPage, page by page. Each page asks for at most what is still wanted, so the
      // adapter's cursor after a page is exactly where the answer stopped: the `next` of
      // the last line, or of an error line, goes on without a gap or a repeat.
      const start = cursor === undefined ? undefined : decodeCursor(lane.name, filter, cursor);
      const where: { at: string | undefined; next: string | undefined } = {
        at: start,
        next: undefined,
      };
      const wire = (adapterCursor: string) => encodeCursor(lane.name, filter, adapterCursor);
      async function* jobs(): AsyncGenerator<JobSummary> {
        let skip = offset ?? 0;
        let left = limit ?? Number.POSITIVE_INFINITY;
        let at = start;
        while (left > 0) {
          const pageSize = Math.min(LIST_PAGE_SIZE, skip + left);
          const page = await lane.listPage({ ...filter, fields: fields ?? "full", pageSize }, at);
          for (const job of page.jobs) {
            if (skip > 0) skip--;
            else {
              left--;
              yield job;
            }
          }
          at = page.cursor;
          where.at = at;
          if (at === undefined) return;
        }
        where.next = at;
      }
      const stream = await ndjsonStream(jobs(), {
        line,
        errorLine: (error) =>
          JSON.stringify({
            error: errorBody(error),
            ...(where.at !== undefined ? { next: wire(where.at) } : {}),
          }),
        trailer: () =>
          where.next === undefined ? undefined : JSON.stringify({ next: wire(where.next) }),
      });
      return ndjsonResponse(stream);
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
        summary:
          "One job: payload, appData, state, attempts, times, error with stack, history, and where the adapter keeps them result, progress, logs, tags and expiry",
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
      return c.json(jobView(info, lane.name), 200);
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
          return info && jobView(info, lane.name);
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

  /** 404 or 409 for an id a change did not apply to, by its result. */
  const refused = async (
    lane: LaneHandle,
    id: string,
    result: ChangeResult | MoveResult | undefined,
    wanted: string,
  ): Promise<never> => {
    if (result === "not_found" || result === undefined) throw noJob(lane, id);
    if (result === "duplicate") {
      throw new HttpError(409, "CONFLICT", `The target lane already holds a job ${id}`);
    }
    return unchanged(lane, id, wanted);
  };

  app.openapi(
    guarded(
      ctx,
      "write",
      createRoute({
        method: "post",
        path: "/lanes/{lane}/jobs/{id}/promote",
        operationId: "promoteJob",
        summary: "Run a delayed job now (capability promote); a waiting job is already due",
        request: { params: JobParams },
        responses: {
          200: json(SingleResultSchema, "Promoted"),
          ...errorResponses(404, 409, 501, 503),
        },
      }),
    ),
    async (c) => {
      const { lane: name, id } = c.req.valid("param");
      const lane = ctx.lane(name);
      ctx.require("promote", "promoting delayed jobs");
      const [result] = await lane.promote([id]);
      if (result === "ok") return c.json({ id, outcome: "promoted" as const }, 200);
      return refused(lane, id, result, "delayed or waiting");
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
        summary:
          "Change a waiting or delayed job's priority (capability changePriority); a delayed job takes it when due",
        request: { params: JobParams, body: jsonBody(PriorityBody) },
        responses: {
          200: json(SingleResultSchema, "Changed"),
          ...errorResponses(400, 404, 409, 415, 501, 503),
        },
      }),
    ),
    async (c) => {
      const { lane: name, id } = c.req.valid("param");
      const { priority } = c.req.valid("json");
      const lane = ctx.lane(name);
      ctx.require("changePriority", "changing a job's priority");
      const [result] = await lane.setPriority([id], priority);
      if (result === "ok") return c.json({ id, outcome: "prioritized" as const, priority }, 200);
      return refused(lane, id, result, "waiting or delayed");
    },
  );

  /** The target of a move: one of the client's lanes, not the source; else 400 naming `toLane`. */
  const targetLane = (source: LaneHandle, toLane: string): string => {
    if (!ctx.lanes.has(toLane)) {
      throw new HttpError(
        400,
        "BAD_REQUEST",
        `toLane: no lane "${toLane}" (lanes: ${[...ctx.lanes.keys()].join(", ")})`,
        { field: "toLane" },
      );
    }
    if (toLane === source.name) {
      throw new HttpError(400, "BAD_REQUEST", "toLane: is the lane the jobs are in", {
        field: "toLane",
      });
    }
    return toLane;
  };

  app.openapi(
    guarded(
      ctx,
      "write",
      createRoute({
        method: "post",
        path: "/lanes/{lane}/jobs/{id}/move",
        operationId: "moveJob",
        summary:
          "Move a waiting, delayed, failed or running job to another lane, keeping its id (capability move)",
        description:
          "A running job's handler is aborted (MovedError) and the job runs again in the target lane, the interrupted run not counted; a failed one is due at once there, attempts reset.",
        request: { params: JobParams, body: jsonBody(MoveBody) },
        responses: {
          200: json(SingleResultSchema, "Moved"),
          ...errorResponses(400, 404, 409, 415, 501, 503),
        },
      }),
    ),
    async (c) => {
      const { lane: name, id } = c.req.valid("param");
      const lane = ctx.lane(name);
      const toLane = targetLane(lane, c.req.valid("json").toLane);
      ctx.require("move", "moving jobs between lanes");
      const [result] = await lane.move([id], toLane);
      if (result === "moved") return c.json({ id, outcome: "moved" as const, lane: toLane }, 200);
      return refused(lane, id, result, "waiting, delayed, active or failed");
    },
  );

  app.openapi(
    guarded(
      ctx,
      "read",
      createRoute({
        method: "get",
        path: "/jobs/{id}/result",
        operationId: "getJobResult",
        summary: "A job's outcome: state, and its result or error once finished; waits with waitMs",
        description: [
          "Answers 200 with `done: false` while the job is pending, and with its `result` (succeeded) or `error` (failed) once it finished. With `waitMs` it first waits up to that long for the job to finish (capability waitFor), from any process, and answers as soon as it does; a client that goes away ends the wait.",
          "The job is looked for in every lane, in configuration order (ids are unique per lane).",
        ].join("\n\n"),
        request: { params: IdParams, query: ResultQuery },
        responses: {
          200: json(JobResultSchema, "The job's outcome so far"),
          ...errorResponses(400, 404, 501, 503),
        },
      }),
    ),
    async (c) => {
      const { id } = c.req.valid("param");
      const waitMs = c.req.valid("query").waitMs ?? 0;
      ctx.require("get", "reading a job by id");
      if (waitMs > 0) {
        ctx.require("waitFor", "waiting for a job to finish");
        const signal = c.req.raw.signal;
        try {
          await tl.waitFor(id, { timeoutMs: waitMs, signal });
        } catch (error) {
          const code = (error as { code?: unknown }).code;
          if (code === "JOB_NOT_FOUND") throw noJobAnywhere(id);
          // Failed, canceled, expired, still running, or the client left: the read says which.
          if (code !== "JOB_FAILED" && code !== "WAIT_TIMEOUT" && !signal.aborted) throw error;
        }
      }
      const job = await tl.getJob(id);
      if (job === undefined) throw noJobAnywhere(id);
      const answer: z.infer<typeof JobResultSchema> = {
        id,
        lane: job.lane,
        state: job.state,
        done: FINISHED.has(job.state),
      };
      if (job.result !== undefined) answer.result = job.result;
      if (job.error !== undefined && job.state === "failed") answer.error = job.error;
      if (job.finishedAt !== undefined) answer.finishedAt = job.finishedAt;
      return c.json(answer, 200);
    },
  );

  // ── many jobs: { ids } or { filter, limit }, at most bulkLimit per call ──────────────

  type BulkBody = {
    ids?: string[] | undefined;
    filter?: FilterInput | undefined;
    limit?: number | undefined;
    cursor?: string | undefined;
  };

  /**
   * The ids a bulk call works on: the given ones, or up to `limit` found by the filter.
   * `more` says the filter found more: retry, cancel, delete, promote and move take the
   * jobs they change out of the filter's state, so calling again goes on where this call
   * stopped. Priority leaves them in it: with `resumable` the call answers `next`, the
   * cursor after the last job it selected, to pass back as `cursor`.
   */
  const select = async (
    lane: LaneHandle,
    body: BulkBody,
    resumable = false,
  ): Promise<{ ids: string[]; more: boolean; next?: string }> => {
    if (body.ids !== undefined) return { ids: [...new Set(body.ids)], more: false };
    const filter = searchFilter(ctx, body.filter as FilterInput);
    const limit = body.limit ?? ctx.bulkLimit;
    const ids: string[] = [];
    if (!caps.search) {
      if (resumable) ctx.require("search", "changing jobs by filter page by page (a cursor)");
      ctx.require("list", "finding jobs by filter");
      const state = filter.state as NonNullable<JobFilter["state"]>;
      for await (const info of lane.list({ state, pageSize: Math.min(limit + 1, 1000) })) {
        if (ids.length === limit) return { ids, more: true };
        ids.push(info.id);
      }
      return { ids, more: false };
    }
    // Pages end where the selection ends (resumable), or one job past it, to tell `more`.
    const extra = resumable ? 0 : 1;
    let at = body.cursor === undefined ? undefined : decodeCursor(lane.name, filter, body.cursor);
    for (;;) {
      const pageSize = Math.min(limit + extra - ids.length, 1_000);
      const page = await lane.listPage({ ...filter, fields: "summary", pageSize }, at);
      for (const job of page.jobs) {
        if (ids.length === limit) return { ids, more: true };
        ids.push(job.id);
      }
      at = page.cursor;
      if (at === undefined) return { ids, more: false };
      if (resumable && ids.length === limit) {
        return { ids, more: true, next: encodeCursor(lane.name, filter, at) };
      }
    }
  };

  /** How many results of each kind. */
  const tally = <R extends string>(results: readonly R[], kinds: readonly R[]) => {
    const outcomes = Object.fromEntries(kinds.map((k) => [k, 0])) as Record<R, number>;
    for (const r of results) outcomes[r]++;
    return outcomes;
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
    ["waiting", "delayed", "blocked", "active"],
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
      const outcomes = tally(results, ["canceled", "not_found", "finished"] as const);
      return c.json(
        { matched: ids.length, changed: outcomes.canceled, more, outcomes } satisfies BulkResult,
        200,
      );
    },
  );

  const DeleteBody = bulkBodySchema(
    "BulkDeleteRequest",
    ["waiting", "delayed", "blocked", "succeeded", "failed", "canceled"],
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

  const CHANGE_RESULTS = ["ok", "not_found", "wrong_state"] as const;

  const PromoteBody = bulkBodySchema("BulkPromoteRequest", ["delayed"], ctx.bulkLimit);
  app.openapi(
    bulkRoute(
      "promote",
      "promoteJobs",
      "Run delayed jobs now (capability promote)",
      PromoteBody,
      bulkResponses,
    ),
    async (c) => {
      const lane = ctx.lane(c.req.valid("param").lane);
      ctx.require("promote", "promoting delayed jobs");
      const { ids, more } = await select(lane, c.req.valid("json"));
      const results: ChangeResult[] = ids.length === 0 ? [] : await lane.promote(ids);
      const outcomes = tally(results, CHANGE_RESULTS);
      return c.json(
        { matched: ids.length, changed: outcomes.ok, more, outcomes } satisfies BulkResult,
        200,
      );
    },
  );

  const PriorityBulkBody = bulkBodySchema(
    "BulkPriorityRequest",
    ["waiting", "delayed"],
    ctx.bulkLimit,
    { priority: PriorityBody.shape.priority, cursor: BulkCursorField },
  );
  app.openapi(
    bulkRoute(
      "priority",
      "changeJobsPriority",
      "Change waiting and delayed jobs' priority (capability changePriority)",
      PriorityBulkBody,
      bulkResponses,
    ),
    async (c) => {
      const lane = ctx.lane(c.req.valid("param").lane);
      const body = c.req.valid("json");
      ctx.require("changePriority", "changing jobs' priority");
      const { ids, more, next } = await select(lane, body, true);
      const results: ChangeResult[] =
        ids.length === 0 ? [] : await lane.setPriority(ids, body.priority);
      const outcomes = tally(results, CHANGE_RESULTS);
      const answer: BulkResult = { matched: ids.length, changed: outcomes.ok, more, outcomes };
      if (next !== undefined) answer.next = next;
      return c.json(answer, 200);
    },
  );

  const MoveBulkBody = bulkBodySchema(
    "BulkMoveRequest",
    ["waiting", "delayed", "active", "failed"],
    ctx.bulkLimit,
    MoveShape,
  );
  app.openapi(
    bulkRoute(
      "move",
      "moveJobs",
      "Move jobs to another lane, keeping their ids (capability move)",
      MoveBulkBody,
      bulkResponses,
    ),
    async (c) => {
      const lane = ctx.lane(c.req.valid("param").lane);
      const body = c.req.valid("json");
      const toLane = targetLane(lane, body.toLane);
      ctx.require("move", "moving jobs between lanes");
      const { ids, more } = await select(lane, body);
      const results: MoveResult[] = ids.length === 0 ? [] : await lane.move(ids, toLane);
      const outcomes = tally(results, [
        "moved",
        "not_found",
        "finished",
        "duplicate",
        "blocked",
      ] as const);
      return c.json(
        { matched: ids.length, changed: outcomes.moved, more, outcomes } satisfies BulkResult,
        200,
      );
    },
  );
}

/** An NDJSON answer that caches nothing. */
function ndjsonResponse(stream: ReadableStream<Uint8Array>): never {
  return new Response(stream, {
    status: 200,
    headers: {
      "content-type": "application/x-ndjson; charset=utf-8",
      "cache-control": "no-store",
    },
  }) as never;
}

function noJobAnywhere(id: string): HttpError {
  return new HttpError(404, "NOT_FOUND", `No job ${id} in any lane`, { field: "id" });
}

function noJob(lane: LaneHandle, id: string, what = ""): HttpError {
  return new HttpError(404, "NOT_FOUND", `No${what} job ${id} in lane ${lane.name}`, {
    field: "id",
  });
}
