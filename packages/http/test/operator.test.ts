/**
 * The operator endpoints on the memory adapter, which has every operator capability:
 * job detail with result, progress, logs, tags and expiry; searches and their cursor;
 * counts; failure groups and acting on one; workers; promote, priority and move; waiting
 * for a job's result. Redis (capabilities false) answers 501 for these: redis.test.ts.
 */
import { createMemoryAdapter } from "@tasklane/adapter-memory";
import { createTasklane, defineTask, type Tasklane, type Worker } from "@tasklane/core";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { z } from "zod";
import { call, ndjson, serve, type TestServer, waitFor } from "./helpers.ts";

/** What a test's handlers wait on: resolved by the test when it wants them to go on. */
const gates = new Map<string, () => void>();
const gate = (key: string) =>
  new Promise<void>((resolve) => {
    gates.set(key, resolve);
  });

const resize = defineTask({
  name: "resize",
  lane: "default",
  schema: z.object({ width: z.number(), hold: z.string().optional() }),
  result: z.object({ url: z.string(), bytes: z.number() }),
  async run({ width, hold }, ctx) {
    ctx.progress({ done: 1, total: 2 });
    ctx.log(`resizing to ${width}`);
    if (hold !== undefined) await gate(hold);
    ctx.progress({ done: 2, total: 2 });
    return { url: `https://cdn.example.com/${width}.png`, bytes: width * 10 };
  },
});

/** Fails with the error its payload names, without retries. */
const fail = defineTask({
  name: "fail",
  lane: "default",
  schema: z.object({ error: z.enum(["TypeError", "RangeError"]), n: z.number() }),
  retry: { maxAttempts: 1 },
  run({ error, n }) {
    throw error === "TypeError" ? new TypeError(`bad ${n}`) : new RangeError(`far ${n}`);
  },
});

const note = defineTask({
  name: "note",
  lane: "low",
  schema: z.object({ n: z.number() }),
  run() {},
});

let tl: Tasklane;
let srv: TestServer;
const workers: Worker[] = [];

beforeEach(async () => {
  tl = createTasklane({
    adapter: createMemoryAdapter(),
    lanes: [{ name: "default" }, { name: "low" }],
    tasks: [resize, fail, note],
  });
  srv = await serve({ tasklane: tl, basePath: "/ops", authorize: () => "write" });
});

afterEach(async () => {
  for (const release of gates.values()) release();
  gates.clear();
  await Promise.all(workers.splice(0).map((w) => w.stop()));
  await srv.close();
  await tl.close();
});

/** A worker; a heartbeat every 50 ms, so the registry shows what it runs at once. */
async function startWorker(lanes = ["default"], concurrency = 4): Promise<Worker> {
  const worker = tl.worker({ concurrency, lanes, heartbeatMs: 50 });
  workers.push(worker);
  await worker.start();
  return worker;
}

const counts = (lane = "default") => tl.lane(lane).counts();

async function failSome(errors: Array<"TypeError" | "RangeError">): Promise<string[]> {
  const results = await tl.publishMany(
    fail,
    errors.map((error, n) => ({ payload: { error, n } })),
  );
  // One at a time: they fail, and are listed, in the order they were published.
  const worker = await startWorker(["default"], 1);
  await waitFor(async () => (await counts()).failed >= errors.length, "the jobs to fail");
  await worker.stop();
  return results.map((r) => r.id);
}

