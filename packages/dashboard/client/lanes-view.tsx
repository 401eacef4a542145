import { useEffect, useState } from "preact/hooks";
import { useApp, useLive, useTick } from "./app-context.ts";
import { shownStates } from "./capabilities.ts";
import { RateChart } from "./chart.tsx";
import { fmtAgo, fmtInt, fmtMs, fmtNum } from "./format.ts";
import { RATE_TYPES } from "./live.ts";
import { href, jobsHref } from "./router.ts";
import type { JobState, Lane } from "./types.ts";
import { ActionButton, ErrorNotice, Notice } from "./ui.tsx";

/** A count that flashes (without moving anything) when it changes. */
export function Count(props: { value: number; exact: boolean }) {
  return (
    <span key={props.value} class="num flash">
      {props.exact ? "" : "~"}
      {fmtInt(props.value)}
    </span>
  );
}

/** A count, linked to its job list where the adapter can list. */
export function CountLink(props: { lane: Lane; state: JobState; canList: boolean }) {
  const { lane, state } = props;
  const value = lane.counts[state] ?? 0;
  const count = <Count value={value} exact={lane.countsExact} />;
  if (!props.canList) return count;
  return (
    <a
      href={jobsHref(lane.name, state)}
      class="count-link"
      aria-label={`${lane.countsExact ? "" : "about "}${value} ${state} in ${lane.name}`}
    >
      {count}
    </a>
  );
}

export function PauseButton(props: { lane: Lane }) {
  const { api, can, live, notify } = useApp();
  const { lane } = props;
  if (lane.paused === null) return <span class="muted">–</span>;
  const verb = lane.paused ? "resume" : "pause";
  return (
    <ActionButton
      why={can("pause")}
      showWhy={false}
      label={`${lane.paused ? "Resume" : "Pause"} ${lane.name}`}
      onClick={async () => {
        try {
          await api.send("POST", `lanes/${encodeURIComponent(lane.name)}/${verb}`);
          notify(`${lane.name} ${lane.paused ? "resumed" : "paused"}`);
        } catch (error) {
          notify(`Could not ${verb} ${lane.name}: ${(error as Error).message}`, "error");
        }
        await live.refresh();
      }}
    >
      {lane.paused ? "Resume" : "Pause"}
    </ActionButton>
  );
}

function Totals(props: { lanes: Lane[] }) {
  const exact = props.lanes.every((l) => l.countsExact);
  const sum = (state: JobState) => props.lanes.reduce((n, l) => n + l.counts[state], 0);
  const perMinute = props.lanes.reduce((n, l) => n + (l.stats?.throughput.perMinute ?? 0), 0);
  const hasStats = props.lanes.some((l) => l.stats !== null);
  const tiles: Array<[string, JobState]> = [
    ["Waiting", "waiting"],
    ["Active", "active"],
    ["Delayed", "delayed"],
    ["Failed", "failed"],
    ["Succeeded", "succeeded"],
  ];
  return (
    <section class="tiles" aria-label="All lanes">
      {tiles.map(([label, state]) => (
        <div class={`tile tile-${state}`} key={state}>
          <span class="tile-label">{label}</span>
          <span class="tile-value" data-total={state}>
            <Count value={sum(state)} exact={exact} />
          </span>
        </div>
      ))}
      <div class="tile">
        <span class="tile-label">Finished today</span>
        <span class="tile-value">
          {hasStats ? (
            <>
              <span class="num">{fmtNum(perMinute)}</span>
              <span class="unit">/min</span>
            </>
          ) : (
            <span class="muted">–</span>
          )}
        </span>
      </div>
    </section>
  );
}

