/**
 * Test support: a real chromium (Debian's, driven by playwright-core), the real management
 * handler with the dashboard over node:http on a free port of 127.0.0.1, screenshots to a
 * git-ignored folder, and waiting for conditions (never fixed sleeps).
 */
import { mkdirSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import type { Tasklane } from "@tasklane/core";
import { createManagementHandler, type ManagementHandlerOptions } from "@tasklane/http";
import { createNodeListener } from "@tasklane/http/node";
import {
  type Browser,
  type BrowserContext,
  chromium,
  type Locator,
  type Page,
} from "playwright-core";
import { createDashboard, type DashboardOptions } from "../src/index.ts";

/** Debian's chromium (`apt-get install chromium`; `.ci/run` installs it), or CHROMIUM_BIN. */
export const CHROMIUM = process.env.CHROMIUM_BIN ?? "/usr/bin/chromium";

export const SCREENSHOTS = fileURLToPath(new URL("../test-results/screenshots/", import.meta.url));

export interface TestBrowser {
  browser: Browser;
  /** A new context (its own storage: sessionStorage, cookies) and page. */
  page(options?: {
    colorScheme?: "light" | "dark";
    width?: number;
    height?: number;
  }): Promise<Page>;
  close(): Promise<void>;
}

/**
 * One headless chromium; every page records console errors. Playwright starts it with a
 * fresh temporary profile of its own (it refuses a --user-data-dir argument).
 */
export async function launchBrowser(): Promise<TestBrowser & { errors: string[] }> {
  const browser = await chromium.launch({
    executablePath: CHROMIUM,
    args: [
      "--no-sandbox",
      "--headless",
      "--disable-gpu",
      "--disable-quic",
      "--no-first-run",
      "--disable-background-networking",
      "--disable-component-update",
      "--disable-sync",
    ],
  });
  const contexts: BrowserContext[] = [];
  const errors: string[] = [];
  return {
    browser,
    errors,
    async page(options = {}) {
      const context = await browser.newContext({
        viewport: { width: options.width ?? 1360, height: options.height ?? 860 },
        colorScheme: options.colorScheme ?? "light",
        reducedMotion: "reduce",
      });
      contexts.push(context);
      const page = await context.newPage();
      page.on("pageerror", (e) => errors.push(`pageerror: ${e.message}`));
      page.on("console", (m) => {
        if (m.type() === "error" && !/status of (401|403|404|409|501)/.test(m.text())) {
          errors.push(`console: ${m.text()}`);
        }
      });
      return page;
    },
    async close() {
      for (const c of contexts) await c.close().catch(() => {});
      await browser.close();
    },
  };
}

export interface TestServer {
  /** The dashboard's page, e.g. http://127.0.0.1:1234/ops/ui/ */
  ui: string;
  /** The API's base, e.g. http://127.0.0.1:1234/ops */
  api: string;
  server: Server;
  close(): Promise<void>;
}

export async function serveDashboard(
  tl: Tasklane,
  options: Partial<ManagementHandlerOptions> & { dashboardOptions?: DashboardOptions } = {},
): Promise<TestServer> {
  const { dashboardOptions, ...rest } = options;
  const handler = createManagementHandler({
    tasklane: tl,
    basePath: "/ops",
    dashboard: createDashboard(dashboardOptions),
    eventHeartbeatMs: 1_000,
    ...rest,
  });
  const listener = createNodeListener(handler);
  const server = createServer((req, res) => listener(req, res, () => res.writeHead(404).end()));
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  const api = `http://127.0.0.1:${port}${handler.basePath}`;
  return {
    api,
    ui: `${api}${dashboardOptions?.path ?? "/ui"}/`,
    server,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** Save a full-page screenshot under test-results/screenshots/ (git-ignored). */
export async function screenshot(page: Page, name: string): Promise<string> {
  mkdirSync(SCREENSHOTS, { recursive: true });
  const path = join(SCREENSHOTS, `${name}.png`);
  // Nothing animating or half-drawn: charts are canvases drawn on load.
  await page.evaluate("document.fonts.ready");
  await page.screenshot({ path, fullPage: true, animations: "disabled" });
  return path;
}

/** Poll until `check` returns a truthy value. */
export async function waitFor<T>(
  check: () => T | Promise<T>,
  what: string,
  timeoutMs = 15_000,
): Promise<NonNullable<T>> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    try {
      const value = await check();
      if (value) return value as NonNullable<T>;
    } catch (error) {
      last = error;
    }
    if (Date.now() > deadline) {
      throw new Error(
        `Timed out waiting for ${what}${last ? ` (last error: ${String(last)})` : ""}`,
      );
    }
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

/** Wait until a locator's text satisfies `match`; returns the text. */
export async function waitForText(
  locator: Locator,
  match: (text: string) => boolean,
  what: string,
  timeoutMs = 15_000,
): Promise<string> {
  return waitFor(
    async () => {
      const text = (await locator.first().textContent({ timeout: 1_000 })) ?? "";
      return match(text) ? text || " " : undefined;
    },
    what,
    timeoutMs,
  );
}

/** Sign in with a token on the dashboard's sign-in form. */
export async function signIn(page: Page, url: string, token: string): Promise<void> {
  await page.goto(url);
  await page.getByLabel("Token").fill(token);
  await page.getByRole("button", { name: "Sign in" }).click();
  await page.getByRole("navigation", { name: "Sections" }).waitFor();
}
