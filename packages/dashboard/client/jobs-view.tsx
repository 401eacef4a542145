import { useEffect, useRef, useState } from "preact/hooks";
import type { Api, ApiError } from "./api.ts";
import { useApp, useLive, useTick } from "./app-context.ts";
import { type Can, type Feature, shownStates } from "./capabilities.ts";
import { fmtAgo, fmtInt, fmtTime, shortId } from "./format.ts";
import { Count } from "./lanes-view.tsx";
import { href, type JobsFilter, jobsHref, NO_FILTER, navigate } from "./router.ts";
import type { BulkResult, Job, JobState, JobSummary } from "./types.ts";
import { ActionButton, ErrorNotice, Notice, TagList } from "./ui.tsx";

/** Jobs on a page. */
const PAGE_SIZE = 25;
/** Most jobs one page read scans for matches of a text search (matched in the browser). */
const SCAN_LIMIT = 5_000;
/** Jobs asked for per request while scanning for matches. */
const SCAN_CHUNK = 500;

/**
 * Where a page starts: the API's list cursor (null: the start), and how many jobs after it
 * to skip. Where the adapter can search, pages follow the cursors the API hands out
 * (`{"next"}` lines), so a deep page costs what a first one does; elsewhere there is no
 * cursor and `skip` is the offset from the start.
 */
export interface Position {
  cursor: string | null;
  skip: number;
}

const START: Position = { cursor: null, skip: 0 };

export interface JobsPage {
  jobs: JobSummary[];
  /** Where the next page starts, or null at the end. */
  next: Position | null;
  /** Jobs read to fill this page. */
  scanned: number;
  /** The scan stopped at SCAN_LIMIT before the page was full. */
  capped: boolean;
}

/** The filters the API applies: task, tag and error name, where the adapter can search. */
function serverFilter(filter: JobsFilter, search: boolean): Partial<JobsFilter> {
  if (!search) return {};
  const out: Partial<JobsFilter> = {};
  if (filter.task !== "") out.task = filter.task;
  if (filter.tag !== "") out.tag = filter.tag;
  if (filter.errorName !== "") out.errorName = filter.errorName;
  return out;
}

/** Whether the browser must look at each job: a text search, or a task without search. */
function matchesHere(filter: JobsFilter, search: boolean): boolean {
  return filter.q !== "" || (!search && filter.task !== "");
}

export function matches(job: JobSummary | Job, filter: JobsFilter, search = false): boolean {
  if (!search && filter.task !== "" && job.task !== filter.task) return false;
  if (filter.q === "") return true;
  const q = filter.q.toLowerCase();
  if (job.id.toLowerCase().includes(q) || job.task.toLowerCase().includes(q)) return true;
  if (
    job.error !== undefined &&
    `${job.error.name}: ${job.error.message}`.toLowerCase().includes(q)
  )
    return true;
  const full = job as Job;
  const payload = full.payloadText ?? JSON.stringify(full.payload) ?? "";
  return payload.toLowerCase().includes(q);
}

/** The list's query for a state and the server's filters (no cursor, offset or limit). */
export function listQuery(
  lane: string,
  state: JobState,
  filter: JobsFilter,
  search: boolean,
  summary: boolean,
): string {
  const query = new URLSearchParams({ state });
  for (const [key, value] of Object.entries(serverFilter(filter, search))) query.set(key, value);
  if (summary) query.set("fields", "summary");
  return `lanes/${encodeURIComponent(lane)}/jobs?${query}`;
}

/**
 * Read jobs from `from`, `chunk` at a time, handing each to `onJob` with its position,
 * until `onJob` says stop (the request is aborted, so the server stops reading) or the
 * list ends (null). Each request follows the last one's `next` cursor where the API gives
 * one, else it moves its offset on.
 */
