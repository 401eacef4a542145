import { ErrorBodySchema } from "../schemas.ts";

const DESCRIPTIONS: Record<number, string> = {
  400: "Bad input; `field` names it",
  401: "Not authenticated",
  403: "Not allowed: the caller lacks the scope, or a cross-site write (code CSRF)",
  404: "No such lane, job or task",
  409: "The job is not in a state the operation applies to",
  413: "Body or payload too large",
  415: "Content-Type must be application/json",
  501: "The adapter (or this version) cannot do it; `capability` names what",
  503: "The backend failed or the client is closed",
};

/** Error answers for a route's OpenAPI entry, all with the same JSON body. */
export function errorResponses(...statuses: number[]) {
  const out: Record<
    number,
    { description: string; content: Record<string, { schema: typeof ErrorBodySchema }> }
  > = {};
  for (const status of [401, 403, ...statuses]) {
    out[status] = {
      description: DESCRIPTIONS[status] ?? "Error",
      content: { "application/json": { schema: ErrorBodySchema } },
    };
  }
  return out;
}

export function json<S>(schema: S, description: string) {
  return { description, content: { "application/json": { schema } } };
}

export function jsonBody<S>(schema: S) {
  return { required: true, content: { "application/json": { schema } } };
}
