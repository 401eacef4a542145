import type { Tasklane } from "@tasklane/core";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import {
  call,
  createClient,
  makeFailedJobs,
  ndjson,
  report,
  sendEmail,
  serve,
  type TestServer,
} from "./helpers.ts";

/** Every write in these tests is allowed; auth.test.ts checks the refusals. */
const authorize = () => "write" as const;

let tl: Tasklane;
let srv: TestServer;

beforeEach(async () => {
  tl = createClient();
  srv = await serve({ tasklane: tl, basePath: "/tasklane", authorize });
});

afterEach(async () => {
  await srv.close();
  await tl.close();
});

describe("lanes", () => {
  it("lists every lane in configuration order with config, live counts, paused and today's stats", async () => {
    await tl.publishMany(sendEmail, [
      { payload: { to: "a@example.com", subject: "1" } },
      { payload: { to: "b@example.com", subject: "2" }, delayMs: 60_000 },
    ]);
    await tl.lane("low").pause();
    const { status, body } = await call(`${srv.url}/lanes`);
    expect(status).toBe(200);
    const lanes = body.lanes as Array<Record<string, unknown>>;
    expect(lanes.map((l) => l.name)).toEqual(["high", "default", "low"]);
    const def = lanes[1] as Record<string, unknown>;
    expect(def.counts).toEqual({
      waiting: 1,
      delayed: 1,
      blocked: 0,
      active: 0,
      succeeded: 0,
      failed: 0,
      canceled: 0,
      expired: 0,
    });
    expect(def.config).toMatchObject({ priority: 40, batchSize: 10, leaseMs: 60_000 });
    expect(def.countsExact).toBe(true);
    expect(def.paused).toBe(false);
    expect(lanes[2]?.paused).toBe(true);
    expect(def.stats).toMatchObject({
      day: new Date().toISOString().slice(0, 10),
      wait: { count: 0, p50Ms: null, histogram: [] },
      throughput: { finished: 0, perMinute: 0 },
    });
  });

  it("gives wait and run percentiles, sparse histograms and throughput once jobs have run", async () => {
    await tl.publishMany(
      sendEmail,
      Array.from({ length: 20 }, (_, i) => ({
        payload: { to: `u${i}@example.com`, subject: "s" },
      })),
    );
    const worker = tl.worker({ concurrency: 5 });
    await worker.start();
    await waitForCount(tl, "succeeded", 20);
    await worker.stop();
    const { status, body } = await call(`${srv.url}/lanes/default/stats`);
    expect(status).toBe(200);
    const run = body.run as Record<string, unknown>;
    expect(run.count).toBe(20);
    expect(run.p50Ms).toEqual(expect.any(Number));
    expect(run.p99Ms as number).toBeGreaterThanOrEqual(run.p50Ms as number);
    const histogram = run.histogram as Array<{
      lowerMs: number;
      upperMs: number | null;
      count: number;
    }>;
    expect(histogram.reduce((sum, b) => sum + b.count, 0)).toBe(20);
    expect(
      histogram.every((b) => b.count > 0 && (b.upperMs === null || b.upperMs > b.lowerMs)),
    ).toBe(true);
    const throughput = body.throughput as { finished: number; perMinute: number };
    expect(throughput.finished).toBe(20);
    expect(throughput.perMinute).toBeGreaterThan(0);
    // The same numbers in the lane view.
    const lane = await call(`${srv.url}/lanes/default`);
    expect((lane.body.stats as Record<string, unknown>).run).toEqual(run);
  });

  it("answers a past day without samples with zeros, and a malformed day with 400 naming it", async () => {
    const past = await call(`${srv.url}/lanes/default/stats?day=2020-01-01`);
    expect(past.status).toBe(200);
    expect(past.body).toMatchObject({
      day: "2020-01-01",
      run: { count: 0 },
      throughput: { perMinute: 0 },
    });
    const bad = await call(`${srv.url}/lanes/default/stats?day=yesterday`);
    expect(bad.status).toBe(400);
    expect(bad.body).toMatchObject({ code: "BAD_REQUEST", field: "day" });
  });

  it("answers 404 naming the lane for an unknown one", async () => {
    const { status, body } = await call(`${srv.url}/lanes/nope`);
    expect(status).toBe(404);
    expect(body).toMatchObject({ code: "NOT_FOUND", field: "lane" });
  });

  it("pauses and resumes a lane", async () => {
    const paused = await call(`${srv.url}/lanes/low/pause`, { method: "POST" });
    expect(paused).toMatchObject({ status: 200, body: { lane: "low", paused: true } });
    expect(await tl.lane("low").isPaused()).toBe(true);
    const resumed = await call(`${srv.url}/lanes/low/resume`, { method: "POST" });
    expect(resumed).toMatchObject({ status: 200, body: { lane: "low", paused: false } });
    expect(await tl.lane("low").isPaused()).toBe(false);
  });
});

