import { ConfigError } from "@tasklane/core";
import { type Assets, loadAssets } from "./assets.ts";
import { CONTENT_SECURITY_POLICY, type PageConfig, renderPage } from "./page.ts";

/**
 * How the dashboard authenticates its API calls.
 *
 * - `token` (default): the API's `authorize` reads a header. The dashboard asks for the
 *   token when the API answers 401, keeps it in the tab's sessionStorage (gone when the
 *   tab closes) and sends it as `<header>: <scheme> <token>` on every call.
 * - `cookie`: the application's own sign-in sets a cookie the browser sends by itself;
 *   on a 401 the dashboard links to `signInUrl` (if given) instead of asking for a token.
 */
export type DashboardAuth =
  | {
      kind: "token";
      /** Header that carries the token. Default `authorization`. */
      header?: string;
      /** Put before the token (`Bearer abc`); `""` for none. Default `Bearer`. */
      scheme?: string;
    }
  | {
      kind: "cookie";
      /** Where to send a user the API answers 401 (the app's sign-in page). */
      signInUrl?: string;
    };

export interface DashboardOptions {
  /** Where under the API's basePath the UI is served. Default `/ui`. */
  path?: string;
  /** The page's title and header. Default `tasklane`. */
  title?: string;
  /** How API calls are authenticated. Default `{ kind: "token" }` (a bearer token). */
  auth?: DashboardAuth;
}

/**
 * The dashboard as `@tasklane/http`'s `dashboard` option: its path under the API's
 * basePath, and a Fetch-standard function answering for the files under it.
 */
export interface Dashboard {
  readonly path: string;
  fetch(request: Request, where: { path: string; base: string }): Promise<Response>;
}

const SECURITY_HEADERS = {
  "x-content-type-options": "nosniff",
  "referrer-policy": "no-referrer",
};

function check(field: string, value: unknown, ok: boolean, message: string): void {
  if (!ok) throw new ConfigError(field, value, message);
}

function pageConfig(options: DashboardOptions, path: string): PageConfig {
  const auth = options.auth ?? { kind: "token" };
  const title = options.title ?? "tasklane";
  check(
    "title",
    title,
    typeof title === "string" && title.length > 0,
    "must be a non-empty string",
  );
  // The page is at `<base><path>/`; the API's base is one `../` per segment of `path`.
  const api = "../".repeat(path.split("/").length - 1);
  if (auth.kind === "token") {
    const header = auth.header ?? "authorization";
    check(
      "auth.header",
      header,
      typeof header === "string" && /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/.test(header),
      "must be an HTTP header name",
    );
    const scheme = auth.scheme ?? "Bearer";
    check(
      "auth.scheme",
      scheme,
      typeof scheme === "string" && !/[\r\n]/.test(scheme),
      "must be a string",
    );
    return { api, title, auth: { kind: "token", header: header.toLowerCase(), scheme } };
  }
  if (auth.kind === "cookie") {
    const signInUrl = auth.signInUrl ?? null;
    check(
      "auth.signInUrl",
      signInUrl,
      signInUrl === null || (typeof signInUrl === "string" && signInUrl.length > 0),
      "must be a URL (absolute, or relative to the dashboard's page)",
    );
    return { api, title, auth: { kind: "cookie", signInUrl } };
  }
  throw new ConfigError(
    "auth.kind",
    (auth as { kind: unknown }).kind,
    'must be "token" or "cookie"',
  );
}

/**
 * The tasklane dashboard: a web UI for the management API, served by the same handler.
 *
 * @example
 * createManagementHandler({ tasklane: tl, basePath: "/tasklane", authorize, dashboard: createDashboard() });
 * // open /tasklane/ui/
 */
export function createDashboard(options: DashboardOptions = {}): Dashboard {
  const path = options.path ?? "/ui";
  check(
    "path",
    path,
    typeof path === "string" && /^(\/[^/?#\s]+)+$/.test(path) && !/\/\.\.?(\/|$)/.test(path),
    'must be a path like "/ui", without a trailing slash',
  );
  const config = pageConfig(options, path);
  // Loaded on the first request, once: reading (or, from source, building) the bundle
  // costs nothing for a process that never serves the page. A failure is not cached, so
  // a later request tries again.
  let loading: Promise<{ assets: Assets; page: Uint8Array }> | undefined;
  const load = () => {
    loading ??= loadAssets().then(
      (assets) => ({ assets, page: new TextEncoder().encode(renderPage(config, assets)) }),
      (error: unknown) => {
        loading = undefined;
        throw error;
      },
    );
    return loading;
  };

  return {
    path,
    async fetch(request, where) {
      const head = request.method === "HEAD";
      const url = new URL(request.url);
      if (where.path === "") {
        // The page must be at `…/ui/` for its relative URLs to resolve under it; a
        // relative Location keeps working behind a proxy that rewrites the prefix.
        const last = where.base.slice(where.base.lastIndexOf("/") + 1);
        return new Response(null, {
          status: 308,
          headers: { location: `./${last}/${url.search}` },
        });
      }
      const { assets, page } = await load();
      if (where.path === "/" || where.path === "/index.html") {
        return new Response(head ? null : page, {
          headers: {
            "content-type": "text/html; charset=utf-8",
            "cache-control": "no-cache",
            "content-security-policy": CONTENT_SECURITY_POLICY,
            ...SECURITY_HEADERS,
          },
        });
      }
      const file = assets.files.get(where.path.slice(1));
      if (file === undefined) {
        return new Response(head ? null : "Not found\n", {
          status: 404,
          headers: { "content-type": "text/plain; charset=utf-8", ...SECURITY_HEADERS },
        });
      }
      const gzip =
        file.gzipped !== undefined && /\bgzip\b/.test(request.headers.get("accept-encoding") ?? "");
      const body = gzip ? file.gzipped : file.contents;
      return new Response(head ? null : (body as Uint8Array<ArrayBuffer>), {
        headers: {
          "content-type": file.type,
          "content-length": String(body?.length ?? 0),
          // Content-hashed names: a new build has new names, so a name never goes stale.
          "cache-control": "public, max-age=31536000, immutable",
          vary: "accept-encoding",
          ...(gzip ? { "content-encoding": "gzip" } : {}),
          ...SECURITY_HEADERS,
        },
      });
    },
  };
}
