import { ConfigError, type Tasklane } from "@tasklane/core";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import {
  createManagementHandler,
  HttpError,
  type ManagementAction,
  type ManagementHandlerOptions,
} from "../src/index.ts";
import {
  call,
  createClient,
  makeFailedJobs,
  sendEmail,
  serve,
  type TestServer,
} from "./helpers.ts";

/** Bearer tokens, or a session cookie (as a browser sends it): each grants a scope. */
function authorize(request: Request) {
  const auth = request.headers.get("authorization");
  if (auth === "Bearer reader") return "read";
  if (auth === "Bearer writer") return "write";
  if (auth === "Bearer nobody") return "none";
  if (request.headers.get("cookie") === "session=writer") return "write";
  return false;
}

const READ = { authorization: "Bearer reader" };
const WRITE = { authorization: "Bearer writer" };

let tl: Tasklane;
let srv: TestServer;
let failedIds: string[];
let waitingId: string;

/** Everything the write requests below would change. */
async function snapshot() {
  const lanes = await Promise.all(
    tl
      .lanes()
      .map(async (lane) => ({ counts: await lane.counts(), paused: await lane.isPaused() })),
  );
  return { lanes, waiting: await tl.lane("default").get(waitingId) };
}

/** One request of each kind of write. */
function writes(): Array<[string, string, unknown]> {
  return [
    ["POST", "/tasks/send-email/jobs", { payload: { to: "a@example.com", subject: "s" } }],
    ["POST", "/lanes/default/pause", undefined],
    ["POST", `/lanes/default/jobs/${failedIds[0]}/retry`, undefined],
    ["POST", "/lanes/default/jobs/retry", { filter: { state: "failed" } }],
    ["POST", `/lanes/default/jobs/${waitingId}/cancel`, undefined],
    ["DELETE", `/lanes/default/jobs/${waitingId}`, undefined],
    ["POST", "/lanes/default/jobs/delete", { ids: [waitingId] }],
  ];
}

async function start(options: Partial<ManagementHandlerOptions> = {}) {
  srv = await serve({ tasklane: tl, basePath: "/ops", ...options });
}

beforeEach(async () => {
  tl = createClient();
  failedIds = await makeFailedJobs(tl, 3);
  waitingId = (await tl.publish(sendEmail, { to: "w@example.com", subject: "waiting" })).id;
});

afterEach(async () => {
  await srv?.close();
  await tl.close();
});

describe("authorize", () => {
  it("answers 401 without credentials, for reads and for every write, and changes nothing", async () => {
    await start({ authorize });
    const before = await snapshot();
    const read = await call(`${srv.url}/lanes`);
    expect(read).toMatchObject({ status: 401, body: { code: "UNAUTHORIZED" } });
    for (const [method, path, body] of writes()) {
      const answer = await call(`${srv.url}${path}`, { method, body });
      expect(answer.status, `${method} ${path}`).toBe(401);
      expect(answer.body.code).toBe("UNAUTHORIZED");
    }
    // Checked before the body: an oversized or malformed one tells an outsider nothing.
    for (const body of ["x".repeat(2_000_000), "{not json"]) {
      const answer = await call(`${srv.url}/lanes/default/jobs/retry`, { method: "POST", body });
      expect(answer.status).toBe(401);
    }
    expect(await snapshot()).toEqual(before);
  });

  it("answers 403 to a reader's writes and to a caller with no scope, and changes nothing", async () => {
    await start({ authorize });
    const before = await snapshot();
    expect((await call(`${srv.url}/lanes`, { headers: READ })).status).toBe(200);
    for (const [method, path, body] of writes()) {
      const answer = await call(`${srv.url}${path}`, { method, body, headers: READ });
      expect(answer.status, `${method} ${path}`).toBe(403);
      expect(answer.body).toMatchObject({ code: "FORBIDDEN" });
      expect(answer.body.message).toContain("write scope");
    }
    const nobody = await call(`${srv.url}/lanes`, { headers: { authorization: "Bearer nobody" } });
    expect(nobody).toMatchObject({ status: 403, body: { code: "FORBIDDEN" } });
    expect(await snapshot()).toEqual(before);
  });

  it("lets a writer do every write", async () => {
    await start({ authorize });
    for (const [method, path, body] of writes()) {
      const answer = await call(`${srv.url}${path}`, { method, body, headers: WRITE });
      expect(answer.status, `${method} ${path}`).toBeLessThan(300);
    }
    expect(await tl.lane("default").isPaused()).toBe(true);
    expect(await tl.lane("default").get(waitingId)).toBeUndefined();
  });

  it("is told the operation, its scope, and the lane, job or task in the path", async () => {
    const seen: ManagementAction[] = [];
    await start({
      authorize: (_request, action) => {
        seen.push(action);
        return "write";
      },
    });
    await call(`${srv.url}/lanes/default/jobs/${waitingId}`);
    await call(`${srv.url}/lanes/low/pause`, { method: "POST" });
    await call(`${srv.url}/tasks/send-email/jobs`, {
      method: "POST",
      body: { payload: { to: "a@example.com", subject: "s" } },
    });
    await call(`${srv.url}/openapi.json`);
    expect(seen).toEqual([
      { scope: "read", operation: "getJob", lane: "default", jobId: waitingId },
      { scope: "write", operation: "pauseLane", lane: "low" },
      { scope: "write", operation: "enqueueJob", task: "send-email" },
      { scope: "read", operation: "getOpenApi" },
    ]);
  });

  it("answers with an HttpError it throws, and 500 (reported to onError) for anything else", async () => {
    const reported: unknown[] = [];
    await start({
      authorize: (request) => {
        if (request.headers.get("authorization") === "Bearer expired") {
          throw new HttpError(401, "TOKEN_EXPIRED", "The token has expired");
        }
        throw new Error("auth service down");
      },
      onError: (error) => reported.push(error),
    });
    const expired = await call(`${srv.url}/lanes`, {
      headers: { authorization: "Bearer expired" },
    });
    expect(expired).toMatchObject({
      status: 401,
      body: { code: "TOKEN_EXPIRED", message: "The token has expired" },
    });
    const broken = await call(`${srv.url}/lanes`);
    expect(broken).toMatchObject({
      status: 500,
      body: { code: "INTERNAL", message: "Internal error" },
    });
    expect(reported).toEqual([new Error("auth service down")]);
  });

  it("without a hook: anonymous reads, writes refused with 401 unless allowAnonymousWrites", async () => {
    await start();
    const before = await snapshot();
    expect((await call(`${srv.url}/lanes`)).status).toBe(200);
    const write = await call(`${srv.url}/lanes/default/pause`, { method: "POST" });
    expect(write).toMatchObject({ status: 401, body: { code: "UNAUTHORIZED" } });
    expect(write.body.message).toContain("allowAnonymousWrites");
    expect(await snapshot()).toEqual(before);
    await srv.close();
    await start({ allowAnonymousWrites: true });
    expect((await call(`${srv.url}/lanes/default/pause`, { method: "POST" })).status).toBe(200);
    expect(await tl.lane("default").isPaused()).toBe(true);
  });
});