describe("jobs", () => {
  it("streams a lane's jobs in one state as NDJSON, payloads decoded, honouring limit and offset", async () => {
    const published = await tl.publishMany(
      sendEmail,
      Array.from({ length: 25 }, (_, i) => ({
        payload: { to: `u${i}@example.com`, subject: `#${i}` },
      })),
    );
    await tl.publish(sendEmail, { to: "later@example.com", subject: "later" }, { delayMs: 60_000 });
    const response = await fetch(`${srv.url}/lanes/default/jobs?state=waiting`);
    expect(response.headers.get("content-type")).toBe("application/x-ndjson; charset=utf-8");
    const all = await ndjson(`${srv.url}/lanes/default/jobs?state=waiting`);
    expect(all.map((j) => j.id)).toEqual(published.map((r) => r.id));
    expect(all[3]).toMatchObject({
      lane: "default",
      task: "send-email",
      state: "waiting",
      attempt: 0,
      payload: { to: "u3@example.com", subject: "#3" },
    });
    const page = await ndjson(`${srv.url}/lanes/default/jobs?state=waiting&offset=10&limit=5`);
    // Stopped by limit before the end: the last line says where to go on from.
    const trailer = page.pop() as { next: string };
    expect(Object.keys(trailer)).toEqual(["next"]);
    expect(page.map((j) => j.id)).toEqual(published.slice(10, 15).map((r) => r.id));
    const rest = await ndjson(
      `${srv.url}/lanes/default/jobs?state=waiting&cursor=${encodeURIComponent(trailer.next)}`,
    );
    expect(rest.map((j) => j.id)).toEqual(published.slice(15).map((r) => r.id));
    const delayed = await ndjson(`${srv.url}/lanes/default/jobs?state=delayed`);
    expect(delayed.map((j) => (j.payload as { subject: string }).subject)).toEqual(["later"]);
    await response.body?.cancel();
  });

  it("refuses a bad list query with 400 naming the field", async () => {
    for (const [query, field] of [
      ["?state=sleeping", "state"],
      ["?state=waiting&limit=0", "limit"],
      ["?since=yesterday", "since"],
      ["?fields=all", "fields"],
      ["?task=", "task"],
      ["?cursor=not-a-cursor", "cursor"],
    ]) {
      const { status, body } = await call(`${srv.url}/lanes/default/jobs${query}`);
      expect(status, query).toBe(400);
      expect(body, query).toMatchObject({ code: "BAD_REQUEST", field });
    }
  });

  it("shows one job with its error, stack and history, and finds it by id across lanes", async () => {
    const [id] = await makeFailedJobs(tl, 1);
    const { status, body } = await call(`${srv.url}/lanes/default/jobs/${id}`);
    expect(status).toBe(200);
    expect(body).toMatchObject({
      id,
      lane: "default",
      task: "always-fails",
      state: "failed",
      attempt: 1,
      payload: { n: 0 },
      error: { name: "UnrecoverableError", message: "boom", reason: "unrecoverable" },
    });
    expect((body.error as { stack: string }).stack).toContain("UnrecoverableError: boom");
    expect((body.history as Array<{ event: string }>).map((h) => h.event)).toEqual([
      "published",
      "reserved",
      "failed",
    ]);
    expect(body.finishedAt).toEqual(expect.any(Number));
    const found = await call(`${srv.url}/jobs/${id}`);
    expect(found.body.jobs).toEqual([body]);
    const none = await call(`${srv.url}/jobs/no-such-job`);
    expect(none).toMatchObject({ status: 200, body: { jobs: [] } });
    const missing = await call(`${srv.url}/lanes/default/jobs/no-such-job`);
    expect(missing).toMatchObject({ status: 404, body: { code: "NOT_FOUND", field: "id" } });
  });

  it("retries, cancels and deletes one job, and says why when it cannot", async () => {
    const [failed] = await makeFailedJobs(tl, 1);
    const retried = await call(`${srv.url}/lanes/default/jobs/${failed}/retry`, { method: "POST" });
    expect(retried).toMatchObject({ status: 200, body: { id: failed, outcome: "retried" } });
    expect((await tl.lane("default").get(failed as string))?.state).toBe("waiting");
    const again = await call(`${srv.url}/lanes/default/jobs/${failed}/retry`, { method: "POST" });
    expect(again).toMatchObject({ status: 409, body: { code: "CONFLICT" } });
    expect(again.body.message).toContain("is waiting");

    const canceled = await call(`${srv.url}/lanes/default/jobs/${failed}/cancel`, {
      method: "POST",
    });
    expect(canceled).toMatchObject({ status: 200, body: { outcome: "canceled" } });
    const twice = await call(`${srv.url}/lanes/default/jobs/${failed}/cancel`, { method: "POST" });
    expect(twice).toMatchObject({ status: 409, body: { code: "CONFLICT" } });

    const deleted = await call(`${srv.url}/lanes/default/jobs/${failed}`, { method: "DELETE" });
    expect(deleted).toMatchObject({ status: 200, body: { outcome: "deleted" } });
    expect(await tl.lane("default").get(failed as string)).toBeUndefined();
    const gone = await call(`${srv.url}/lanes/default/jobs/${failed}`, { method: "DELETE" });
    expect(gone).toMatchObject({ status: 404, body: { code: "NOT_FOUND" } });
  });

  it("retries failed jobs by filter in bounded batches: each call changes at most limit and says whether more match", async () => {
    await makeFailedJobs(tl, 25);
    const url = `${srv.url}/lanes/default/jobs/retry`;
    const first = await call(url, {
      method: "POST",
      body: { filter: { state: "failed" }, limit: 10 },
    });
    expect(first).toMatchObject({ status: 200, body: { matched: 10, changed: 10, more: true } });
    expect((await tl.lane("default").counts()).failed).toBe(15);
    const second = await call(url, {
      method: "POST",
      body: { filter: { state: "failed" }, limit: 10 },
    });
    expect(second.body).toEqual({ matched: 10, changed: 10, more: true });
    const last = await call(url, {
      method: "POST",
      body: { filter: { state: "failed" }, limit: 10 },
    });
    expect(last.body).toEqual({ matched: 5, changed: 5, more: false });
    expect(await tl.lane("default").counts()).toMatchObject({ failed: 0, waiting: 25 });
  });

  it("cancels by ids with per-outcome counts, and deletes by filter", async () => {
    const ids = (
      await tl.publishMany(
        sendEmail,
        Array.from({ length: 5 }, (_, i) => ({
          payload: { to: `u${i}@example.com`, subject: "s" },
        })),
      )
    ).map((r) => r.id);
    const canceled = await call(`${srv.url}/lanes/default/jobs/cancel`, {
      method: "POST",
      body: { ids: [ids[0], ids[1], ids[0], "missing"] },
    });
    expect(canceled.body).toEqual({
      matched: 3,
      changed: 2,
      more: false,
      outcomes: { canceled: 2, not_found: 1, finished: 0 },
    });
    const deleted = await call(`${srv.url}/lanes/default/jobs/delete`, {
      method: "POST",
      body: { filter: { state: "canceled" } },
    });
    expect(deleted.body).toEqual({ matched: 2, changed: 2, more: false });
    expect(await tl.lane("default").counts()).toMatchObject({ waiting: 3, canceled: 0 });
  });

  it("refuses bad bulk bodies with 400 naming the field, changing nothing", async () => {
    await makeFailedJobs(tl, 2);
    const url = `${srv.url}/lanes/default/jobs/retry`;
    const cases: Array<[unknown, string]> = [
      [{}, "ids"],
      [{ ids: ["a"], filter: { state: "failed" } }, "filter"],
      [{ filter: { state: "waiting" } }, "filter.state"],
      [{ filter: { state: "failed" }, limit: 1_001 }, "limit"],
      [{ ids: [] }, "ids"],
      [{ ids: [7] }, "ids[0]"],
      [{ ids: ["a"], limit: 3 }, "limit"],
      [{ ids: ["a"], colour: "red" }, "colour"],
      [{ filter: { state: "failed", colour: "x" } }, "filter.colour"],
      [{ filter: { state: "failed", since: "today" } }, "filter.since"],
    ];
    for (const [body, field] of cases) {
      const answer = await call(url, { method: "POST", body });
      expect(answer.status, JSON.stringify(body)).toBe(400);
      expect(answer.body, JSON.stringify(body)).toMatchObject({ code: "BAD_REQUEST", field });
    }
    const tooMany = await call(url, {
      method: "POST",
      body: { ids: Array.from({ length: 1_001 }, (_, i) => `id${i}`) },
    });
    expect(tooMany.body).toMatchObject({ field: "ids" });
    const malformed = await call(url, { method: "POST", body: "{not json" });
    expect(malformed).toMatchObject({ status: 400, body: { code: "BAD_REQUEST", field: "body" } });
    const notJson = await call(url, {
      method: "POST",
      body: "ids=a",
      headers: { "content-type": "application/x-www-form-urlencoded" },
    });
    expect(notJson).toMatchObject({ status: 415, body: { code: "UNSUPPORTED_MEDIA_TYPE" } });
    expect((await tl.lane("default").counts()).failed).toBe(2);
  });

  it("lists, pauses, resumes and removes recurring schedules, 404 for an unknown id", async () => {
    const startAt = Date.UTC(2030, 0, 1);
    await tl.schedules.upsert("hourly", { everyMs: 3_600_000, startAt }, report, { day: "h" });
    const listed = await call(`${srv.url}/schedules`);
    expect(listed).toMatchObject({
      status: 200,
      body: {
        schedules: [
          {
            id: "hourly",
            lane: "low",
            task: "report",
            payload: { day: "h" },
            nextAt: startAt,
            paused: false,
            runs: 0,
          },
        ],
      },
    });
    const paused = await call(`${srv.url}/schedules/hourly/pause`, { method: "POST" });
    expect(paused).toMatchObject({
      status: 200,
      body: { id: "hourly", paused: true, nextAt: null },
    });
    expect((await tl.schedules.get("hourly"))?.paused).toBe(true);
    const resumed = await call(`${srv.url}/schedules/hourly/resume`, { method: "POST" });
    expect(resumed).toMatchObject({ status: 200, body: { id: "hourly", paused: false } });
    expect(await call(`${srv.url}/schedules/nope/pause`, { method: "POST" })).toMatchObject({
      status: 404,
      body: { code: "NOT_FOUND", field: "id" },
    });
    const removed = await call(`${srv.url}/schedules/hourly`, { method: "DELETE" });
    expect(removed).toMatchObject({ status: 200, body: { id: "hourly", removed: true } });
    expect(await tl.schedules.get("hourly")).toBeUndefined();
    expect(await call(`${srv.url}/schedules/hourly`, { method: "DELETE" })).toMatchObject({
      status: 404,
    });
  });
});