function LiveChart() {
  const { live, info } = useApp();
  const state = useLive();
  const [rates, setRates] = useState(() => live.rates());
  useEffect(() => {
    const timer = setInterval(() => setRates(live.rates()), 1_000);
    return () => clearInterval(timer);
  }, [live]);
  const processOnly = info.adapter.capabilities.lifecycleEvents === false;
  return (
    <section class="card" aria-labelledby="rate-title">
      <div class="card-head">
        <h2 id="rate-title">Events per second, last minute</h2>
        <span class="muted small">
          {state.connection === "unavailable"
            ? `No live events: ${state.connectionError?.message ?? "unavailable"}. Counts are re-read every 5 s.`
            : processOnly
              ? `The ${info.adapter.name} adapter has no cross-process events: this shows the server process's own jobs.`
              : "Every process's jobs, as they happen."}
        </span>
      </div>
      <RateChart seconds={rates.seconds} series={rates.series} names={RATE_TYPES} />
    </section>
  );
}

function LanesTable(props: { lanes: Lane[] }) {
  const { can } = useApp();
  const canList = can("list") === null;
  const shown: JobState[] = shownStates(can);
  return (
    <div class="table-wrap">
      <table class="table lanes-table" aria-label="Lanes">
        <thead>
          <tr>
            <th scope="col">Lane</th>
            <th scope="col" class="n">
              Tickets
            </th>
            {shown.map((s) => (
              <th scope="col" class="n" key={s}>
                {s}
              </th>
            ))}
            <th scope="col" class="n" title="Runs finished today per minute (UTC day)">
              /min
            </th>
            <th scope="col" class="n" title="Due until reserved, today: p50 / p99">
              wait p50 · p99
            </th>
            <th scope="col" class="n" title="Reserved until finished, today: p50 / p99">
              run p50 · p99
            </th>
            <th scope="col">State</th>
          </tr>
        </thead>
        <tbody>
          {props.lanes.map((lane) => (
            <tr key={lane.name}>
              <th scope="row">
                <a href={href({ view: "lane", lane: lane.name })}>{lane.name}</a>
              </th>
              <td class="n">{lane.config.priority}</td>
              {shown.map((s) => (
                <td class={`n count-${s}${(lane.counts[s] ?? 0) > 0 ? " nonzero" : ""}`} key={s}>
                  <CountLink lane={lane} state={s} canList={canList} />
                </td>
              ))}
              <td class="n">{lane.stats ? fmtNum(lane.stats.throughput.perMinute) : "–"}</td>
              <td class="n">
                {lane.stats
                  ? `${fmtMs(lane.stats.wait.p50Ms)} · ${fmtMs(lane.stats.wait.p99Ms)}`
                  : "–"}
              </td>
              <td class="n">
                {lane.stats
                  ? `${fmtMs(lane.stats.run.p50Ms)} · ${fmtMs(lane.stats.run.p99Ms)}`
                  : "–"}
              </td>
              <td class="state-cell">
                <span class="cell-row">
                  {lane.paused === true ? <span class="badge badge-paused">paused</span> : null}
                  {lane.paused === false ? <span class="badge badge-running">running</span> : null}
                  <PauseButton lane={lane} />
                </span>
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

export function LanesView() {
  const { info, can } = useApp();
  const state = useLive();
  const now = useTick(1_000);
  const lanes = state.lanes;
  const approximate = lanes?.some((l) => !l.countsExact) ?? false;
  return (
    <>
      <div class="page-head">
        <h1>Lanes</h1>
        <span class="muted small" aria-live="off">
          {state.readAt === 0 ? "Reading…" : `Counts read ${fmtAgo(state.readAt, now)}`}
        </span>
      </div>
      <ErrorNotice error={state.error} what="Reading the lanes failed" />
      {lanes === null ? (
        <div class="placeholder" style={{ height: "420px" }} />
      ) : (
        <>
          <Totals lanes={lanes} />
          <LiveChart />
          <LanesTable lanes={lanes} />
          {approximate ? (
            <Notice>
              ~ The {info.adapter.name} adapter counts approximately (SQS reports its queues'
              approximate sizes).
            </Notice>
          ) : null}
          {can("list") !== null ? (
            <Notice>{can("list")} Job lists are not available.</Notice>
          ) : null}
          {can("stats") !== null ? (
            <Notice>{can("stats")} Throughput and wait/run times are not available.</Notice>
          ) : null}
        </>
      )}
    </>
  );
}