describe("a job's detail", () => {
  it("shows its result, progress, logs, tags, expiry and when it entered its state", async () => {
    const { body: created } = await call(`${srv.url}/tasks/resize/jobs`, {
      method: "POST",
      body: { payload: { width: 320 }, tags: ["customer:42", "batch:7"], expiresInMs: 600_000 },
    });
    const id = created.id as string;
    const pending = await call(`${srv.url}/lanes/default/jobs/${id}`);
    expect(pending.body).toMatchObject({
      state: "waiting",
      tags: ["customer:42", "batch:7"],
      expiresAt: expect.any(Number),
      changedAt: expect.any(Number),
    });
    expect(pending.body).not.toHaveProperty("result");
    await startWorker();
    await waitFor(async () => (await counts()).succeeded === 1, "the job to succeed");
    const { status, body } = await call(`${srv.url}/lanes/default/jobs/${id}`);
    expect(status).toBe(200);
    expect(body).toMatchObject({
      id,
      state: "succeeded",
      result: { url: "https://cdn.example.com/320.png", bytes: 3_200 },
      progress: { done: 2, total: 2 },
      logs: [{ attempt: 1, message: "resizing to 320", at: expect.any(Number) }],
      tags: ["customer:42", "batch:7"],
    });
    expect(body.changedAt).toBe(body.finishedAt);
    // The same job in every lane, as GET /jobs/{id} finds it.
    expect((await call(`${srv.url}/jobs/${id}`)).body.jobs).toEqual([body]);
  });
});

describe("enqueue with tags and expiry", () => {
  it("stores them, and a job not started in time ends expired", async () => {
    const { status, body } = await call(`${srv.url}/tasks/note/jobs`, {
      method: "POST",
      body: { payload: { n: 1 }, tags: ["soon"], expiresInMs: 30 },
    });
    expect(status).toBe(201);
    const job = await tl.lane("low").get(body.id as string);
    expect(job).toMatchObject({ tags: ["soon"], expiresAt: expect.any(Number) });
    // No worker serves "low": the job expires unstarted (swept as the lane is used).
    await waitFor(async () => (await counts("low")).expired === 1, "the job to expire");
    const lane = await call(`${srv.url}/lanes/low`);
    expect(lane.body.counts).toMatchObject({ waiting: 0, expired: 1 });
    const listed = await ndjson(`${srv.url}/lanes/low/jobs?state=expired`);
    expect(listed.map((j) => [j.id, j.state])).toEqual([[body.id, "expired"]]);
  });

  it("refuses bad tags and expiry with 400 naming the field, storing nothing", async () => {
    const url = `${srv.url}/tasks/note/jobs`;
    const cases: Array<[Record<string, unknown>, string]> = [
      [{ tags: ["a", ""] }, "tags[1]"],
      [{ tags: ["a", "a"] }, "tags"],
      [{ tags: Array.from({ length: 17 }, (_, i) => `t${i}`) }, "tags"],
      [{ expiresInMs: 0 }, "expiresInMs"],
      [{ expiresInMs: 10, expiresAt: Date.now() + 1_000 }, "expiresInMs"],
      [{ expiresAt: Date.now() - 1_000 }, "expiresAt"],
      [{ delayMs: 60_000, expiresInMs: 1_000 }, "expiresInMs"],
    ];
    for (const [extra, field] of cases) {
      const answer = await call(url, { method: "POST", body: { payload: { n: 1 }, ...extra } });
      expect(answer.status, JSON.stringify(extra)).toBe(400);
      expect(answer.body, JSON.stringify(extra)).toMatchObject({ code: "BAD_REQUEST", field });
    }
    expect(await counts("low")).toMatchObject({ waiting: 0, delayed: 0 });
  });
});

