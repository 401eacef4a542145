import type { ValidationIssue } from "@tasklane/core";
import { HTTPException } from "hono/http-exception";

/** The JSON body of every error answer. */
export interface ErrorBody {
  /** Stable, upper-case: branch on it. */
  code: string;
  message: string;
  /** The request field at fault: `lane`, `state`, `ids[3]`, `payload.to`. */
  field?: string;
  /** What the adapter (or this version) cannot do, on 501 answers. */
  capability?: string;
}

/**
 * An error that answers with its own status and JSON body. Routes throw it; an
 * `authorize` hook may throw it too (e.g. `new HttpError(401, "UNAUTHORIZED", "token expired")`).
 */
export class HttpError extends Error {
  readonly status: number;
  readonly code: string;
  readonly field: string | undefined;
  readonly capability: string | undefined;
  constructor(
    status: number,
    code: string,
    message: string,
    extra: { field?: string; capability?: string } = {},
  ) {
    super(message);
    this.name = "HttpError";
    this.status = status;
    this.code = code;
    this.field = extra.field;
    this.capability = extra.capability;
  }

  body(): ErrorBody {
    const body: ErrorBody = { code: this.code, message: this.message };
    if (this.field !== undefined) body.field = this.field;
    if (this.capability !== undefined) body.capability = this.capability;
    return body;
  }
}

/** `a.b[0].c`: a field path as the error body names it. */
export function formatPath(path: ReadonlyArray<PropertyKey | { key: PropertyKey }>): string {
  let out = "";
  for (const part of path) {
    const key = typeof part === "object" ? part.key : part;
    if (typeof key === "number") out += `[${key}]`;
    else out += out === "" ? String(key) : `.${String(key)}`;
  }
  return out;
}

/** What core's errors carry, read by their `code` (instanceof fails across package copies). */
interface CoreErrorLike {
  code: string;
  message: string;
  field?: string;
  feature?: string;
  issues?: ReadonlyArray<ValidationIssue>;
}

function isCoreError(error: unknown): error is CoreErrorLike {
  return (
    error instanceof Error &&
    typeof (error as { code?: unknown }).code === "string" &&
    error.name.endsWith("Error")
  );
}

const HTTP_EXCEPTION_CODES: Record<number, string> = {
  400: "BAD_REQUEST",
  401: "UNAUTHORIZED",
  403: "FORBIDDEN",
  404: "NOT_FOUND",
  413: "PAYLOAD_TOO_LARGE",
  415: "UNSUPPORTED_MEDIA_TYPE",
};

/**
 * The HttpError an error answers as, or undefined for an unexpected one (a 500, whose
 * message is not shown to the caller).
 */
export function toHttpError(error: unknown): HttpError | undefined {
  if (error instanceof HttpError) return error;
  if (error instanceof HTTPException) {
    // Hono's own: malformed JSON, a body over the limit, a wrong content type.
    const code = HTTP_EXCEPTION_CODES[error.status] ?? "BAD_REQUEST";
    const message =
      error.status === 415
        ? "Content-Type must be application/json"
        : error.message || `HTTP ${error.status}`;
    return new HttpError(
      error.status,
      code,
      message,
      error.status === 400 ? { field: "body" } : {},
    );
  }
  if (!isCoreError(error)) return undefined;
  switch (error.code) {
    case "VALIDATION": {
      // A payload refused by its task's schema: name the first field at fault.
      const first = error.issues?.[0];
      const field =
        first && first.path.length > 0 ? `payload.${formatPath(first.path)}` : "payload";
      return new HttpError(400, "VALIDATION", error.message, { field });
    }
    case "CONFIG": {
      // Publish options (`options.priority`) are the request body's own fields here.
      const field = (error.field ?? "").replace(/^options\./, "");
      return new HttpError(400, "BAD_REQUEST", error.message, field ? { field } : {});
    }
    case "DEPENDENCY_NOT_FOUND":
      // A dependsOn entry naming a job its lane does not hold: nothing was stored.
      return new HttpError(400, "DEPENDENCY_NOT_FOUND", error.message, { field: "dependsOn" });
    case "PAYLOAD_TOO_LARGE":
      return new HttpError(413, "PAYLOAD_TOO_LARGE", error.message, { field: "payload" });
    case "UNSUPPORTED":
      return new HttpError(
        501,
        "UNSUPPORTED",
        error.message,
        error.feature ? { capability: error.feature } : {},
      );
    case "CLOSED":
    case "ADAPTER":
    case "LANE_FULL":
      return new HttpError(503, "UNAVAILABLE", error.message);
    default:
      return undefined;
  }
}

/** A JSON error answer. */
export function errorResponse(error: HttpError): Response {
  return Response.json(error.body(), { status: error.status });
}
