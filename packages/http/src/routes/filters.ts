/**
 * Searches: the query's or body's filter as core's JobFilter, each condition checked
 * against the adapter's capabilities first (501 naming the one it lacks), and the list
 * cursor the API hands out, which wraps the adapter's with the filter it was made for.
 */
import type { JobFilter, JobState } from "@tasklane/core";
import type { ApiContext } from "../api-context.ts";
import { HttpError } from "../errors.ts";

/** A filter as a request gives it (query or body), every field optional but its kind. */
export interface FilterInput {
  state?: JobState | undefined;
  task?: string | undefined;
  tag?: string | undefined;
  errorName?: string | undefined;
  since?: number | undefined;
  until?: number | undefined;
}

/** Whether the filter has a condition other than its state (what only `search` answers). */
export function searches(filter: FilterInput): boolean {
  return (
    filter.task !== undefined ||
    filter.tag !== undefined ||
    filter.errorName !== undefined ||
    filter.since !== undefined ||
    filter.until !== undefined
  );
}

/**
 * The filter as core's JobFilter. Any condition but the state needs capability `search`
 * (a tag also `tags`); `needState` refuses a filter without a state unless the adapter
 * can search every state.
 */
export function searchFilter(
  ctx: ApiContext,
  input: FilterInput,
  options: { needState?: boolean } = {},
): JobFilter {
  if (input.tag !== undefined) ctx.require("tags", "finding jobs by tag");
  if (searches(input)) ctx.require("search", "searching jobs (task, tag, errorName, since, until)");
  if (options.needState && input.state === undefined) {
    ctx.require("search", "listing jobs of every state at once (give a state)");
  }
  const filter: JobFilter = {};
  if (input.state !== undefined) filter.state = input.state;
  if (input.task !== undefined) filter.task = input.task;
  if (input.tag !== undefined) filter.tag = input.tag;
  if (input.errorName !== undefined) filter.errorName = input.errorName;
  if (input.since !== undefined) filter.since = input.since;
  if (input.until !== undefined) filter.until = input.until;
  return filter;
}

// ── cursors ────────────────────────────────────────────────────────────────────────────

const CURSOR_PREFIX = "c1.";

/** What a cursor is tied to: the lane and every condition (not fields, limit or offset). */
function filterKey(lane: string, filter: JobFilter): string {
  return JSON.stringify([
    lane,
    filter.state ?? null,
    filter.task ?? null,
    filter.tag ?? null,
    filter.errorName ?? null,
    filter.since ?? null,
    filter.until ?? null,
  ]);
}

function toBase64Url(text: string): string {
  // btoa over UTF-8 bytes: the handler runs on any Fetch runtime, not only Node.
  let binary = "";
  for (const byte of new TextEncoder().encode(text)) binary += String.fromCharCode(byte);
  return btoa(binary).replaceAll("+", "-").replaceAll("/", "_").replace(/=+$/, "");
}

function fromBase64Url(text: string): string {
  const binary = atob(text.replaceAll("-", "+").replaceAll("_", "/"));
  const bytes = Uint8Array.from(binary, (ch) => ch.charCodeAt(0));
  return new TextDecoder("utf-8", { fatal: true }).decode(bytes);
}

/**
 * The API's cursor: the adapter's, with the lane and filter it continues. A cursor is
 * only meaningful for the listing that made it, so one passed with another filter is a
 * 400 rather than a listing that silently skips or repeats jobs.
 */
export function encodeCursor(lane: string, filter: JobFilter, adapterCursor: string): string {
  return CURSOR_PREFIX + toBase64Url(JSON.stringify([filterKey(lane, filter), adapterCursor]));
}

/** The adapter's cursor inside an API cursor made for this lane and filter; else 400 naming `field`. */
export function decodeCursor(
  lane: string,
  filter: JobFilter,
  cursor: string,
  field = "cursor",
): string {
  let parsed: unknown;
  try {
    if (!cursor.startsWith(CURSOR_PREFIX)) throw new Error("no prefix");
    parsed = JSON.parse(fromBase64Url(cursor.slice(CURSOR_PREFIX.length)));
  } catch {
    throw new HttpError(400, "BAD_REQUEST", `${field}: is not a cursor this API made`, { field });
  }
  if (
    !Array.isArray(parsed) ||
    parsed.length !== 2 ||
    typeof parsed[0] !== "string" ||
    typeof parsed[1] !== "string"
  ) {
    throw new HttpError(400, "BAD_REQUEST", `${field}: is not a cursor this API made`, { field });
  }
  if (parsed[0] !== filterKey(lane, filter)) {
    throw new HttpError(
      400,
      "BAD_REQUEST",
      `${field}: was made for another lane or filter; pass the filter it was made with`,
      { field },
    );
  }
  return parsed[1];
}