describe("enqueue", () => {
  it("publishes a job validated by the task's schema and answers its id and where to find it", async () => {
    const { status, body, headers } = await call(`${srv.url}/tasks/send-email/jobs`, {
      method: "POST",
      body: { payload: { to: "ada@example.com", subject: "Welcome" }, priority: 7 },
    });
    expect(status).toBe(201);
    expect(body).toMatchObject({ status: "created", lane: "default", task: "send-email" });
    const id = body.id as string;
    expect(headers.get("location")).toBe(`/tasklane/lanes/default/jobs/${id}`);
    const stored = await tl.lane("default").get(id);
    expect(stored).toMatchObject({ priority: 7, state: "waiting", task: "send-email" });
    expect(JSON.parse(stored?.payload ?? "")).toEqual({
      to: "ada@example.com",
      subject: "Welcome",
    });
  });

  it("takes job ids with any characters, percent-encoded in paths", async () => {
    const id = "order/42 ü?#";
    const created = await call(`${srv.url}/tasks/send-email/jobs`, {
      method: "POST",
      body: { payload: { to: "ada@example.com", subject: "s" }, jobId: id },
    });
    expect(created.headers.get("location")).toBe(
      `/tasklane/lanes/default/jobs/${encodeURIComponent(id)}`,
    );
    const shown = await call(`${srv.url}/lanes/default/jobs/${encodeURIComponent(id)}`);
    expect(shown).toMatchObject({ status: 200, body: { id } });
    const canceled = await call(`${srv.url}/lanes/default/jobs/${encodeURIComponent(id)}/cancel`, {
      method: "POST",
    });
    expect(canceled).toMatchObject({ status: 200, body: { id, outcome: "canceled" } });
  });

  it("is idempotent with a jobId in the body or an Idempotency-Key header", async () => {
    const url = `${srv.url}/tasks/send-email/jobs`;
    const payload = { to: "ada@example.com", subject: "Welcome" };
    const first = await call(url, {
      method: "POST",
      body: { payload },
      headers: { "idempotency-key": "k-1" },
    });
    expect(first).toMatchObject({ status: 201, body: { id: "k-1", status: "created" } });
    const again = await call(url, { method: "POST", body: { payload, jobId: "k-1" } });
    expect(again).toMatchObject({ status: 200, body: { id: "k-1", status: "duplicate" } });
    expect((await tl.lane("default").counts()).waiting).toBe(1);
    const clash = await call(url, {
      method: "POST",
      body: { payload, jobId: "k-2" },
      headers: { "idempotency-key": "k-3" },
    });
    expect(clash).toMatchObject({ status: 400, body: { field: "jobId" } });
  });

  it("refuses a payload that fails the schema with 400 naming the payload's field, storing nothing", async () => {
    const url = `${srv.url}/tasks/send-email/jobs`;
    const cases: Array<[unknown, number, string, string]> = [
      [{ payload: { to: "not-an-email", subject: "s" } }, 400, "VALIDATION", "payload.to"],
      [{ payload: { to: "a@example.com" } }, 400, "VALIDATION", "payload.subject"],
      [{}, 400, "BAD_REQUEST", "payload"],
      [{ payload: {}, priority: 1.5 }, 400, "BAD_REQUEST", "priority"],
      [
        { payload: { to: "a@example.com", subject: "s" }, delayMs: 5, runAt: 5 },
        400,
        "BAD_REQUEST",
        "delayMs",
      ],
      [{ payload: { to: "a@example.com", subject: "s" }, extra: 1 }, 400, "BAD_REQUEST", "extra"],
    ];
    for (const [body, status, code, field] of cases) {
      const answer = await call(url, { method: "POST", body });
      expect(answer.status, JSON.stringify(body)).toBe(status);
      expect(answer.body, JSON.stringify(body)).toMatchObject({ code, field });
    }
    const big = await call(url, {
      method: "POST",
      body: { payload: { to: "a@example.com", subject: "x".repeat(300_000) } },
    });
    expect(big).toMatchObject({
      status: 413,
      body: { code: "PAYLOAD_TOO_LARGE", field: "payload" },
    });
    const huge = await call(url, {
      method: "POST",
      body: { payload: { to: "a@example.com", subject: "x".repeat(1_100_000) } },
    });
    expect(huge).toMatchObject({ status: 413, body: { code: "PAYLOAD_TOO_LARGE", field: "body" } });
    const unknown = await call(`${srv.url}/tasks/nope/jobs`, {
      method: "POST",
      body: { payload: {} },
    });
    expect(unknown).toMatchObject({ status: 404, body: { field: "name" } });
    expect((await tl.lane("default").counts()).waiting).toBe(0);
  });
});