describe("fair groups, rate limits and debounce", () => {
  const job = defineTask({
    name: "tenant-job",
    lane: "tenants",
    schema: z.object({ n: z.number() }),
    run() {},
  });
  let tl2: Tasklane;
  let srv2: TestServer;
  beforeEach(async () => {
    tl2 = createTasklane({
      adapter: createMemoryAdapter(),
      lanes: [
        {
          name: "tenants",
          groups: { concurrency: 2, rateLimit: { max: 3, durationMs: 60_000 } },
          rateLimit: { max: 5, durationMs: 1_000 },
        },
        { name: "low" },
      ],
      tasks: [job, note],
    });
    srv2 = await serve({ tasklane: tl2, authorize: () => "write" });
  });
  afterEach(async () => {
    await srv2.close();
    await tl2.close();
  });

  it("shows a lane's rate limit and groups, and a job's group", async () => {
    const lane = await call(`${srv2.url}/lanes/tenants`);
    expect(lane.body.config).toMatchObject({
      rateLimit: { max: 5, durationMs: 1_000 },
      groups: { concurrency: 2, rateLimit: { max: 3, durationMs: 60_000 } },
    });
    expect((await call(`${srv2.url}/lanes/low`)).body.config).not.toHaveProperty("rateLimit");
    const created = await call(`${srv2.url}/tasks/tenant-job/jobs`, {
      method: "POST",
      body: { payload: { n: 1 }, group: "acme" },
    });
    expect(created.status).toBe(201);
    expect(await tl2.lane("tenants").get(created.body.id as string)).toMatchObject({
      group: "acme",
    });
    const detail = await call(`${srv2.url}/lanes/tenants/jobs/${created.body.id}`);
    expect(detail.body).toMatchObject({ group: "acme", state: "waiting" });
    const listed = await ndjson(`${srv2.url}/lanes/tenants/jobs?state=waiting`);
    expect(listed.map((j) => j.group)).toEqual(["acme"]);
  });

  it("debounces by key: one job, the later publish answered 200 debounced with its id", async () => {
    const post = (n: number) =>
      call(`${srv2.url}/tasks/tenant-job/jobs`, {
        method: "POST",
        body: { payload: { n }, debounce: { key: "user-7", ms: 60_000 } },
      });
    const first = await post(1);
    expect(first).toMatchObject({ status: 201, body: { status: "created" } });
    const second = await post(2);
    expect(second).toMatchObject({ status: 200, body: { status: "debounced", id: first.body.id } });
    expect(await tl2.lane("tenants").counts()).toMatchObject({ waiting: 0, delayed: 1 });
    // keep "last" (the default): the stored job has the last payload.
    const stored = await tl2.lane("tenants").get(first.body.id as string);
    expect(JSON.parse(stored?.payload as string)).toEqual({ n: 2 });
  });

  it("refuses a bad group or debounce with 400 naming the field, storing nothing", async () => {
    const cases: Array<[string, Record<string, unknown>, string]> = [
      ["note", { group: "acme" }, "group"], // lane "low" has no groups option
      ["tenant-job", { group: "" }, "group"],
      ["tenant-job", { debounce: { key: "k", ms: 0 } }, "debounce.ms"],
      ["tenant-job", { debounce: { key: "", ms: 10 } }, "debounce.key"],
      ["tenant-job", { debounce: { key: "k", ms: 10, keep: "middle" } }, "debounce.keep"],
      ["tenant-job", { debounce: { key: "k", ms: 10, extra: 1 } }, "debounce.extra"],
    ];
    for (const [task, extra, field] of cases) {
      const answer = await call(`${srv2.url}/tasks/${task}/jobs`, {
        method: "POST",
        body: { payload: { n: 1 }, ...extra },
      });
      expect(answer.status, JSON.stringify(extra)).toBe(400);
      expect(answer.body, JSON.stringify(extra)).toMatchObject({ field });
    }
    expect(await tl2.lane("tenants").counts()).toMatchObject({ waiting: 0, delayed: 0 });
    expect(await tl2.lane("low").counts()).toMatchObject({ waiting: 0, delayed: 0 });
  });
});