async function readFrom(
  api: Api,
  path: string,
  from: Position,
  chunk: number,
  onJob: (job: JobSummary, at: Position) => boolean,
  signal: AbortSignal,
): Promise<"stopped" | "end"> {
  let at = from;
  for (;;) {
    let n = 0;
    let next: string | null = null;
    let stopped = false;
    const cursor = at.cursor === null ? "" : `&cursor=${encodeURIComponent(at.cursor)}`;
    await api.lines<JobSummary & { next?: string }>(
      `${path}${cursor}&offset=${at.skip}&limit=${chunk}`,
      (line) => {
        if (line.id === undefined && typeof line.next === "string") {
          next = line.next;
          return true;
        }
        const here = { cursor: at.cursor, skip: at.skip + n };
        n++;
        if (!onJob(line, here)) {
          stopped = true;
          return false;
        }
        return true;
      },
      signal,
    );
    if (stopped) return "stopped";
    if (next !== null) at = { cursor: next, skip: 0 };
    else if (at.cursor === null && n === chunk) at = { cursor: null, skip: at.skip + n };
    else return "end";
  }
}

/**
 * One page of a state's jobs, read from the NDJSON list and stopped as soon as the page is
 * full (the server then stops reading the backend). The API filters by task, tag and
 * error name where the adapter can search; a text search (or a task elsewhere) is matched
 * here, reading at most SCAN_LIMIT jobs a page. The job after the page, when one is
 * read, tells where the next page starts.
 */
export async function loadJobsPage(
  api: Api,
  lane: string,
  state: JobState,
  from: Position,
  filter: JobsFilter,
  search: boolean,
  signal: AbortSignal,
): Promise<JobsPage> {
  const here = matchesHere(filter, search);
  // A text search needs the payload; a page that only shows its columns does not.
  const path = listQuery(lane, state, filter, search, filter.q === "");
  // Unfiltered with a cursor: a page a request, its `next` where the next page starts (a
  // request for one more job would leave the next page to start at an offset).
  const chunk = here ? SCAN_CHUNK : search ? PAGE_SIZE : PAGE_SIZE + 1;
  const jobs: JobSummary[] = [];
  let scanned = 0;
  let next: Position | null = null;
  let capped = false;
  await readFrom(
    api,
    path,
    from,
    chunk,
    (job, at) => {
      if (matches(job, filter, search)) {
        if (jobs.length === PAGE_SIZE) {
          next = at;
          return false;
        }
        jobs.push(job);
      }
      scanned++;
      if (here && scanned >= SCAN_LIMIT) {
        capped = true;
        next = { cursor: at.cursor, skip: at.skip + 1 };
        return false;
      }
      return true;
    },
    signal,
  );
  return { jobs, next, scanned, capped };
}

type Verb = "retry" | "cancel" | "delete" | "promote" | "priority" | "move";

/** Which actions a state offers, and the feature each needs. */
const BULK: Record<JobState, Array<{ verb: Verb; feature: Feature; label: string }>> = {
  waiting: [
    { verb: "cancel", feature: "cancel", label: "Cancel" },
    { verb: "delete", feature: "delete", label: "Delete" },
  ],
  delayed: [
    { verb: "promote", feature: "promote", label: "Promote" },
    { verb: "cancel", feature: "cancel", label: "Cancel" },
    { verb: "delete", feature: "delete", label: "Delete" },
  ],
  blocked: [
    { verb: "cancel", feature: "cancel", label: "Cancel" },
    { verb: "delete", feature: "delete", label: "Delete" },
  ],
  active: [{ verb: "cancel", feature: "cancelActive", label: "Cancel" }],
  succeeded: [{ verb: "delete", feature: "delete", label: "Delete" }],
  failed: [
    { verb: "retry", feature: "retry", label: "Retry" },
    { verb: "delete", feature: "delete", label: "Delete" },
  ],
  canceled: [{ verb: "delete", feature: "delete", label: "Delete" }],
  expired: [{ verb: "delete", feature: "delete", label: "Delete" }],
};

/** States whose jobs take a new priority, and states whose jobs can be moved. */
const PRIORITY_STATES: readonly JobState[] = ["waiting", "delayed"];
const MOVE_STATES: readonly JobState[] = ["waiting", "delayed", "active", "failed"];

const PAST: Record<Verb, string> = {
  retry: "retried",
  cancel: "canceled",
  delete: "deleted",
  promote: "promoted",
  priority: "re-prioritised",
  move: "moved",
};

/** Cancel, delete and move cannot be undone here: they are confirmed first. */
const CONFIRMED = new Set<Verb>(["cancel", "delete", "move"]);

function timeOf(job: JobSummary, state: JobState): number {
  if (state === "delayed") return job.runAt;
  if (state === "waiting" || state === "blocked") return job.publishedAt;
  return job.finishedAt ?? job.changedAt ?? job.runAt;
}

