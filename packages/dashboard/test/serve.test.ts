/**
 * How the dashboard's files are served, without a browser: the page and its headers,
 * the bundle (content-hashed, gzipped, cached for good), options, and the package as it
 * is published (dist/ built by its prepack, run by plain node, no esbuild involved).
 */
import { execFile } from "node:child_process";
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { gzipSync } from "node:zlib";
import { createMemoryAdapter } from "@tasklane/adapter-memory";
import { ConfigError, createTasklane, type Tasklane } from "@tasklane/core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createDashboard } from "../src/index.ts";
import { serveDashboard, type TestServer } from "./helpers.ts";

const run = promisify(execFile);
const PACKAGE = fileURLToPath(new URL("../", import.meta.url));
/** What the README promises the bundle stays under, gzipped (JS and CSS together). */
const GZIP_BUDGET_BYTES = 64 * 1024;

let tl: Tasklane;
let srv: TestServer;

beforeAll(async () => {
  tl = createTasklane({ adapter: createMemoryAdapter(), lanes: [{ name: "default" }], tasks: [] });
  srv = await serveDashboard(tl, {
    dashboardOptions: { path: "/admin/queues", title: "Ops <queues>" },
  });
});

afterAll(async () => {
  await srv?.close();
  await tl?.close();
});

/** The config the page carries, and the files it loads. */
function readPage(html: string) {
  const config = JSON.parse(
    /<script type="application\/json" id="tasklane-config">(.*?)<\/script>/s.exec(html)?.[1] ?? "",
  );
  const script = /<script type="module" src="\.\/([^"]+)"/.exec(html)?.[1];
  const style = /<link rel="stylesheet" href="\.\/([^"]+)"/.exec(html)?.[1];
  return { config, script, style };
}

describe("serving", () => {
  it("redirects the bare path to the page, relatively", async () => {
    const response = await fetch(srv.ui.replace(/\/$/, "?x=1"), { redirect: "manual" });
    expect(response.status).toBe(308);
    expect(response.headers.get("location")).toBe("./queues/?x=1");
  });

  it("serves the page with its config, a strict CSP and no caching", async () => {
    const response = await fetch(srv.ui);
    expect(response.status).toBe(200);
    expect(response.headers.get("content-type")).toBe("text/html; charset=utf-8");
    expect(response.headers.get("cache-control")).toBe("no-cache");
    const csp = response.headers.get("content-security-policy") ?? "";
    expect(csp).toContain("script-src 'self'");
    expect(csp).toContain("frame-ancestors 'none'");
    expect(response.headers.get("x-content-type-options")).toBe("nosniff");
    const html = await response.text();
    expect(html).toContain("<title>Ops &#60;queues&#62;</title>");
    const { config } = readPage(html);
    // Two segments deep: the API is two levels up, relative to the page.
    expect(config).toEqual({
      api: "../../",
      title: "Ops <queues>",
      auth: { kind: "token", header: "authorization", scheme: "Bearer" },
    });
    expect(html).not.toContain("<queues>");
    const head = await fetch(srv.ui, { method: "HEAD" });
    expect(head.status).toBe(200);
    expect(await head.text()).toBe("");
  });

  it("serves the bundle gzipped to clients that take it, cached for good", async () => {
    const { script, style } = readPage(await (await fetch(srv.ui)).text());
    expect(script).toMatch(/^main-[A-Z0-9]+\.js$/);
    expect(style).toMatch(/^main-[A-Z0-9]+\.css$/);
    let gzipped = 0;
    for (const name of [script, style]) {
      const zipped = await fetch(`${srv.ui}${name}`, { headers: { "accept-encoding": "gzip" } });
      expect(zipped.headers.get("cache-control")).toBe("public, max-age=31536000, immutable");
      expect(zipped.headers.get("vary")).toBe("accept-encoding");
      // fetch decodes gzip itself; the length header is the encoded size.
      gzipped += Number(zipped.headers.get("content-length"));
      expect(zipped.headers.get("content-encoding")).toBe("gzip");
      const body = await zipped.text();
      const plain = await fetch(`${srv.ui}${name}`, { headers: { "accept-encoding": "identity" } });
      expect(plain.headers.get("content-encoding")).toBeNull();
      expect(await plain.text()).toBe(body);
    }
    expect(gzipped).toBeLessThan(GZIP_BUDGET_BYTES);
    const missing = await fetch(`${srv.ui}nope.js`);
    expect(missing.status).toBe(404);
  });

  it("checks its options, naming the field", () => {
    const bad: Array<[Parameters<typeof createDashboard>[0], string]> = [
      [{ path: "ui" }, "path"],
      [{ path: "/ui/" }, "path"],
      [{ path: "/a/../b" }, "path"],
      [{ title: "" }, "title"],
      [{ auth: { kind: "token", header: "bad header" } }, "auth.header"],
      [{ auth: { kind: "cookie", signInUrl: "" } }, "auth.signInUrl"],
      [{ auth: { kind: "magic" } as never }, "auth.kind"],
    ];
    for (const [options, field] of bad) {
      let error: unknown;
      try {
        createDashboard(options);
      } catch (e) {
        error = e;
      }
      expect(error, field).toBeInstanceOf(ConfigError);
      expect((error as ConfigError).field, JSON.stringify(options)).toBe(field);
    }
    expect(createDashboard().path).toBe("/ui");
  });
});

describe("as published", () => {
  it("serves dist/assets from the built package, under its size budget", async () => {
    // What `npm pack` runs (prepack): a clean tsc build, then the bundle into dist/assets.
    await run("npm", ["run", "prepack"], { cwd: PACKAGE, env: process.env });
    const assets = join(PACKAGE, "dist/assets");
    const manifest = JSON.parse(readFileSync(join(assets, "manifest.json"), "utf8"));
    expect(manifest.files.sort()).toEqual(
      readdirSync(assets)
        .filter((f) => f !== "manifest.json")
        .sort(),
    );
    let gzipped = 0;
    for (const name of [manifest.script, manifest.style]) {
      gzipped += gzipSync(readFileSync(join(assets, name)), { level: 9 }).length;
      expect(statSync(join(assets, `${name}.map`)).size).toBeGreaterThan(0);
    }
    expect(gzipped).toBeLessThan(GZIP_BUDGET_BYTES);

    // Plain node, no source condition: dist/index.js reads dist/assets.
    const probe = `
      import { createDashboard } from ${JSON.stringify(join(PACKAGE, "dist/index.js"))};
      const ui = createDashboard();
      const where = (path) => ({ path, base: "/ops/ui" });
      const page = await (await ui.fetch(new Request("http://h/ops/ui/"), where("/"))).text();
      const script = /src="\\.\\/([^"]+)"/.exec(page)[1];
      const js = await ui.fetch(new Request("http://h/ops/ui/" + script), where("/" + script));
      console.log(JSON.stringify({ script, status: js.status, type: js.headers.get("content-type"), bytes: (await js.arrayBuffer()).byteLength }));
    `;
    const { stdout } = await run(process.execPath, ["--input-type=module", "-e", probe]);
    const answer = JSON.parse(stdout);
    expect(answer).toMatchObject({
      script: manifest.script,
      status: 200,
      type: "text/javascript; charset=utf-8",
    });
    expect(answer.bytes).toBe(statSync(join(assets, manifest.script)).size);
  }, 180_000);
});
