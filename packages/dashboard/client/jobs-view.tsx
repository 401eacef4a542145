import { useEffect, useRef, useState } from "preact/hooks";
import type { Api, ApiError } from "./api.ts";
import { useApp, useLive, useTick } from "./app-context.ts";
import type { Feature } from "./capabilities.ts";
import { fmtAgo, fmtInt, fmtTime, shortId } from "./format.ts";
import { Count } from "./lanes-view.tsx";
import { href, jobsHref, navigate } from "./router.ts";
import { type BulkResult, JOB_STATES, type Job, type JobState } from "./types.ts";
import { ActionButton, ErrorNotice, Notice } from "./ui.tsx";

/** Jobs on a page. */
const PAGE_SIZE = 25;
/** Most jobs one page read scans for matches of a search (the API filters by state only). */
const SCAN_LIMIT = 5_000;

interface Filter {
  q: string;
  task: string;
}

export interface JobsPage {
  jobs: Job[];
  offset: number;
  /** Where the next page starts, or null at the end. */
  next: number | null;
  /** Jobs read to fill this page. */
  scanned: number;
  /** The scan stopped at SCAN_LIMIT before the page was full. */
  capped: boolean;
}

export function matches(job: Job, filter: Filter): boolean {
  if (filter.task !== "" && job.task !== filter.task) return false;
  if (filter.q === "") return true;
  const q = filter.q.toLowerCase();
  if (job.id.toLowerCase().includes(q) || job.task.toLowerCase().includes(q)) return true;
  if (
    job.error !== undefined &&
    `${job.error.name}: ${job.error.message}`.toLowerCase().includes(q)
  )
    return true;
  const payload = job.payloadText ?? JSON.stringify(job.payload) ?? "";
  return payload.toLowerCase().includes(q);
}

/**
 * One page of a state's jobs, read from the NDJSON list and stopped as soon as the page is
 * full (the server then stops reading the backend). Without a search the API's limit and
 * offset do it; with one, jobs are read from `offset` and matched here, at most
 * SCAN_LIMIT per page, as the API filters by state only.
 */
export async function loadJobsPage(
  api: Api,
  lane: string,
  state: JobState,
  offset: number,
  filter: Filter,
  signal: AbortSignal,
): Promise<JobsPage> {
  const filtering = filter.q !== "" || filter.task !== "";
  const base = `lanes/${encodeURIComponent(lane)}/jobs?state=${state}&offset=${offset}`;
  const jobs: Job[] = [];
  let scanned = 0;
  let next: number | null = null;
  let capped = false;
  await api.lines<Job>(
    filtering ? base : `${base}&limit=${PAGE_SIZE + 1}`,
    (job) => {
      scanned++;
      if (matches(job, filter)) {
        if (jobs.length === PAGE_SIZE) {
          next = offset + scanned - 1;
          return false;
        }
        jobs.push(job);
      }
      if (filtering && scanned >= SCAN_LIMIT) {
        capped = true;
        next = offset + scanned;
        return false;
      }
      return true;
    },
    signal,
  );
  return { jobs, offset, next, scanned, capped };
}

/** Which bulk actions a state offers, and their API verb. */
const BULK: Record<
  JobState,
  Array<{ verb: "retry" | "cancel" | "delete" | "promote"; feature: Feature; label: string }>