describe("jobs that wait for others (flows)", () => {
  let tl3: Tasklane;
  let srv3: TestServer;
  beforeEach(async () => {
    // A namespace, so the backend's lane names differ from the ones the API shows.
    tl3 = createTasklane({
      adapter: createMemoryAdapter(),
      namespace: "v2",
      lanes: [{ name: "default" }, { name: "low" }],
      tasks: [resize, note],
    });
    srv3 = await serve({ tasklane: tl3, authorize: () => "write" });
  });
  afterEach(async () => {
    await srv3.close();
    await tl3.close();
  });
  const enqueue = (task: string, body: Record<string, unknown>) =>
    call(`${srv3.url}/tasks/${task}/jobs`, { method: "POST", body });

  it("enqueues with dependsOn; the detail shows dependencies and dependents by lane name", async () => {
    const child = await enqueue("note", { payload: { n: 1 } });
    const sibling = await enqueue("resize", { payload: { width: 5 } });
    const parent = await enqueue("resize", {
      payload: { width: 9 },
      dependsOn: [{ jobId: child.body.id, lane: "low", onFailure: "ignore" }, sibling.body.id],
    });
    expect(parent).toMatchObject({ status: 201, body: { status: "created", lane: "default" } });
    const detail = await call(`${srv3.url}/lanes/default/jobs/${parent.body.id}`);
    expect(detail.body).toMatchObject({
      state: "blocked",
      dependencies: [
        { lane: "low", id: child.body.id, onFailure: "ignore", task: "note" },
        { lane: "default", id: sibling.body.id, onFailure: "fail", task: "resize" },
      ],
    });
    const childDetail = await call(`${srv3.url}/lanes/low/jobs/${child.body.id}`);
    expect(childDetail.body.dependents).toEqual([{ lane: "default", jobId: parent.body.id }]);
    expect((await call(`${srv3.url}/lanes/default`)).body.counts).toMatchObject({ blocked: 1 });

    // Run them: each dependency's end and decoded result appear in the parent's detail.
    const worker = tl3.worker({ concurrency: 4 });
    await worker.start();
    try {
      await tl3.waitFor(parent.body.id as string, { timeoutMs: 10_000 });
    } finally {
      await worker.stop();
    }
    const done = await call(`${srv3.url}/lanes/default/jobs/${parent.body.id}`);
    expect(done.body).toMatchObject({
      state: "succeeded",
      dependencies: [
        { lane: "low", state: "succeeded" },
        {
          lane: "default",
          state: "succeeded",
          result: { url: "https://cdn.example.com/5.png", bytes: 50 },
        },
      ],
    });
  });

  it("refuses an unknown dependency (400 DEPENDENCY_NOT_FOUND) or a malformed one (400 naming it), storing nothing", async () => {
    const missing = await enqueue("resize", {
      payload: { width: 1 },
      dependsOn: [{ jobId: "ghost", lane: "low" }],
    });
    expect(missing).toMatchObject({
      status: 400,
      body: { code: "DEPENDENCY_NOT_FOUND", field: "dependsOn" },
    });
    expect(missing.body.message).toContain("ghost");
    const cases: Array<[unknown, string]> = [
      [[], "dependsOn"],
      [[""], "dependsOn[0]"],
      [[{ jobId: "a", onFailure: "explode" }], "dependsOn[0]"],
      [[{ jobId: "a", extra: 1 }], "dependsOn[0]"],
    ];
    for (const [dependsOn, field] of cases) {
      const answer = await enqueue("resize", { payload: { width: 1 }, dependsOn });
      expect(answer.status, JSON.stringify(dependsOn)).toBe(400);
      expect(String(answer.body.field), JSON.stringify(dependsOn)).toContain(field);
    }
    const unknownLane = await enqueue("resize", {
      payload: { width: 1 },
      dependsOn: [{ jobId: "a", lane: "nope" }],
    });
    expect(unknownLane).toMatchObject({ status: 400, body: { code: "BAD_REQUEST" } });
    expect(unknownLane.body.field).toMatch(/^dependsOn/);
    expect(await tl3.lane("default").counts()).toMatchObject({ waiting: 0, blocked: 0 });
  });
});