describe("tasks, info and the OpenAPI document", () => {
  it("lists tasks with their payload JSON Schema", async () => {
    const { body } = await call(`${srv.url}/tasks`);
    const tasks = body.tasks as Array<Record<string, unknown>>;
    expect(tasks.map((t) => t.name)).toEqual(["send-email", "always-fails", "report"]);
    expect(tasks[0]).toMatchObject({
      lane: "default",
      timeLimitMs: null,
      retry: { maxAttempts: 3, baseMs: 1_000 },
      payloadSchema: {
        type: "object",
        properties: { to: { type: "string", format: "email" }, subject: { type: "string" } },
        required: ["to", "subject"],
      },
    });
  });

  it("tells the adapter, its capabilities, lanes, tasks and what is not supported yet", async () => {
    const { body } = await call(`${srv.url}/`);
    expect(body).toMatchObject({
      adapter: {
        name: "memory",
        capabilities: {
          list: true,
          cancelActive: true,
          maxBatch: expect.any(Number),
          results: true,
          search: true,
          failureGroups: true,
          workers: true,
          move: true,
          expiry: true,
        },
      },
      lanes: ["high", "default", "low"],
      tasks: ["send-email", "always-fails", "report"],
    });
    expect(body.notYetSupported).toEqual([]);
  });

  it("serves an OpenAPI 3.1 document of every route, with the tasks' payload schemas", async () => {
    const { status, body: doc } = await call(`${srv.url}/openapi.json`);
    expect(status).toBe(200);
    expect(doc.openapi).toBe("3.1.0");
    expect(doc.servers).toEqual([{ url: "/tasklane" }]);
    const paths = doc.paths as Record<string, Record<string, Record<string, unknown>>>;
    const operations = Object.values(paths).flatMap((p) =>
      Object.values(p).map((o) => o.operationId),
    );
    for (const id of [
      "getInfo",
      "listLanes",
      "getLane",
      "getLaneStats",
      "pauseLane",
      "resumeLane",
      "listJobs",
      "getJob",
      "findJob",
      "retryJob",
      "cancelJob",
      "deleteJob",
      "promoteJob",
      "changeJobPriority",
      "moveJob",
      "getJobResult",
      "countJobs",
      "retryJobs",
      "cancelJobs",
      "deleteJobs",
      "promoteJobs",
      "changeJobsPriority",
      "moveJobs",
      "listFailureGroups",
      "listLaneFailureGroups",
      "listTasks",
      "enqueueJob",
      "listWorkers",
      "listSchedules",
      "streamEvents",
      "enqueue.send-email",
    ]) {
      expect(operations, id).toContain(id);
    }
    expect(paths["/lanes/{lane}/jobs/retry"]?.post?.["x-scope"]).toBe("write");
    expect(paths["/lanes"]?.get?.["x-scope"]).toBe("read");
    const schemas = (doc.components as { schemas: Record<string, Record<string, unknown>> })
      .schemas;
    expect(schemas["TaskPayload.send-email"]).toMatchObject({
      type: "object",
      required: ["to", "subject"],
    });
    const concrete = paths["/tasks/send-email/jobs"]?.post as Record<string, unknown>;
    expect(JSON.stringify(concrete.requestBody)).toContain(
      "#/components/schemas/TaskPayload.send-email",
    );
    expect(schemas.Job).toBeDefined();
    expect(schemas.Error).toMatchObject({ required: ["code", "message"] });
    // The listing's request schema names its states.
    const list = paths["/lanes/{lane}/jobs"]?.get as { parameters: Array<Record<string, unknown>> };
    expect(list.parameters.find((p) => p.name === "state")).toMatchObject({
      in: "query",
      required: false,
    });
    for (const name of ["task", "tag", "errorName", "since", "until", "fields", "cursor"]) {
      expect(
        list.parameters.find((p) => p.name === name),
        name,
      ).toMatchObject({ in: "query" });
    }
    expect((schemas.LaneCounts as { required: string[] }).required).toContain("expired");
    expect(JSON.stringify(schemas.JobState)).toContain('"expired"');
    const job = schemas.Job as { properties: Record<string, unknown> };
    for (const field of ["result", "progress", "logs", "tags", "expiresAt", "changedAt"]) {
      expect(job.properties, field).toHaveProperty(field);
    }
  });

  it("answers unknown routes and paths outside basePath with a JSON 404", async () => {
    const inside = await call(`${srv.url}/nope`);
    expect(inside).toMatchObject({ status: 404, body: { code: "NOT_FOUND" } });
    const outside = await call(srv.url.replace("/tasklane", "/elsewhere"));
    expect(outside).toMatchObject({ status: 404, body: { code: "NOT_FOUND" } });
  });
});

it("a report task publishes to its own lane", async () => {
  const { body } = await call(`${srv.url}/tasks/${report.name}/jobs`, {
    method: "POST",
    body: { payload: { day: "2026-01-01" } },
  });
  expect(body.lane).toBe("low");
  expect((await tl.lane("low").counts()).waiting).toBe(1);
});

async function waitForCount(client: Tasklane, state: "succeeded" | "failed", n: number) {
  const deadline = Date.now() + 10_000;
  while ((await client.lane("default").counts())[state] < n) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${n} ${state}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}