> = {
  waiting: [
    { verb: "cancel", feature: "cancel", label: "Cancel" },
    { verb: "delete", feature: "delete", label: "Delete" },
  ],
  delayed: [
    { verb: "promote", feature: "promote", label: "Promote" },
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
};

const PAST: Record<string, string> = {
  retry: "retried",
  cancel: "canceled",
  delete: "deleted",
  promote: "promoted",
};

/** Cancel and delete cannot be undone: they are confirmed first, even for a few selected jobs. */
const DESTRUCTIVE = new Set(["cancel", "delete"]);

function timeOf(job: Job, state: JobState): number {
  if (state === "delayed" || state === "waiting")
    return state === "delayed" ? job.runAt : job.publishedAt;
  return job.finishedAt ?? job.runAt;
}

const TIME_HEADER: Record<JobState, string> = {
  waiting: "Published",
  delayed: "Runs",
  active: "Due",
  succeeded: "Finished",
  failed: "Failed",
  canceled: "Canceled",
};

export function JobsView(props: { lane: string; state: JobState; q: string; task: string }) {
  const { api, can, info, live: liveApi, confirm, notify } = useApp();
  const live = useLive();
  const now = useTick(5_000);
  const lane = live.lanes?.find((l) => l.name === props.lane);
  const filter: Filter = { q: props.q, task: props.task };
  const filtering = filter.q !== "" || filter.task !== "";
  const [offsets, setOffsets] = useState<number[]>([0]);
  const offset = offsets[offsets.length - 1] ?? 0;
  const [page, setPage] = useState<JobsPage | null>(null);
  const [error, setError] = useState<ApiError | null>(null);
  const [loading, setLoading] = useState(false);
  const [selected, setSelected] = useState<Set<string>>(new Set());
  const [generation, setGeneration] = useState(0);
  const [countAtLoad, setCountAtLoad] = useState<number | null>(null);
  const [progress, setProgress] = useState<string | null>(null);
  const [query, setQuery] = useState(props.q);
  const search = useRef<HTMLInputElement>(null);

  // A new lane, state or search starts at the first page with nothing selected.
  useEffect(() => {
    setOffsets([0]);
    setSelected(new Set());
    setPage(null);
    setQuery(props.q);
  }, [props.lane, props.state, props.q, props.task]);
  useEffect(() => {
    if (can("list") !== null) return;
    const controller = new AbortController();
    setLoading(true);
    setCountAtLoad(
      liveApi.get().lanes?.find((l) => l.name === props.lane)?.counts[props.state] ?? null,
    );
    loadJobsPage(api, props.lane, props.state, offset, filter, controller.signal).then(
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
  }, [props.lane, props.state, props.q, props.task, offset, generation]);

  // The first page follows the lane's count while nothing is selected; otherwise the
  // list waits for a click on Reload, so rows never move under the user's hand.
  const liveCount = lane?.counts[props.state] ?? null;
  const stale =
    page !== null && countAtLoad !== null && liveCount !== null && liveCount !== countAtLoad;
  const follow = offset === 0 && selected.size === 0 && progress === null;
  useEffect(() => {
    if (!stale || !follow || loading) return;
    const timer = setTimeout(() => setGeneration((g) => g + 1), 300);
    return () => clearTimeout(timer);
  }, [stale, follow, loading, liveCount]);

  const reload = () => setGeneration((g) => g + 1);
  const path = `lanes/${encodeURIComponent(props.lane)}/jobs`;

  const runBulk = async (verb: string, body: { ids: string[] }, what: string) => {
    if (DESTRUCTIVE.has(verb)) {
      const n = body.ids.length;
      const ok = await confirm({
        title: `${verb === "delete" ? "Delete" : "Cancel"} ${n} selected job${n === 1 ? "" : "s"}?`,
        body:
          verb === "delete"
            ? "Deleted jobs cannot be brought back."
            : "Canceled jobs do not run; a running one has its signal aborted.",
        confirm: verb === "delete" ? "Delete" : "Cancel jobs",
        danger: true,
      });
      if (!ok) return;
    }
    try {
      const r = await api.send<BulkResult>("POST", `${path}/${verb}`, body);
      notify(`${fmtInt(r.changed)} of ${fmtInt(r.matched)} ${what} ${PAST[verb]}`);
    } catch (e) {
      notify(`Could not ${verb}: ${(e as Error).message}`, "error");
    }
    setSelected(new Set());
    await liveApi.refresh();
    reload();
  };

  const runAll = async (verb: string) => {
    const total = lane?.counts[props.state] ?? 0;
    const ok = await confirm({
      title: `${verb[0]?.toUpperCase()}${verb.slice(1)} every ${props.state} job in ${props.lane}?`,
      body: `This ${verb === "retry" ? "puts" : "will"} ${verb === "retry" ? "" : `${verb} `}${lane?.countsExact === false ? "about " : ""}${fmtInt(total)} ${props.state} job${total === 1 ? "" : "s"}${verb === "retry" ? " back to waiting" : ""}: all of them, not only the ones this page shows${filtering ? " or the search matches" : ""}.${verb === "delete" ? " Deleted jobs cannot be brought back." : ""}`,
      confirm: `${verb[0]?.toUpperCase()}${verb.slice(1)} all`,
      danger: DESTRUCTIVE.has(verb),
    });
    if (!ok) return;
    let changed = 0;
    setProgress(`${verb}: 0 so far…`);
    try {
      for (;;) {
        const r = await api.send<BulkResult>("POST", `${path}/${verb}`, {
          filter: { state: props.state },
        });
        changed += r.changed;
        setProgress(`${verb}: ${fmtInt(changed)} so far…`);
        if (!r.more || r.changed === 0) break;
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

  const retryOne = async (job: Job) => {
    try {
      await api.send("POST", `${path}/${encodeURIComponent(job.id)}/retry`);
      notify(`Job ${shortId(job.id)} retried`);
    } catch (e) {
      notify(`Could not retry ${shortId(job.id)}: ${(e as Error).message}`, "error");
    }
    await liveApi.refresh();
    reload();
  };

  const setFilter = (next: Partial<Filter>) =>
    navigate(jobsHref(props.lane, props.state, next.q ?? props.q, next.task ?? props.task), true);

  const listWhy = can("list");
  const tasks = info.tasks;
  const jobs = page?.jobs ?? [];
  const allSelected = jobs.length > 0 && jobs.every((j) => selected.has(j.id));
  const bulk = BULK[props.state];

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
        {JOB_STATES.map((s) => (
          <a
            key={s}
            href={jobsHref(props.lane, s, props.q, props.task)}
            class={`tab${s === props.state ? " tab-current" : ""}`}
            aria-current={s === props.state ? "page" : undefined}
          >
            {s}
            <span class="tab-count">
              {lane ? <Count value={lane.counts[s]} exact={lane.countsExact} /> : "…"}
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
                setFilter({ q: query.trim() });
              }}
            >
              <label class="field">
                <span class="sr-only">Search this state's jobs</span>
                <input
                  ref={search}
                  type="search"
                  placeholder="Search id, task, payload, error"
                  value={query}
                  onInput={(e) => setQuery((e.target as HTMLInputElement).value)}
                />
              </label>
              <label class="field">
                <span class="sr-only">Task</span>
                <select
                  value={props.task}
                  onChange={(e) => setFilter({ task: (e.target as HTMLSelectElement).value })}
                >
                  <option value="">All tasks</option>
                  {tasks.map((t) => (
                    <option key={t} value={t}>
                      {t}
                    </option>
                  ))}
                </select>
              </label>
              <button type="submit" class="btn btn-plain">
                Search
              </button>
              {filtering ? (
                <button
                  type="button"
                  class="btn btn-plain"
                  onClick={() => setFilter({ q: "", task: "" })}
                >
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
            <legend class="sr-only">Bulk actions</legend>
            <span class="muted small bulk-count">
              {selected.size === 0 ? "None selected" : `${selected.size} selected`}
            </span>
            {bulk.map((b) => (
              <ActionButton
                key={`sel-${b.verb}`}
                why={can(b.feature) ?? (selected.size === 0 ? "Select jobs first." : null)}
                showWhy={false}
                kind={b.verb === "retry" ? "primary" : "plain"}
                onClick={() => runBulk(b.verb, { ids: [...selected] }, "selected jobs")}
              >
                {b.label} selected
              </ActionButton>
            ))}
            <span class="toolbar-gap" />
            {bulk.map((b) => (
              <ActionButton
                key={`all-${b.verb}`}
                why={
                  can(b.feature) ??
                  ((lane?.counts[props.state] ?? 0) === 0 ? `No ${props.state} jobs.` : null)
                }
                showWhy={false}
                kind={b.verb === "retry" ? "plain" : "danger"}
                onClick={() => runAll(b.verb)}
              >
                {b.label} all {props.state}…
              </ActionButton>
            ))}
          </fieldset>
          <p class="progress-line muted small" aria-live="polite">
            {progress ?? ""}
          </p>
          {bulk.some((b) => can(b.feature) !== null) ? (
            <Notice>
              {[...new Set(bulk.map((b) => can(b.feature)).filter((w) => w !== null))].join(" ")}
            </Notice>
          ) : null}
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
                {filtering
                  ? `No ${props.state} job matches in the ${fmtInt(page.scanned)} read.`
                  : `No ${props.state} jobs.`}
              </p>
            ) : null}
          </div>
          <div class="pager">
            <button
              type="button"
              class="btn btn-plain"
              disabled={offsets.length === 1}
              onClick={() => setOffsets(offsets.slice(0, -1))}
            >
              ‹ Previous
            </button>
            <span class="muted small">
              {page === null
                ? ""
                : `${jobs.length === 0 ? "" : `Page ${offsets.length}`}${filtering ? ` · read ${fmtInt(page.scanned)} jobs from #${fmtInt(page.offset + 1)}${page.capped ? ` (the most one page reads; more may match further on)` : ""}` : ""}`}
            </span>
            <button
              type="button"
              class="btn btn-plain"
              disabled={page?.next === null || page === null}
              onClick={() =>
                page?.next !== null && page !== null && setOffsets([...offsets, page.next])
              }
            >
              Next ›
            </button>
          </div>
        </>
      )}
    </>
  );
}
