/**
 * The `dashboard` option (a web UI served under the API's basePath) and the caller's scope
 * in `GET /`, which a UI reads to offer writes only to callers that may make them.
 */
import { ConfigError, type Tasklane } from "@tasklane/core";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createManagementHandler, type ManagementAction, type ManagementUi } from "../src/index.ts";
import { call, createClient, serve, type TestServer } from "./helpers.ts";

let tl: Tasklane;
let srv: TestServer | undefined;

beforeEach(() => {
  tl = createClient();
});

afterEach(async () => {
  await srv?.close();
  srv = undefined;
  await tl.close();
});

/** A UI that answers with what it was asked, as text. */
function echoUi(path = "/ui"): ManagementUi & { seen: string[] } {
  const seen: string[] = [];
  return {
    path,
    seen,
    fetch(request, where) {
      seen.push(`${request.method} ${where.path} ${where.base}`);
      return new Response(request.method === "HEAD" ? null : `ui ${where.path}`, {
        headers: { "content-type": "text/plain" },
      });
    },
  };
}

describe("dashboard option", () => {
  it("serves the UI's GET and HEAD under basePath + path, without authorize", async () => {
    const actions: ManagementAction[] = [];
    const ui = echoUi();
    srv = await serve({
      tasklane: tl,
      basePath: "/ops",
      dashboard: ui,
      authorize: (_request, action) => {
        actions.push(action);
        return false;
      },
    });
    for (const [path, rest] of [
      ["/ui", ""],
      ["/ui/", "/"],
      ["/ui/app-1234.js", "/app-1234.js"],
    ] as const) {
      const response = await fetch(`${srv.url}${path}`);
      expect(response.status).toBe(200);
      expect(await response.text()).toBe(`ui ${rest}`);
    }
    const head = await fetch(`${srv.url}/ui/`, { method: "HEAD" });
    expect(head.status).toBe(200);
    expect(ui.seen).toEqual([
      "GET  /ops/ui",
      "GET / /ops/ui",
      "GET /app-1234.js /ops/ui",
      "HEAD / /ops/ui",
    ]);
    expect(actions).toEqual([]);
    // The API itself still asks authorize.
    expect((await call(`${srv.url}/lanes`)).status).toBe(401);
    expect(actions.map((a) => a.operation)).toEqual(["listLanes"]);
  });

  it("leaves other methods and other paths to the API", async () => {
    const ui = echoUi("/admin/ui");
    srv = await serve({ tasklane: tl, dashboard: ui, allowAnonymousWrites: true });
    const post = await call(`${srv.url}/admin/ui/x`, { method: "POST", body: {} });
    expect(post.status).toBe(404);
    expect(post.body).toMatchObject({ code: "NOT_FOUND" });
    // A path that only starts like the UI's is not the UI's.
    expect((await call(`${srv.url}/admin/uix`)).status).toBe(404);
    expect((await call(`${srv.url}/lanes`)).status).toBe(200);
    expect(ui.seen).toEqual([]);
  });

  it("answers 500 and tells onError when the UI throws", async () => {
    const errors: unknown[] = [];
    srv = await serve({
      tasklane: tl,
      onError: (error) => errors.push(error),
      dashboard: {
        path: "/ui",
        fetch: () => {
          throw new Error("assets missing");
        },
      },
    });
    const { status, body } = await call(`${srv.url}/ui/`);
    expect(status).toBe(500);
    expect(body).toEqual({ code: "INTERNAL", message: "Internal error" });
    expect(errors).toHaveLength(1);
    expect((errors[0] as Error).message).toBe("assets missing");
  });

  it("refuses a path that is malformed or shadows the API's routes", () => {
    const fetch = () => new Response("");
    for (const path of ["ui", "/ui/", "/", "", "/lanes", "/events/ui", "/openapi.json"]) {
      let error: unknown;
      try {
        createManagementHandler({ tasklane: tl, dashboard: { path, fetch } });
      } catch (e) {
        error = e;
      }
      expect(error, path).toBeInstanceOf(ConfigError);
      expect((error as ConfigError).field, path).toBe("dashboard.path");
    }
    let error: unknown;
    try {
      createManagementHandler({
        tasklane: tl,
        dashboard: { path: "/ui", fetch: "nope" } as unknown as ManagementUi,
      });
    } catch (e) {
      error = e;
    }
    expect((error as ConfigError).field).toBe("dashboard.fetch");
  });
});

describe("GET / tells the caller's scope", () => {
  it("is what authorize granted", async () => {
    srv = await serve({
      tasklane: tl,
      authorize: (request) =>
        request.headers.get("authorization") === "Bearer w" ? "write" : "read",
    });
    expect((await call(`${srv.url}/`)).body.scope).toBe("read");
    expect((await call(`${srv.url}/`, { headers: { authorization: "Bearer w" } })).body.scope).toBe(
      "write",
    );
  });

  it("is read for anonymous callers, write with allowAnonymousWrites", async () => {
    srv = await serve({ tasklane: tl });
    expect((await call(`${srv.url}/`)).body.scope).toBe("read");
    await srv.close();
    srv = await serve({ tasklane: tl, allowAnonymousWrites: true });
    expect((await call(`${srv.url}/`)).body.scope).toBe("write");
  });
});
