import { HttpError } from "./errors.ts";

/** What a caller may do: `read` (look) or `write` (change; includes read). */
export type Scope = "read" | "write";

/** The operation a request asks for, as `authorize` sees it. */
export interface ManagementAction {
  /** The scope the operation needs. */
  scope: Scope;
  /** The OpenAPI operationId, e.g. `listJobs`, `retryJobs`, `enqueueJob`. */
  operation: string;
  /** The lane in the path, if any. */
  lane?: string;
  /** The task in the path (enqueue), if any. */
  task?: string;
  /** The job id in the path, if any. */
  jobId?: string;
}

/**
 * What `authorize` answers: the scope the caller holds (`"write"` includes read), `"none"`
 * for a known caller who may do nothing here (403), or `false` / `null` / `undefined` when
 * the caller is not authenticated (401). It may also throw an `HttpError` to answer with
 * its own status and message.
 */
export type AuthorizeResult = Scope | "none" | false | null | undefined;

export type Authorize = (
  request: Request,
  action: ManagementAction,
) => AuthorizeResult | Promise<AuthorizeResult>;

export interface AccessOptions {
  authorize: Authorize | undefined;
  allowAnonymousWrites: boolean;
}

/**
 * Check a request against `authorize`, and answer the scope the caller holds. Without a
 * hook every caller is anonymous: reads are allowed, writes only with
 * `allowAnonymousWrites`.
 */
export async function checkAccess(
  request: Request,
  action: ManagementAction,
  options: AccessOptions,
): Promise<Scope> {
  const { authorize } = options;
  if (authorize === undefined) {
    if (action.scope === "write" && !options.allowAnonymousWrites) {
      throw new HttpError(
        401,
        "UNAUTHORIZED",
        "Writes need an authorized caller: pass authorize to createManagementHandler (or allowAnonymousWrites: true)",
      );
    }
    return options.allowAnonymousWrites ? "write" : "read";
  }
  const granted = await authorize(request, action);
  if (granted === false || granted === null || granted === undefined) {
    throw new HttpError(401, "UNAUTHORIZED", "Authentication required");
  }
  if (granted !== "read" && granted !== "write" && granted !== "none") {
    throw new Error(
      `authorize returned ${JSON.stringify(granted)}; expected "read", "write", "none" or false`,
    );
  }
  if (granted === "none" || (action.scope === "write" && granted === "read")) {
    throw new HttpError(
      403,
      "FORBIDDEN",
      `${action.operation} needs the ${action.scope} scope; this caller has ${granted === "none" ? "no scope here" : "read only"}`,
    );
  }
  return granted;
}

/**
 * Refuse a write a browser sends from another site (CSRF). A page on another origin can
 * make a browser send a "simple" POST (a form, or fetch without custom headers) with the
 * user's cookies and no CORS preflight, so every write is checked, whatever its content
 * type: that is why hono/csrf, which checks form content types only, is not enough here.
 *
 * - `Sec-Fetch-Site` (every current browser sends it): `same-origin` and `none` (typed by
 *   the user) pass; `same-site` and `cross-site` pass only from a trusted origin.
 * - Else `Origin` (older browsers): must be this request's host, or a trusted origin.
 * - Neither header: not a browser (curl, a server, the CLI), which sends no ambient
 *   cookies, so there is nothing to forge.
 */
export function checkCsrf(request: Request, trustedOrigins: ReadonlySet<string>): void {
  const site = request.headers.get("sec-fetch-site");
  const origin = request.headers.get("origin");
  const trusted = origin !== null && trustedOrigins.has(origin);
  if (site !== null) {
    if (site === "same-origin" || site === "none" || trusted) return;
    throw csrfError(`Sec-Fetch-Site: ${site}`);
  }
  if (origin === null || trusted) return;
  let host: string | undefined;
  try {
    host = new URL(origin).host;
  } catch {
    // "null" (sandboxed frames, file: pages) or garbage: never this site.
  }
  // The host, not the whole origin: behind a TLS-terminating proxy this request's URL
  // says http while the browser's Origin says https.
  if (host !== undefined && host === new URL(request.url).host) return;
  throw csrfError(`Origin: ${origin}`);
}

function csrfError(what: string): HttpError {
  return new HttpError(
    403,
    "CSRF",
    `Cross-site write refused (${what}); send writes from the same origin, or list the origin in trustedOrigins`,
  );
}