describe("CSRF: writes from a browser on another site", () => {
  const COOKIE = { cookie: "session=writer" };

  it("refuses a cross-site write that carries the user's cookie with 403, changing nothing", async () => {
    await start({ authorize });
    const before = await snapshot();
    for (const site of ["cross-site", "same-site"]) {
      for (const [method, path, body] of writes()) {
        const answer = await call(`${srv.url}${path}`, {
          method,
          body,
          headers: { ...COOKIE, "sec-fetch-site": site, origin: "https://evil.example" },
        });
        expect(answer.status, `${site} ${method} ${path}`).toBe(403);
        expect(answer.body.code).toBe("CSRF");
      }
    }
    // A form post: no preflight in a browser, so it must be refused too.
    const form = await call(`${srv.url}/lanes/default/pause`, {
      method: "POST",
      body: "x=1",
      headers: {
        ...COOKIE,
        "sec-fetch-site": "cross-site",
        "content-type": "application/x-www-form-urlencoded",
      },
    });
    expect(form).toMatchObject({ status: 403, body: { code: "CSRF" } });
    expect(await snapshot()).toEqual(before);
  });

  it("without Sec-Fetch-Site, refuses an Origin of another host (or null) and takes its own host", async () => {
    await start({ authorize });
    const before = await snapshot();
    for (const origin of ["https://evil.example", "null", `http://localhost:1`]) {
      const answer = await call(`${srv.url}/lanes/default/pause`, {
        method: "POST",
        headers: { ...COOKIE, origin },
      });
      expect(answer, origin).toMatchObject({ status: 403, body: { code: "CSRF" } });
    }
    expect(await snapshot()).toEqual(before);
    const own = new URL(srv.url).origin;
    const same = await call(`${srv.url}/lanes/default/pause`, {
      method: "POST",
      headers: { ...COOKIE, origin: own },
    });
    expect(same.status).toBe(200);
  });

  it("lets same-origin pages, typed URLs, trusted origins and non-browser clients write", async () => {
    await start({ authorize, trustedOrigins: ["https://ops.example.com"] });
    const ok = async (headers: Record<string, string>) => {
      const answer = await call(`${srv.url}/lanes/default/pause`, {
        method: "POST",
        headers: { ...COOKIE, ...headers },
      });
      expect(answer.status, JSON.stringify(headers)).toBe(200);
    };
    await ok({ "sec-fetch-site": "same-origin", origin: new URL(srv.url).origin });
    await ok({ "sec-fetch-site": "none" });
    await ok({ "sec-fetch-site": "cross-site", origin: "https://ops.example.com" });
    await ok({});
  });

  it("does not guard reads: a cross-site GET changes nothing (and no CORS header lets its page read it)", async () => {
    await start({ authorize });
    const answer = await fetch(`${srv.url}/lanes`, {
      headers: { ...COOKIE, "sec-fetch-site": "cross-site", origin: "https://evil.example" },
    });
    expect(answer.status).toBe(200);
    expect(answer.headers.get("access-control-allow-origin")).toBeNull();
    await answer.body?.cancel();
  });
});

describe("options", () => {
  it("are checked at creation, with a ConfigError naming the field", () => {
    const cases: Array<[Record<string, unknown>, string]> = [
      [{ basePath: "tasklane" }, "basePath"],
      [{ basePath: "/tasklane/" }, "basePath"],
      [{ trustedOrigins: ["https://ops.example.com/path"] }, "trustedOrigins[0]"],
      [{ bulkLimit: 0 }, "bulkLimit"],
      [{ authorize: "yes" }, "authorize"],
      [{ authorize, allowAnonymousWrites: true }, "allowAnonymousWrites"],
      [{ colour: "red" }, "colour"],
      [{ tasklane: {} }, "tasklane"],
    ];
    for (const [extra, field] of cases) {
      const error = (() => {
        try {
          createManagementHandler({ tasklane: tl, ...extra } as ManagementHandlerOptions);
        } catch (e) {
          return e;
        }
      })();
      expect(error, field).toBeInstanceOf(ConfigError);
      expect((error as ConfigError).field, JSON.stringify(extra)).toBe(field);
    }
  });
});

it("failed jobs made for these tests are failed", async () => {
  expect((await tl.lane("default").counts()).failed).toBe(failedIds.length);
});
