import { useState } from "preact/hooks";
import { useApp, useAsync, useLive } from "./app-context.ts";
import { shownStates } from "./capabilities.ts";
import { Histogram } from "./chart.tsx";
import { fmtInt, fmtMs, fmtNum, todayUtc } from "./format.ts";
import { CountLink, PauseButton } from "./lanes-view.tsx";
import { href } from "./router.ts";
import type { Lane, Stats, Summary } from "./types.ts";
import { ErrorNotice, Notice } from "./ui.tsx";

function shiftDay(day: string, days: number): string {
  const d = new Date(`${day}T00:00:00Z`);
  d.setUTCDate(d.getUTCDate() + days);
  return d.toISOString().slice(0, 10);
}

/** A lane's fair groups, as the config line says them ("" without groups). */
function groupsText(groups: Lane["config"]["groups"]): string {
  if (groups === undefined) return "";
  const limits: string[] = [];
  if (groups.concurrency !== undefined) limits.push(`at most ${groups.concurrency} at once`);
  if (groups.rateLimit !== undefined) {
    const { max, durationMs } = groups.rateLimit;
    limits.push(`at most ${max} started per ${fmtMs(durationMs)}`);
  }
  return limits.length === 0 ? " · fair groups" : ` · fair groups, ${limits.join(", ")} each`;
}

function SummaryCard(props: { title: string; what: string; summary: Summary; color?: "ok" }) {
  const s = props.summary;
  return (
    <section class="card" aria-label={props.title}>
      <div class="card-head">
        <h3>{props.title}</h3>
        <span class="muted small">{props.what}</span>
      </div>
      <dl class="facts facts-row">
        <div>
          <dt>p50</dt>
          <dd class="num">{fmtMs(s.p50Ms)}</dd>
        </div>
        <div>
          <dt>p90</dt>
          <dd class="num">{fmtMs(s.p90Ms)}</dd>
        </div>
        <div>
          <dt>p99</dt>
          <dd class="num">{fmtMs(s.p99Ms)}</dd>
        </div>
        <div>
          <dt>mean</dt>
          <dd class="num">{s.count === 0 ? "–" : fmtMs(s.meanMs)}</dd>
        </div>
        <div>
          <dt>samples</dt>
          <dd class="num">{fmtInt(s.count)}</dd>
        </div>
      </dl>
      <Histogram
        buckets={s.histogram}
        title={`${props.title} histogram`}
        {...(props.color ? { color: props.color } : {})}
      />
    </section>
  );
}

function StatsSection(props: { lane: string }) {
  const { api, can } = useApp();
  const live = useLive();
  const today = todayUtc();
  const [day, setDay] = useState(today);
  const laneNow = live.lanes?.find((l) => l.name === props.lane);
  // Today's stats come with every lanes read (live); another day is read once.
  const other = useAsync<Stats | null>(
    (signal) =>
      day === today
        ? Promise.resolve(null)
        : api.get<Stats>(`lanes/${encodeURIComponent(props.lane)}/stats?day=${day}`, signal),
    [props.lane, day],
  );
  const why = can("stats");
  if (why !== null) return <Notice>{why} Wait and run times are not available.</Notice>;
  const stats = day === today ? laneNow?.stats : other.data;
  return (
    <section aria-labelledby="stats-title">
      <div class="card-head">
        <h2 id="stats-title">Wait and run times</h2>
        <div class="day-picker">
          <button
            type="button"
            class="btn btn-plain"
            onClick={() => setDay(shiftDay(day, -1))}
            aria-label="Previous day"
          >
            ‹
          </button>
          <label>
            <span class="sr-only">UTC day</span>
            <input
              type="date"
              value={day}
              max={today}
              onChange={(e) => {
                const v = (e.target as HTMLInputElement).value;
                if (/^\d{4}-\d{2}-\d{2}$/.test(v)) setDay(v);
              }}
            />
          </label>
          <button
            type="button"
            class="btn btn-plain"
            disabled={day >= today}
            onClick={() => setDay(shiftDay(day, 1))}
            aria-label="Next day"
          >
            ›
          </button>
          <span class="muted small">UTC{day === today ? ", live" : ""}</span>
        </div>
      </div>
      <ErrorNotice
        error={day === today ? undefined : other.error}
        what="Reading the stats failed"
      />
      {stats === undefined || stats === null ? (
        <div class="placeholder" style={{ height: "300px" }} />
      ) : (
        <>
          <dl class="facts facts-row">
            <div>
              <dt>finished</dt>
              <dd class="num">{fmtInt(stats.throughput.finished)}</dd>
            </div>
            <div>
              <dt>per minute</dt>
              <dd class="num">{fmtNum(stats.throughput.perMinute)}</dd>
            </div>
            <div>
              <dt>retries</dt>
              <dd class="num">{fmtInt(stats.retries)}</dd>
            </div>
            <div>
              <dt>to dead letters</dt>
              <dd class="num">{fmtInt(stats.failures)}</dd>
            </div>
          </dl>
          <div class="grid-2">
            <SummaryCard title="Wait" what="due → reserved by a worker" summary={stats.wait} />
            <SummaryCard title="Run" what="reserved → finished" summary={stats.run} color="ok" />
          </div>
        </>
      )}
    </section>
  );
}

export function LaneView(props: { lane: string }) {
  const { can, info } = useApp();
  const live = useLive();
  const lane = live.lanes?.find((l) => l.name === props.lane);
  if (!info.lanes.includes(props.lane)) {
    return <Notice kind="error">There is no lane “{props.lane}”.</Notice>;
  }
  return (
    <>
      <nav class="crumbs" aria-label="Breadcrumb">
        <a href={href({ view: "lanes" })}>Lanes</a> / <span aria-current="page">{props.lane}</span>
      </nav>
      <div class="page-head">
        <h1>
          {props.lane}
          {lane?.paused ? <span class="badge badge-paused">paused</span> : null}
        </h1>
        {lane ? <PauseButton lane={lane} /> : null}
      </div>
      <ErrorNotice error={live.error} what="Reading the lane failed" />
      {lane === undefined ? (
        <div class="placeholder" style={{ height: "120px" }} />
      ) : (
        <>
          <p class="muted small config-line">
            {lane.config.priority} tickets · batches of {lane.config.batchSize} · lease{" "}
            {fmtMs(lane.config.leaseMs)} · long poll {fmtMs(lane.config.longPollMs)} ·{" "}
            {lane.config.numIterations} reserves a turn
            {lane.config.maxConcurrency === undefined
              ? ""
              : ` · at most ${lane.config.maxConcurrency} at once`}
            {lane.config.rateLimit === undefined
              ? ""
              : ` · at most ${lane.config.rateLimit.max} started per ${fmtMs(lane.config.rateLimit.durationMs)}`}
            {groupsText(lane.config.groups)}
          </p>
          <section class="tiles" aria-label={`Jobs in ${lane.name}`}>
            {shownStates(can).map((s) => (
              <div class={`tile tile-${s}`} key={s}>
                <span class="tile-label cap">{s}</span>
                <span class="tile-value">
                  <CountLink lane={lane} state={s} canList={can("list") === null} />
                </span>
              </div>
            ))}
          </section>
        </>
      )}
      <StatsSection lane={props.lane} />
    </>
  );
}