describe("searching a lane's jobs", () => {
  it("filters by task, tag, errorName and time, over every state without one", async () => {
    const failed = await failSome(["TypeError", "RangeError", "TypeError"]);
    const t0 = Date.now();
    const tagged = await tl.publish(resize, { width: 1 }, { tags: ["vip"] });
    await tl.publish(resize, { width: 2 }, { delayMs: 60_000 });
    const list = (query: string) => ndjson(`${srv.url}/lanes/default/jobs?${query}`);
    const ids = async (query: string) => (await list(query)).map((j) => j.id);

    // No state: every state, in JOB_STATES order (waiting, delayed, active, …, failed).
    expect((await list("")).map((j) => j.state)).toEqual([
      "waiting",
      "delayed",
      "failed",
      "failed",
      "failed",
    ]);
    expect(await ids("tag=vip")).toEqual([tagged.id]);
    expect(await ids("task=fail")).toEqual(failed);
    expect(await ids("state=failed&errorName=TypeError")).toEqual([failed[0], failed[2]]);
    expect(await ids("errorName=RangeError")).toEqual([failed[1]]);
    expect(await ids(`state=waiting&since=${t0}`)).toEqual([tagged.id]);
    expect(await ids(`state=waiting&until=${t0}`)).toEqual([]);
    expect(await ids("task=resize&tag=vip&state=delayed")).toEqual([]);

    const summary = await list("state=failed&fields=summary&limit=1");
    expect(summary[0]).toMatchObject({
      id: failed[0],
      task: "fail",
      state: "failed",
      error: { name: "TypeError", message: "bad 0", reason: "error" },
      changedAt: expect.any(Number),
    });
    for (const bulky of ["payload", "history", "result", "logs", "progress"]) {
      expect(summary[0], bulky).not.toHaveProperty(bulky);
    }
    expect(summary[0]?.error).not.toHaveProperty("stack");
  });

  it("pages with a cursor: every job that stays in its state once, while jobs come and go", async () => {
    const first = await tl.publishMany(
      note,
      Array.from({ length: 23 }, (_, n) => ({ payload: { n } })),
    );
    const seen: string[] = [];
    let cursor: string | undefined;
    let pages = 0;
    let added: string[] = [];
    do {
      const query = `state=waiting&fields=summary&limit=5${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ""}`;
      const lines = await ndjson(`${srv.url}/lanes/low/jobs?${query}`);
      const last = lines.at(-1);
      cursor = last !== undefined && "next" in last ? (lines.pop()?.next as string) : undefined;
      seen.push(...lines.map((j) => j.id as string));
      expect(lines.length).toBeLessThanOrEqual(5);
      pages++;
      if (pages === 2) {
        // Between pages: a job already listed is deleted, new jobs arrive.
        await tl.lane("low").delete([seen[0] as string]);
        added = (
          await tl.publishMany(note, [{ payload: { n: 100 } }, { payload: { n: 101 } }])
        ).map((r) => r.id);
      }
    } while (cursor !== undefined);
    expect(seen).toEqual(first.map((r) => r.id));
    expect(new Set(seen).size).toBe(seen.length);
    expect(seen.some((id) => added.includes(id))).toBe(false);
    expect(pages).toBe(5);
  });

  it("refuses a cursor made for another filter or lane with 400 naming it", async () => {
    await tl.publishMany(
      note,
      Array.from({ length: 3 }, (_, n) => ({ payload: { n } })),
    );
    const lines = await ndjson(`${srv.url}/lanes/low/jobs?state=waiting&limit=1`);
    const next = encodeURIComponent(lines.at(-1)?.next as string);
    for (const path of [
      `/lanes/low/jobs?state=delayed&cursor=${next}`,
      `/lanes/low/jobs?state=waiting&task=note&cursor=${next}`,
      `/lanes/default/jobs?state=waiting&cursor=${next}`,
    ]) {
      const answer = await call(`${srv.url}${path}`);
      expect(answer, path).toMatchObject({
        status: 400,
        body: { code: "BAD_REQUEST", field: "cursor" },
      });
      expect(answer.body.message).toContain("another lane or filter");
    }
    const same = await ndjson(`${srv.url}/lanes/low/jobs?state=waiting&cursor=${next}`);
    expect(same).toHaveLength(2);
  });

  it("counts by filter", async () => {
    await failSome(["TypeError", "RangeError", "TypeError"]);
    await tl.publish(resize, { width: 1 }, { tags: ["vip"] });
    const count = async (query: string) =>
      (await call(`${srv.url}/lanes/default/count?${query}`)).body;
    expect(await count("")).toEqual({ lane: "default", count: 4, exact: true });
    expect(await count("state=failed")).toMatchObject({ count: 3 });
    expect(await count("errorName=TypeError")).toMatchObject({ count: 2 });
    expect(await count("tag=vip&state=waiting")).toMatchObject({ count: 1 });
    expect(await count("tag=vip&state=failed")).toMatchObject({ count: 0 });
    const bad = await call(`${srv.url}/lanes/default/count?state=lost`);
    expect(bad).toMatchObject({ status: 400, body: { field: "state" } });
  });
});