const TIME_HEADER: Record<JobState, string> = {
  waiting: "Published",
  delayed: "Runs",
  blocked: "Published",
  active: "Due",
  succeeded: "Finished",
  failed: "Failed",
  canceled: "Canceled",
  expired: "Expired",
};

/** Why an action cannot be used for the selection, or null. */
function selectedWhy(can: Can, feature: Feature, selected: number): string | null {
  return can(feature) ?? (selected === 0 ? "Select jobs first." : null);
}

export function JobsView(props: { lane: string; state: JobState; filter: JobsFilter }) {
  const { api, can, info, live: liveApi, confirm, notify } = useApp();
  const live = useLive();
  const now = useTick(5_000);
  const lane = live.lanes?.find((l) => l.name === props.lane);
  const filter = props.filter;
  const search = can("search") === null;
  const filtering =
    filter.q !== "" || filter.task !== "" || filter.tag !== "" || filter.errorName !== "";
  const filterKey = `${filter.q}\0${filter.task}\0${filter.tag}\0${filter.errorName}`;
  // Pages belong to their filter: a position from another filter's listing is never used
  // (its cursor would be refused), not even for the render before the reset below.
  const [paging, setPaging] = useState({ key: filterKey, positions: [START] });
  const positions = paging.key === filterKey ? paging.positions : [START];
  const setPositions = (next: Position[]) => setPaging({ key: filterKey, positions: next });
  const position = positions[positions.length - 1] ?? START;
  const [page, setPage] = useState<JobsPage | null>(null);
  const [error, setError] = useState<ApiError | null>(null);
  const [loading, setLoading] = useState(false);
  const [selected, setSelected] = useState<Set<string>>(new Set());
  const [generation, setGeneration] = useState(0);
  const [countAtLoad, setCountAtLoad] = useState<number | null>(null);
  const [progress, setProgress] = useState<string | null>(null);
  const [draft, setDraft] = useState<JobsFilter>(filter);
  const [priority, setPriority] = useState("0");
  const otherLanes = info.lanes.filter((l) => l !== props.lane);
  const [toLane, setToLane] = useState(otherLanes[0] ?? "");
  const searchBox = useRef<HTMLInputElement>(null);

  // A new lane, state or search starts at the first page with nothing selected.
  useEffect(() => {
    setPositions([START]);
    setSelected(new Set());
    setPage(null);
    setDraft(filter);
  }, [props.lane, props.state, filterKey]);
  useEffect(() => {
    if (can("list") !== null) return;
    const controller = new AbortController();
    setLoading(true);
    setCountAtLoad(
      liveApi.get().lanes?.find((l) => l.name === props.lane)?.counts[props.state] ?? null,
    );
    loadJobsPage(api, props.lane, props.state, position, filter, search, controller.signal).then(
      (p) => {
        if (controller.signal.aborted) return;
        setPage(p);
        setError(null);
        setLoading(false);
        // Selected jobs that left the page (retried, deleted) are no longer selected.
        setSelected((s) => new Set([...s].filter((id) => p.jobs.some((j) => j.id === id))));
      },
      (e: ApiError) => {
        if (controller.signal.aborted) return;
        setError(e);
        setLoading(false);
      },
    );
    return () => controller.abort();
  }, [props.lane, props.state, filterKey, position, generation]);

  // The first page follows the lane's count while nothing is selected; otherwise the
  // list waits for a click on Reload, so rows never move under the user's hand.
  const liveCount = lane?.counts[props.state] ?? null;
  const stale =
    page !== null && countAtLoad !== null && liveCount !== null && liveCount !== countAtLoad;
  const follow = positions.length === 1 && selected.size === 0 && progress === null;
  useEffect(() => {
    if (!stale || !follow || loading) return;
    const timer = setTimeout(() => setGeneration((g) => g + 1), 300);
    return () => clearTimeout(timer);
  }, [stale, follow, loading, liveCount]);

  const reload = () => setGeneration((g) => g + 1);
  const path = `lanes/${encodeURIComponent(props.lane)}/jobs`;
  /** What a bulk call's body adds to its ids or filter: the new priority, the target lane. */
  const extra = (verb: Verb): Record<string, unknown> =>
    verb === "priority" ? { priority: Number(priority) } : verb === "move" ? { toLane } : {};

  const runSelected = async (verb: Verb) => {
    const n = selected.size;
    const jobsText = `${n} selected job${n === 1 ? "" : "s"}`;
    if (CONFIRMED.has(verb)) {
      const ok = await confirm({
        title:
          verb === "delete"
            ? `Delete ${jobsText}?`
            : verb === "cancel"
              ? `Cancel ${jobsText}?`
              : `Move ${jobsText} to ${toLane}?`,
        body:
          verb === "delete"
            ? "Deleted jobs cannot be brought back."
            : verb === "cancel"
              ? "Canceled jobs do not run; a running one has its signal aborted."
              : `They leave ${props.lane} for ${toLane}, keeping their ids; a running one has its handler aborted and runs again there.`,
        confirm: verb === "delete" ? "Delete" : verb === "cancel" ? "Cancel jobs" : "Move",
        danger: verb !== "move",
      });
      if (!ok) return;
    }
    try {
      const r = await api.send<BulkResult>("POST", `${path}/${verb}`, {
        ids: [...selected],
        ...extra(verb),
      });
      notify(`${fmtInt(r.changed)} of ${fmtInt(r.matched)} selected jobs ${PAST[verb]}`);
    } catch (e) {
      notify(
        `Could not ${verb === "priority" ? "change the priority" : verb}: ${(e as Error).message}`,
        "error",
      );
    }
    setSelected(new Set());
    await liveApi.refresh();
    reload();
  };

  /** The filter a bulk call of every matching job sends: the state, and the server's filters. */
  const bulkFilter = { state: props.state, ...serverFilter(filter, search) };
  const serverFiltered = Object.keys(bulkFilter).length > 1;

  const runAll = async (verb: Verb, label: string) => {
    let total = lane?.counts[props.state] ?? 0;
    if (serverFiltered) {
      const q = new URLSearchParams(bulkFilter as Record<string, string>);
      total = (
        await api.get<{ count: number }>(`lanes/${encodeURIComponent(props.lane)}/count?${q}`)
      ).count;
    }
    const which = serverFiltered
      ? `${props.state} job${total === 1 ? "" : "s"} matching ${describe(filter, search)}`
      : `${props.state} job${total === 1 ? "" : "s"}`;
    const about = lane?.countsExact === false ? "about " : "";
    const n = `${about}${fmtInt(total)} ${which}`;
    const what =
      verb === "retry"
        ? `puts ${n} back to waiting`
        : verb === "promote"
          ? `makes ${n} due now`
          : verb === "priority"
            ? `gives ${n} priority ${priority}`
            : verb === "move"
              ? `moves ${n} to ${toLane}`
              : `will ${verb} ${n}`;
    const ok = await confirm({
      title: `${label} every ${props.state} job in ${props.lane}${serverFiltered ? " that matches" : ""}?`,
      body: `This ${what}: all of them, not only the ones this page shows${filter.q !== "" || (!search && filter.task !== "") ? " or the search here matches" : ""}.${verb === "delete" ? " Deleted jobs cannot be brought back." : ""}`,
      confirm: `${label} all`,
      danger: verb === "delete" || verb === "cancel",
    });
    if (!ok) return;
    let changed = 0;
    let cursor: string | undefined;
    setProgress(`${label}: 0 so far…`);
    try {
      for (;;) {
        const r: BulkResult = await api.send<BulkResult>("POST", `${path}/${verb}`, {
          filter: bulkFilter,
          ...extra(verb),
          ...(cursor !== undefined ? { cursor } : {}),
        });
        changed += r.changed;
        setProgress(`${label}: ${fmtInt(changed)} so far…`);
        // A priority change leaves jobs where they are: go on from where the call stopped.
        cursor = r.next;
        if (!r.more || (r.changed === 0 && cursor === undefined)) break;
      }
      notify(`${fmtInt(changed)} ${props.state} jobs ${PAST[verb]}`);
    } catch (e) {
      notify(`Stopped after ${fmtInt(changed)}: ${(e as Error).message}`, "error");
    }
    setProgress(null);
    setSelected(new Set());
    await liveApi.refresh();
    reload();
  };

  const retryOne = async (job: JobSummary) => {
    try {
      await api.send("POST", `${path}/${encodeURIComponent(job.id)}/retry`);
      notify(`Job ${shortId(job.id)} retried`);
    } catch (e) {
      notify(`Could not retry ${shortId(job.id)}: ${(e as Error).message}`, "error");
    }
    await liveApi.refresh();
    reload();
  };

  const apply = (next: Partial<JobsFilter>) =>
    navigate(jobsHref(props.lane, props.state, { ...filter, ...next }), true);

  const listWhy = can("list");
  const jobs = page?.jobs ?? [];
  const allSelected = jobs.length > 0 && jobs.every((j) => selected.has(j.id));
  const bulk = BULK[props.state];
  const canPriority = PRIORITY_STATES.includes(props.state);
  const canMove = MOVE_STATES.includes(props.state) && otherLanes.length > 0;
  const showTags = can("tags") === null;
  const noneLeft = (lane?.counts[props.state] ?? 0) === 0 ? `No ${props.state} jobs.` : null;
  const reasons = [
    ...bulk.map((b) => can(b.feature)),
    canPriority ? can("priority") : null,
    canMove ? can("move") : null,
  ].filter((w): w is string => w !== null);

  return (
    <>
      <nav class="crumbs" aria-label="Breadcrumb">
        <a href={href({ view: "lanes" })}>Lanes</a> /{" "}
        <a href={href({ view: "lane", lane: props.lane })}>{props.lane}</a> /{" "}
        <span aria-current="page">{props.state}</span>
      </nav>
      <div class="page-head">
        <h1>
          {props.lane} <span class="muted">·</span> {props.state} jobs
        </h1>
      </div>
      <nav class="tabs" aria-label="Job states">
        {shownStates(can).map((s) => (
          <a
            key={s}
            href={jobsHref(props.lane, s, filter)}
            class={`tab${s === props.state ? " tab-current" : ""}`}
            aria-current={s === props.state ? "page" : undefined}
          >
            {s}
            <span class="tab-count">
              {lane ? <Count value={lane.counts[s] ?? 0} exact={lane.countsExact} /> : "…"}
            </span>
          </a>
        ))}
      </nav>
      {listWhy !== null ? (
        <Notice>{listWhy} The counts above are all it reports.</Notice>
      ) : (
        <>
          <search aria-label={`Search ${props.state} jobs`}>
            <form
              class="toolbar"
              onSubmit={(e) => {
                e.preventDefault();
                apply({
                  q: draft.q.trim(),
                  tag: draft.tag.trim(),
                  errorName: draft.errorName.trim(),
                });
              }}
            >
              <label class="field">
                <span class="sr-only">Search this state's jobs</span>
                <input
                  ref={searchBox}
                  type="search"
                  placeholder="Search id, task, payload, error"
                  value={draft.q}
                  onInput={(e) => setDraft({ ...draft, q: (e.target as HTMLInputElement).value })}
                />
              </label>
              <label class="field">
                <span class="sr-only">Task</span>
                <select
                  value={filter.task}
                  onChange={(e) => apply({ task: (e.target as HTMLSelectElement).value })}
                >
                  <option value="">All tasks</option>
                  {info.tasks.map((t) => (
                    <option key={t} value={t}>
                      {t}
                    </option>
                  ))}
                </select>
              </label>
              {search ? (
                <>
                  {showTags ? (
                    <label class="field">
                      <span class="sr-only">Tag</span>
                      <input
                        type="search"
                        class="input-short"
                        placeholder="Tag"
                        value={draft.tag}
                        onInput={(e) =>
                          setDraft({ ...draft, tag: (e.target as HTMLInputElement).value })
                        }
                      />
                    </label>
                  ) : null}
                  <label class="field">
                    <span class="sr-only">Error name</span>
                    <input
                      type="search"
                      class="input-short"
                      placeholder="Error name"
                      value={draft.errorName}
                      onInput={(e) =>
                        setDraft({ ...draft, errorName: (e.target as HTMLInputElement).value })
                      }
                    />
                  </label>
                </>
              ) : null}
              <button type="submit" class="btn btn-plain">
                Search
              </button>
              {filtering ? (
                <button type="button" class="btn btn-plain" onClick={() => apply(NO_FILTER)}>
                  Clear
                </button>
              ) : null}
              <span class="toolbar-gap" />
              <span class="refresh-slot">
                {stale && !follow ? (
                  <button type="button" class="btn btn-plain" onClick={reload}>
                    Changed · Reload
                  </button>
                ) : loading ? (
                  <span class="muted small">Reading…</span>
                ) : null}
              </span>
            </form>
          </search>
          <fieldset class="bulkbar">
            <legend class="sr-only">Actions on selected jobs</legend>
            <span class="muted small bulk-count">
              {selected.size === 0 ? "None selected" : `${selected.size} selected`}
            </span>
            {bulk.map((b) => (
              <ActionButton
                key={`sel-${b.verb}`}
                why={selectedWhy(can, b.feature, selected.size)}
                showWhy={false}
                kind={b.verb === "retry" ? "primary" : "plain"}
                onClick={() => runSelected(b.verb)}
              >
                {b.label} selected
              </ActionButton>
            ))}
            <span class="toolbar-gap" />
            {bulk.map((b) => (
              <ActionButton
                key={`all-${b.verb}`}
                why={can(b.feature) ?? noneLeft}
                showWhy={false}
                kind={b.verb === "retry" || b.verb === "promote" ? "plain" : "danger"}
                onClick={() => runAll(b.verb, b.label)}
              >
                {b.label} all {props.state}
                {serverFiltered ? " matching" : ""}…
              </ActionButton>
            ))}
          </fieldset>
          {canPriority || canMove ? (
            <fieldset class="bulkbar bulkbar-more">
              <legend class="sr-only">Priority and lane of jobs</legend>
              {canPriority ? (
                <span class="cell-row">
                  <label class="small">
                    Priority{" "}
                    <input
                      type="number"
                      class="input-number"
                      min={-1000}
                      max={1000}
                      step={1}
                      value={priority}
                      disabled={can("priority") !== null}
                      onInput={(e) => setPriority((e.target as HTMLInputElement).value)}
                    />
                  </label>
                  <ActionButton
                    why={selectedWhy(can, "priority", selected.size)}
                    showWhy={false}
                    onClick={() => runSelected("priority")}
                  >
                    Set for selected
                  </ActionButton>
                  <ActionButton
                    why={can("priority") ?? noneLeft}
                    showWhy={false}
                    onClick={() => runAll("priority", "Re-prioritise")}
                  >
                    Set for all{serverFiltered ? " matching" : ""}…
                  </ActionButton>
                </span>
              ) : null}
              {canMove ? (
                <span class="cell-row">
                  <label class="small">
                    Move to{" "}
                    <select
                      value={toLane}
                      disabled={can("move") !== null}
                      onChange={(e) => setToLane((e.target as HTMLSelectElement).value)}
                    >
                      {otherLanes.map((l) => (
                        <option key={l} value={l}>
                          {l}
                        </option>
                      ))}
                    </select>
                  </label>
                  <ActionButton
                    why={selectedWhy(can, "move", selected.size)}
                    showWhy={false}
                    onClick={() => runSelected("move")}
                  >
                    Move selected
                  </ActionButton>
                  <ActionButton
                    why={can("move") ?? noneLeft}
                    showWhy={false}
                    kind="danger"
                    onClick={() => runAll("move", "Move")}
                  >
                    Move all{serverFiltered ? " matching" : ""}…
                  </ActionButton>
                </span>
              ) : null}
            </fieldset>
          ) : null}
          <p class="progress-line muted small" aria-live="polite">
            {progress ?? ""}
          </p>
          {reasons.length > 0 ? <Notice>{[...new Set(reasons)].join(" ")}</Notice> : null}
          <ErrorNotice error={error} what="Listing failed" />
          <div class="table-wrap">
            <table
              class="table jobs-table"
              aria-label={`${props.state} jobs in ${props.lane}`}
              aria-busy={loading}
            >
              <thead>
                <tr>
                  <th scope="col" class="check">
                    <input
                      type="checkbox"
                      aria-label="Select every job on this page"
                      checked={allSelected}
                      disabled={jobs.length === 0}
                      onChange={() =>
                        setSelected(allSelected ? new Set() : new Set(jobs.map((j) => j.id)))
                      }
                    />
                  </th>
                  <th scope="col">Job</th>
                  <th scope="col">Task</th>
                  {showTags ? <th scope="col">Tags</th> : null}
                  <th scope="col" class="n">
                    Attempt
                  </th>
                  <th scope="col" class="n">
                    Priority
                  </th>
                  <th scope="col">{TIME_HEADER[props.state]}</th>
                  {props.state === "failed" ? <th scope="col">Error</th> : null}
                  {props.state === "failed" ? (
                    <th scope="col">
                      <span class="sr-only">Actions</span>
                    </th>
                  ) : null}
                </tr>
              </thead>
              <tbody>
                {jobs.map((job) => (
                  <tr key={job.id} class={selected.has(job.id) ? "selected" : undefined}>
                    <td class="check">
                      <input
                        type="checkbox"
                        aria-label={`Select job ${job.id}`}
                        checked={selected.has(job.id)}
                        onChange={() => {
                          const s = new Set(selected);
                          if (!s.delete(job.id)) s.add(job.id);
                          setSelected(s);
                        }}
                      />
                    </td>
                    <td class="mono">
                      <a
                        href={href({ view: "job", lane: props.lane, id: job.id })}
                        title={job.id}
                        aria-label={`Job ${job.id}`}
                      >
                        {shortId(job.id)}
                      </a>
                    </td>
                    <td>{job.task}</td>
                    {showTags ? (
                      <td>
                        <TagList
                          tags={job.tags ?? []}
                          href={
                            search ? (tag) => jobsHref(props.lane, props.state, { tag }) : undefined
                          }
                        />
                      </td>
                    ) : null}
                    <td class="n">{job.attempt}</td>
                    <td class="n">{job.priority}</td>
                    <td title={fmtTime(timeOf(job, props.state))}>
                      {fmtAgo(timeOf(job, props.state), now)}
                    </td>
                    {props.state === "failed" ? (
                      <td
                        class="error-cell"
                        title={job.error ? `${job.error.name}: ${job.error.message}` : undefined}
                      >
                        {job.error ? `${job.error.name}: ${job.error.message}` : ""}
                      </td>
                    ) : null}
                    {props.state === "failed" ? (
                      <td class="row-actions">
                        <span class="cell-row">
                          <ActionButton
                            why={can("retry")}
                            showWhy={false}
                            label={`Retry job ${job.id}`}
                            onClick={() => retryOne(job)}
                          >
                            Retry
                          </ActionButton>
                        </span>
                      </td>
                    ) : null}
                  </tr>
                ))}
              </tbody>
            </table>
            {page !== null && jobs.length === 0 ? (
              <p class="empty">
                {matchesHere(filter, search)
                  ? `No ${props.state} job matches in the ${fmtInt(page.scanned)} read.`
                  : filtering
                    ? `No ${props.state} job matches ${describe(filter, search)}${positions.length > 1 ? " further on" : ""}.`
                    : positions.length > 1
                      ? `No more ${props.state} jobs.`
                      : `No ${props.state} jobs.`}
              </p>
            ) : null}
          </div>
          <div class="pager">
            <button
              type="button"
              class="btn btn-plain"
              disabled={positions.length === 1}
              onClick={() => setPositions(positions.slice(0, -1))}
            >
              ‹ Previous
            </button>
            <span class="muted small">
              {page === null
                ? ""
                : `${jobs.length === 0 ? "" : `Page ${positions.length}`}${search && serverFiltered ? ` · filtered by the ${info.adapter.name} adapter` : ""}${matchesHere(filter, search) ? ` · read ${fmtInt(page.scanned)} jobs for this page${page.capped ? " (the most one page reads; more may match further on)" : ""}` : ""}`}
            </span>
            <button
              type="button"
              class="btn btn-plain"
              disabled={page?.next === null || page === null}
              onClick={() => {
                const next = page?.next;
                if (next) setPositions([...positions, next]);
              }}
            >
              Next ›
            </button>
          </div>
        </>
      )}
    </>
  );
}

/** The server's filters in words: "task send-email, tag vip". */
function describe(filter: JobsFilter, search: boolean): string {
  const parts = Object.entries(serverFilter(filter, search)).map(
    ([key, value]) => `${key === "errorName" ? "error" : key} ${value}`,
  );
  return parts.join(", ");
}
