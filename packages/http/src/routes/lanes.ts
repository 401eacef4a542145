import { createRoute } from "@hono/zod-openapi";
import type { LaneHandle } from "@tasklane/core";
import type { z } from "zod";
import { type ApiContext, type App, guarded } from "../api-context.ts";
import {
  CountQuery,
  CountSchema,
  DayQuery,
  FailureGroupsSchema,
  LaneParams,
  LaneSchema,
  LanesSchema,
  PausedSchema,
  StatsSchema,
} from "../schemas.ts";
import { countsView, laneConfigView, statsView } from "../views.ts";
import { searchFilter } from "./filters.ts";
import { errorResponses, json } from "./responses.ts";

export function registerLaneRoutes(app: App, ctx: ApiContext): void {
  const { tl } = ctx;
  const caps = tl.adapter.capabilities;

  /** One lane: config, live counts, paused, today's stats; the three reads go out together. */
  const laneView = async (lane: LaneHandle): Promise<z.infer<typeof LaneSchema>> => {
    const day = ctx.today();
    const [counts, paused, stats] = await Promise.all([
      lane.counts(),
      caps.pause ? lane.isPaused() : null,
      caps.stats ? lane.stats(day) : undefined,
    ]);
    return {
      name: lane.name,
      config: laneConfigView(lane),
      counts: countsView(counts),
      countsExact: caps.exactCounts,
      paused,
      stats: caps.stats ? statsView(stats, day, tl.clock.now()) : null,
    };
  };

  app.openapi(
    guarded(
      ctx,
      "read",
      createRoute({
        method: "get",
        path: "/lanes",
        operationId: "listLanes",
        summary: "Every lane with its config, live counts, paused state and today's stats",
        responses: {
          200: json(LanesSchema, "The lanes, in configuration order"),
          ...errorResponses(503),
        },
      }),
    ),
    async (c) => c.json({ lanes: await Promise.all([...ctx.lanes.values()].map(laneView)) }, 200),
  );

  app.openapi(
    guarded(
      ctx,
      "read",
      createRoute({
        method: "get",
        path: "/lanes/{lane}",
        operationId: "getLane",
        summary: "One lane with its config, live counts, paused state and today's stats",
        request: { params: LaneParams },
        responses: { 200: json(LaneSchema, "The lane"), ...errorResponses(404, 503) },
      }),
    ),
    async (c) => c.json(await laneView(ctx.lane(c.req.valid("param").lane)), 200),
  );

  app.openapi(
    guarded(
      ctx,
      "read",
      createRoute({
        method: "get",
        path: "/lanes/{lane}/stats",
        operationId: "getLaneStats",
        summary:
          "A lane's wait and run times (percentiles, histograms) and throughput for a UTC day",
        request: { params: LaneParams, query: DayQuery },
        responses: {
          200: json(StatsSchema, "The day's stats (zeros for a day without samples)"),
          ...errorResponses(400, 404, 501, 503),
        },
      }),
    ),
    async (c) => {
      const lane = ctx.lane(c.req.valid("param").lane);
      ctx.require("stats", "stats");
      const day = c.req.valid("query").day ?? ctx.today();
      return c.json(statsView(await lane.stats(day), day, tl.clock.now()), 200);
    },
  );

  for (const [verb, operationId, summary] of [
    ["pause", "pauseLane", "Pause a lane: workers take none of its jobs until it is resumed"],
    ["resume", "resumeLane", "Resume a paused lane"],
  ] as const) {
    app.openapi(
      guarded(
        ctx,
        "write",
        createRoute({
          method: "post",
          path: `/lanes/{lane}/${verb}`,
          operationId,
          summary,
          request: { params: LaneParams },
          responses: {
            200: json(PausedSchema, "The lane's state now"),
            ...errorResponses(404, 501, 503),
          },
        }),
      ),
      async (c) => {
        const lane = ctx.lane(c.req.valid("param").lane);
        ctx.require("pause", "pausing lanes");
        await (verb === "pause" ? lane.pause() : lane.resume());
        return c.json({ lane: lane.name, paused: verb === "pause" }, 200);
      },
    );
  }

  app.openapi(
    guarded(
      ctx,
      "read",
      createRoute({
        method: "get",
        path: "/lanes/{lane}/count",
        operationId: "countJobs",
        summary: "How many of a lane's jobs match a filter",
        description:
          "With only a state (or nothing) it is the lane's counts; any other condition needs capability search (tag: also tags). Exact where the backend counts exactly.",
        request: { params: LaneParams, query: CountQuery },
        responses: {
          200: json(CountSchema, "The count"),
          ...errorResponses(400, 404, 501, 503),
        },
      }),
    ),
    async (c) => {
      const lane = ctx.lane(c.req.valid("param").lane);
      const filter = searchFilter(ctx, c.req.valid("query"));
      const count = await lane.count(filter);
      return c.json({ lane: lane.name, count, exact: caps.exactCounts }, 200);
    },
  );

  app.openapi(
    guarded(
      ctx,
      "read",
      createRoute({
        method: "get",
        path: "/lanes/{lane}/failure-groups",
        operationId: "listLaneFailureGroups",
        summary: "A lane's failed jobs grouped by error name, largest group first",
        description:
          'Needs capability failureGroups. Retry or delete a group with POST /lanes/{lane}/jobs/retry (or /delete) and `{"filter": {"state": "failed", "errorName": group}}`.',
        request: { params: LaneParams },
        responses: {
          200: json(FailureGroupsSchema, "The groups"),
          ...errorResponses(404, 501, 503),
        },
      }),
    ),
    async (c) => {
      const lane = ctx.lane(c.req.valid("param").lane);
      ctx.require("failureGroups", "grouping failed jobs by error");
      return c.json({ groups: await lane.failures() }, 200);
    },
  );

  app.openapi(
    guarded(
      ctx,
      "read",
      createRoute({
        method: "get",
        path: "/failure-groups",
        operationId: "listFailureGroups",
        summary: "Failed jobs of every lane grouped by lane and error name, largest group first",
        responses: {
          200: json(FailureGroupsSchema, "The groups"),
          ...errorResponses(501, 503),
        },
      }),
    ),
    async (c) => {
      ctx.require("failureGroups", "grouping failed jobs by error");
      return c.json({ groups: await tl.failures() }, 200);
    },
  );
}