describe("failure groups", () => {
  it("groups failed jobs by error name, per lane and for every lane, largest first", async () => {
    const ids = await failSome(["TypeError", "RangeError", "TypeError"]);
    const { status, body } = await call(`${srv.url}/lanes/default/failure-groups`);
    // Failed one after another: the newest TypeError is the third job.
    expect(status).toBe(200);
    expect(body.groups).toEqual([
      {
        lane: "default",
        group: "TypeError",
        count: 2,
        sample: {
          jobId: ids[2],
          task: "fail",
          message: "bad 2",
          stack: expect.stringContaining("TypeError: bad 2"),
          failedAt: expect.any(Number),
        },
      },
      expect.objectContaining({ lane: "default", group: "RangeError", count: 1 }),
    ]);
    const all = await call(`${srv.url}/failure-groups`);
    expect(all.body.groups).toEqual(body.groups);
  });

  it("retries one group and deletes another through the bulk filter, in bounded calls", async () => {
    const ids = await failSome(["TypeError", "RangeError", "TypeError", "TypeError"]);
    const retry = await call(`${srv.url}/lanes/default/jobs/retry`, {
      method: "POST",
      body: { filter: { state: "failed", errorName: "TypeError" }, limit: 2 },
    });
    expect(retry.body).toEqual({ matched: 2, changed: 2, more: true });
    const again = await call(`${srv.url}/lanes/default/jobs/retry`, {
      method: "POST",
      body: { filter: { state: "failed", errorName: "TypeError" }, limit: 2 },
    });
    expect(again.body).toEqual({ matched: 1, changed: 1, more: false });
    expect(await counts()).toMatchObject({ waiting: 3, failed: 1 });
    const deleted = await call(`${srv.url}/lanes/default/jobs/delete`, {
      method: "POST",
      body: { filter: { state: "failed", errorName: "RangeError" } },
    });
    expect(deleted.body).toEqual({ matched: 1, changed: 1, more: false });
    expect(await tl.lane("default").get(ids[1] as string)).toBeUndefined();
    expect((await call(`${srv.url}/failure-groups`)).body.groups).toEqual([]);
  });
});

describe("workers", () => {
  it("lists the running workers with their lanes and jobs, and drops a stopped one", async () => {
    const started = Date.now();
    const worker = await startWorker(["default", "low"]);
    await tl.publish(resize, { width: 9, hold: "w" });
    await waitFor(() => gates.has("w"), "the job to start");
    const listed = await waitFor(async () => {
      const { body } = await call(`${srv.url}/workers`);
      const [w] = body.workers as Array<Record<string, unknown>>;
      return w !== undefined && w.running === 1 ? w : undefined;
    }, "the worker to report its running job");
    expect(listed).toMatchObject({
      id: worker.id,
      host: expect.any(String),
      pid: process.pid,
      lanes: ["default", "low"],
      concurrency: 4,
      held: 1,
      running: 1,
      jobs: [{ lane: "default", jobId: expect.any(String) }],
      version: expect.any(String),
    });
    expect(listed.startedAt as number).toBeGreaterThanOrEqual(started);
    expect(listed.expiresAt as number).toBeGreaterThan(listed.lastHeartbeatAt as number);
    gates.get("w")?.();
    await worker.stop();
    expect((await call(`${srv.url}/workers`)).body).toEqual({ workers: [] });
  });
});

