import { useEffect, useState } from "preact/hooks";
import { JOB_STATES, type JobState } from "./types.ts";

/** The views, addressed by the URL's hash: the page stays at one path under any mount. */
export type Route =
  | { view: "lanes" }
  | { view: "lane"; lane: string }
  | { view: "jobs"; lane: string; state: JobState; filter: JobsFilter }
  | { view: "job"; lane: string; id: string }
  | { view: "failures" }
  | { view: "workers" }
  | { view: "schedules" }
  | { view: "missing"; hash: string };

/**
 * A job list's filters: `task`, `tag` and `errorName` go to the API where the adapter can
 * search (and `task` is matched here where it cannot); `q` is matched here, in the
 * browser, against id, task, payload and error text.
 */
export interface JobsFilter {
  q: string;
  task: string;
  tag: string;
  errorName: string;
}

export const NO_FILTER: JobsFilter = { q: "", task: "", tag: "", errorName: "" };
const FILTER_KEYS = ["q", "task", "tag", "errorName"] as const;

const enc = encodeURIComponent;

export function href(route: Route): string {
  switch (route.view) {
    case "lanes":
      return "#/";
    case "lane":
      return `#/lanes/${enc(route.lane)}`;
    case "jobs": {
      const query = new URLSearchParams();
      for (const key of FILTER_KEYS)
        if (route.filter[key] !== "") query.set(key, route.filter[key]);
      const qs = query.toString();
      return `#/lanes/${enc(route.lane)}/jobs/${route.state}${qs === "" ? "" : `?${qs}`}`;
    }
    case "job":
      return `#/job/${enc(route.lane)}/${enc(route.id)}`;
    case "missing":
      return `#${route.hash}`;
    default:
      return `#/${route.view}`;
  }
}

export const jobsHref = (lane: string, state: JobState, filter: Partial<JobsFilter> = {}) =>
  href({ view: "jobs", lane, state, filter: { ...NO_FILTER, ...filter } });

export function parse(hash: string): Route {
  const raw = hash.replace(/^#/, "") || "/";
  const [path = "/", search = ""] = raw.split("?", 2);
  const query = new URLSearchParams(search);
  const parts = path
    .split("/")
    .filter((p) => p !== "")
    .map((p) => {
      try {
        return decodeURIComponent(p);
      } catch {
        return p;
      }
    });
  const [a, b, c, d] = parts;
  if (parts.length === 0) return { view: "lanes" };
  if (a === "lanes" && b !== undefined && parts.length === 2) return { view: "lane", lane: b };
  if (a === "lanes" && b !== undefined && c === "jobs" && parts.length === 4) {
    if ((JOB_STATES as readonly string[]).includes(d ?? "")) {
      const filter = { ...NO_FILTER };
      for (const key of FILTER_KEYS) filter[key] = query.get(key) ?? "";
      return { view: "jobs", lane: b, state: d as JobState, filter };
    }
  }
  if (a === "job" && b !== undefined && c !== undefined && parts.length === 3) {
    return { view: "job", lane: b, id: c };
  }
  if (parts.length === 1 && (a === "failures" || a === "workers" || a === "schedules")) {
    return { view: a };
  }
  return { view: "missing", hash: raw };
}

export function useRoute(): Route {
  const [route, setRoute] = useState(() => parse(window.location.hash));
  useEffect(() => {
    const update = () => setRoute(parse(window.location.hash));
    window.addEventListener("hashchange", update);
    return () => window.removeEventListener("hashchange", update);
  }, []);
  return route;
}

export function navigate(route: Route | string, replace = false): void {
  const target = typeof route === "string" ? route : href(route);
  if (replace) {
    history.replaceState(null, "", target);
    window.dispatchEvent(new HashChangeEvent("hashchange"));
  } else {
    window.location.hash = target;
  }
}