describe("promote, priority and move", () => {
  it("promotes one delayed job or many, and says why it cannot", async () => {
    const delayed = await tl.publishMany(
      note,
      Array.from({ length: 3 }, (_, n) => ({ payload: { n }, delayMs: 60_000 })),
    );
    const [a, b, c] = delayed.map((r) => r.id);
    const one = await call(`${srv.url}/lanes/low/jobs/${a}/promote`, { method: "POST" });
    expect(one).toMatchObject({ status: 200, body: { id: a, outcome: "promoted" } });
    expect(await tl.lane("low").get(a as string)).toMatchObject({ state: "waiting" });
    const all = await call(`${srv.url}/lanes/low/jobs/promote`, {
      method: "POST",
      body: { filter: { state: "delayed" } },
    });
    expect(all.body).toEqual({
      matched: 2,
      changed: 2,
      more: false,
      outcomes: { ok: 2, not_found: 0, wrong_state: 0 },
    });
    expect(await counts("low")).toMatchObject({ waiting: 3, delayed: 0 });
    expect((await tl.lane("low").get(b as string))?.history.at(-1)?.event).toBe("promoted");
    await tl.lane("low").cancel([c as string]);
    const finished = await call(`${srv.url}/lanes/low/jobs/${c}/promote`, { method: "POST" });
    expect(finished).toMatchObject({ status: 409, body: { code: "CONFLICT" } });
    expect(finished.body.message).toContain("is canceled");
    const missing = await call(`${srv.url}/lanes/low/jobs/nope/promote`, { method: "POST" });
    expect(missing).toMatchObject({ status: 404, body: { field: "id" } });
  });

  it("changes priorities by id, and by filter page by page with a cursor, each job once", async () => {
    const jobs = await tl.publishMany(
      note,
      Array.from({ length: 12 }, (_, n) => ({ payload: { n } })),
    );
    const [first] = jobs;
    const one = await call(`${srv.url}/lanes/low/jobs/${first?.id}/priority`, {
      method: "POST",
      body: { priority: 50 },
    });
    expect(one).toMatchObject({
      status: 200,
      body: { id: first?.id, outcome: "prioritized", priority: 50 },
    });
    // By filter: jobs keep their state, so each call hands back where it stopped.
    const url = `${srv.url}/lanes/low/jobs/priority`;
    let cursor: string | undefined;
    let changed = 0;
    let calls = 0;
    for (;;) {
      const { body } = await call(url, {
        method: "POST",
        body: {
          filter: { state: "waiting" },
          limit: 5,
          priority: 7,
          ...(cursor ? { cursor } : {}),
        },
      });
      calls++;
      changed += body.changed as number;
      expect(body.matched as number).toBeLessThanOrEqual(5);
      if (!body.more) break;
      cursor = body.next as string;
      expect(cursor).toEqual(expect.any(String));
    }
    expect(changed).toBe(12);
    expect(calls).toBe(3);
    for (const { id } of jobs) {
      expect((await tl.lane("low").get(id))?.priority, id).toBe(7);
    }
    const bad = await call(url, {
      method: "POST",
      body: { ids: ["x"], priority: 1, cursor: "c1.x" },
    });
    expect(bad).toMatchObject({ status: 400, body: { field: "cursor" } });
    const tooHigh = await call(`${srv.url}/lanes/low/jobs/x/priority`, {
      method: "POST",
      body: { priority: 5_000 },
    });
    expect(tooHigh).toMatchObject({ status: 400, body: { field: "priority" } });
    await tl.lane("low").cancel([first?.id as string]);
    const wrong = await call(`${srv.url}/lanes/low/jobs/${first?.id}/priority`, {
      method: "POST",
      body: { priority: 1 },
    });
    expect(wrong).toMatchObject({ status: 409, body: { code: "CONFLICT" } });
  });

  it("moves one job or many to another lane, keeping ids, and refuses what it cannot", async () => {
    const [one, two, three] = (
      await tl.publishMany(resize, [
        { payload: { width: 1 } },
        { payload: { width: 2 } },
        { payload: { width: 3 } },
      ])
    ).map((r) => r.id);
    const moved = await call(`${srv.url}/lanes/default/jobs/${one}/move`, {
      method: "POST",
      body: { toLane: "low" },
    });
    expect(moved).toMatchObject({ status: 200, body: { id: one, outcome: "moved", lane: "low" } });
    expect(await tl.lane("default").get(one as string)).toBeUndefined();
    expect(await tl.lane("low").get(one as string)).toMatchObject({ state: "waiting" });
    const many = await call(`${srv.url}/lanes/default/jobs/move`, {
      method: "POST",
      body: { ids: [two, "nope"], toLane: "low" },
    });
    expect(many.body).toEqual({
      matched: 2,
      changed: 1,
      more: false,
      outcomes: { moved: 1, not_found: 1, finished: 0, duplicate: 0, blocked: 0 },
    });
    // The target holds a job with this id already.
    await tl.publish(note, { n: 1 }, { jobId: "twin" });
    await tl.publish(resize, { width: 4 }, { jobId: "twin" });
    const duplicate = await call(`${srv.url}/lanes/default/jobs/twin/move`, {
      method: "POST",
      body: { toLane: "low" },
    });
    expect(duplicate).toMatchObject({ status: 409, body: { code: "CONFLICT" } });
    for (const [toLane, message] of [
      ["nowhere", 'no lane "nowhere"'],
      ["default", "is the lane the jobs are in"],
    ] as const) {
      const refused = await call(`${srv.url}/lanes/default/jobs/${three}/move`, {
        method: "POST",
        body: { toLane },
      });
      expect(refused).toMatchObject({ status: 400, body: { field: "toLane" } });
      expect(refused.body.message).toContain(message);
    }
    expect(await counts()).toMatchObject({ waiting: 2 });
    expect(await counts("low")).toMatchObject({ waiting: 3 });
  });
});

describe("a job's result", () => {
  it("answers at once without waitMs, and waits for a job that finishes with it", async () => {
    const { id } = await tl.publish(resize, { width: 64, hold: "r" });
    const now = await call(`${srv.url}/jobs/${id}/result`);
    expect(now).toMatchObject({
      status: 200,
      body: { id, lane: "default", state: "waiting", done: false },
    });
    expect(now.body).not.toHaveProperty("result");
    await startWorker();
    const waiting = call(`${srv.url}/jobs/${id}/result?waitMs=10000`);
    await waitFor(() => gates.has("r"), "the job to start");
    gates.get("r")?.();
    const { status, body } = await waiting;
    expect(status).toBe(200);
    expect(body).toEqual({
      id,
      lane: "default",
      state: "succeeded",
      done: true,
      result: { url: "https://cdn.example.com/64.png", bytes: 640 },
      finishedAt: expect.any(Number),
    });
  });

  it("gives a failed job's error, a pending job's state after waitMs, and 404 for no job", async () => {
    const [failed] = await failSome(["RangeError"]);
    const failure = await call(`${srv.url}/jobs/${failed}/result?waitMs=5000`);
    expect(failure.body).toMatchObject({
      state: "failed",
      done: true,
      error: { name: "RangeError", message: "far 0", reason: "error" },
    });
    const { id } = await tl.publish(note, { n: 1 });
    const started = Date.now();
    const pending = await call(`${srv.url}/jobs/${id}/result?waitMs=200`);
    expect(Date.now() - started).toBeGreaterThanOrEqual(190);
    expect(pending.body).toEqual({ id, lane: "low", state: "waiting", done: false });
    const missing = await call(`${srv.url}/jobs/nope/result?waitMs=100`);
    expect(missing).toMatchObject({ status: 404, body: { code: "NOT_FOUND", field: "id" } });
    const tooLong = await call(`${srv.url}/jobs/${id}/result?waitMs=600000`);
    expect(tooLong).toMatchObject({ status: 400, body: { field: "waitMs" } });
  });
});
