/**
 * `tasklane status`: per lane, the counts by state, the throughput and the wait and run
 * percentiles.
 *
 * Rates come from the lane's daily stats (`stats(day)`), which count every job started
 * (a wait sample at reserve), every attempt finished (a run sample at ack or nack), every
 * failed attempt retried and every job dead-lettered. By default a rate is today's count
 * over the part of today (UTC) that has passed: a day's average, exact but slow to move.
 * `--interval 10s` reads the stats twice, that long apart, and divides the difference by
 * the time between the reads: the rate now. Counts of waiting jobs are not used for
 * rates: they move both ways and say nothing of throughput.
 */
import { setTimeout as sleep } from "node:timers/promises";
import { type DayStats, type LaneCounts, percentile, type Summary } from "@tasklane/core";
import type { CommandContext } from "../context.ts";
import { formatDuration, formatRate, renderTable } from "../output.ts";

export interface StatusOptions {
  lane?: string[];
  /** Measure rates over this long instead of today's average, ms. */
  interval?: number;
  /** Show this UTC day's stats ("YYYY-MM-DD") instead of today's. */
  day?: string;
}

/** What a lane's stats count, cumulated over one UTC day. */
interface Tally {
  /** Jobs handed to a worker (wait samples). */
  started: number;
  /** Attempts that ended, succeeded or failed (run samples). */
  finished: number;
  /** Attempts that failed: retried, or dead-lettered. */
  failed: number;
  /** Jobs that went to the dead letter set. */
  dead: number;
}

function tallyOf(stats: DayStats | undefined): Tally {
  if (stats === undefined) return { started: 0, finished: 0, failed: 0, dead: 0 };
  return {
    started: stats.wait.count,
    finished: stats.run.count,
    failed: stats.retries + stats.failures,
    dead: stats.failures,
  };
}

export interface Rates {
  /** "today": today's average; "day": a past day's average; "interval": measured now. */
  window: "today" | "day" | "interval";
  /** The time the rates are over, s. */
  seconds: number;
  startedPerSec: number;
  finishedPerSec: number;
  failedPerSec: number;
  deadPerSec: number;
}

function ratesOf(tally: Tally, window: Rates["window"], seconds: number): Rates {
  const per = (n: number) => (seconds > 0 ? n / seconds : 0);
  return {
    window,
    seconds,
    startedPerSec: per(tally.started),
    finishedPerSec: per(tally.finished),
    failedPerSec: per(tally.failed),
    deadPerSec: per(tally.dead),
  };
}

function difference(after: Tally, before: Tally): Tally {
  return {
    started: after.started - before.started,
    finished: after.finished - before.finished,
    failed: after.failed - before.failed,
    dead: after.dead - before.dead,
  };
}

function sum(a: Tally, b: Tally): Tally {
  return {
    started: a.started + b.started,
    finished: a.finished + b.finished,
    failed: a.failed + b.failed,
    dead: a.dead + b.dead,
  };
}

const DAY_MS = 86_400_000;
const dayOf = (atMs: number) => new Date(atMs).toISOString().slice(0, 10);

interface DurationSummary {
  count: number;
  meanMs: number | null;
  p50Ms: number | null;
  p99Ms: number | null;
}

function summarize(summary: Summary): DurationSummary {
  const finite = (n: number) => (Number.isFinite(n) ? n : null);
  return {
    count: summary.count,
    meanMs: summary.count > 0 ? summary.mean : null,
    p50Ms: finite(percentile(summary, 0.5)),
    p99Ms: finite(percentile(summary, 0.99)),
  };
}

/** One lane's line of `status --json`. */
export interface LaneStatus {
  lane: string;
  /** Undefined where the adapter cannot pause (it then has no paused state). */
  paused: boolean | null;
  counts: LaneCounts;
  /** The adapter's counts are approximate (SQS). */
  approximate: boolean;
  /** The UTC day of the stats. */
  day: string;
  /** Null where the adapter keeps no stats. */
  rates: Rates | null;
  wait: DurationSummary | null;
  run: DurationSummary | null;
}

export async function status(ctx: CommandContext, options: StatusOptions): Promise<void> {
  const session = await ctx.connect();
  const handles = session.lanes(options.lane);
  const caps = session.tl.adapter.capabilities;
  const readStats = (day: string) =>
    Promise.all(handles.map((h) => (caps.stats ? h.stats(day) : Promise.resolve(undefined))));

  const startedAt = Date.now();
  let day = options.day ?? dayOf(startedAt);
  let stats: Array<DayStats | undefined>;
  let rates: Array<Rates | null>;
  if (!caps.stats) {
    stats = handles.map(() => undefined);
    rates = handles.map(() => null);
  } else if (options.interval !== undefined) {
    const before = await readStats(day);
    ctx.note(`measuring rates over ${formatDuration(options.interval)}…`);
    // Ctrl-C ends the wait early: the rates are then over the time that did pass.
    await sleep(options.interval, undefined, { signal: ctx.signal }).catch(() => {});
    const endedAt = Date.now();
    const after = await readStats(day);
    // Across midnight UTC the first day counted on until it ended; the new day adds to it.
    const newDay = dayOf(endedAt) !== day ? await readStats(dayOf(endedAt)) : undefined;
    rates = handles.map((_, i) => {
      let delta = difference(tallyOf(after[i]), tallyOf(before[i]));
      if (newDay !== undefined) delta = sum(delta, tallyOf(newDay[i]));
      return ratesOf(delta, "interval", (endedAt - startedAt) / 1_000);
    });
    stats = newDay ?? after;
    if (newDay !== undefined) day = dayOf(endedAt);
  } else {
    stats = await readStats(day);
    const now = Date.now();
    const dayStart = Date.parse(`${day}T00:00:00Z`);
    const window = day === dayOf(now) ? "today" : "day";
    const seconds = Math.max(0, Math.min(now, dayStart + DAY_MS) - dayStart) / 1_000;
    rates = handles.map((_, i) => ratesOf(tallyOf(stats[i]), window, seconds));
  }
  // Counts are read last, so after an interval they are as of its end.
  const [counts, paused] = await Promise.all([
    Promise.all(handles.map((h) => h.counts())),
    Promise.all(handles.map((h) => (caps.pause ? h.isPaused() : Promise.resolve(null)))),
  ]);

  const lanes: LaneStatus[] = handles.map((h, i) => {
    const s = stats[i];
    return {
      lane: h.name,
      paused: paused[i] ?? null,
      counts: counts[i] as LaneCounts,
      approximate: !caps.exactCounts,
      day,
      rates: rates[i] ?? null,
      wait: caps.stats ? summarize(s?.wait ?? emptySummary()) : null,
      run: caps.stats ? summarize(s?.run ?? emptySummary()) : null,
    };
  });

  if (ctx.json) {
    for (const lane of lanes) await ctx.out.json(lane);
    return;
  }
  await ctx.out.line(statusTable(lanes, caps.expiry === true, caps.flows === true));
  await ctx.out.line("");
  for (const line of statusNotes(lanes, session.tl.adapter.name, caps.stats)) {
    await ctx.out.line(line);
  }
}

function emptySummary(): Summary {
  return { count: 0, mean: 0, m2: 0, histogram: {} };
}

const dash = (n: number | null | undefined) => (n == null ? "-" : formatDuration(n));

/**
 * The table; an `expired` column where the adapter has expiry (elsewhere nothing
 * expires), a `blocked` one where it has flows (elsewhere nothing waits for a job).
 */
function statusTable(lanes: readonly LaneStatus[], expiry: boolean, flows: boolean): string {
  const approx = (n: number, lane: LaneStatus) => (lane.approximate ? `~${n}` : String(n));
  return renderTable(
    [
      "lane",
      "waiting",
      "delayed",
      ...(flows ? ["blocked"] : []),
      "active",
      "failed",
      "succeeded",
      "canceled",
      ...(expiry ? ["expired"] : []),
      "finished/s",
      "failed/s",
      "wait p50",
      "wait p99",
      "run p50",
      "run p99",
    ],
    lanes.map((lane) => [
      lane.paused ? `${lane.lane} (paused)` : lane.lane,
      approx(lane.counts.waiting, lane),
      approx(lane.counts.delayed, lane),
      ...(flows ? [approx(lane.counts.blocked ?? 0, lane)] : []),
      approx(lane.counts.active, lane),
      approx(lane.counts.failed, lane),
      lane.approximate && lane.counts.succeeded === 0 ? "-" : String(lane.counts.succeeded),
      lane.approximate && lane.counts.canceled === 0 ? "-" : String(lane.counts.canceled),
      ...(expiry ? [approx(lane.counts.expired ?? 0, lane)] : []),
      formatRate(lane.rates?.finishedPerSec),
      formatRate(lane.rates?.failedPerSec),
      dash(lane.wait?.p50Ms),
      dash(lane.wait?.p99Ms),
      dash(lane.run?.p50Ms),
      dash(lane.run?.p99Ms),
    ]),
    ["left", ...Array<"right">(12 + (expiry ? 1 : 0) + (flows ? 1 : 0)).fill("right")],
  );
}

function statusNotes(lanes: readonly LaneStatus[], adapter: string, hasStats: boolean): string[] {
  const notes: string[] = [];
  const first = lanes[0];
  if (first === undefined) return notes;
  if (first.approximate) {
    notes.push(
      `counts: approximate (${adapter}); ${adapter} keeps no succeeded or canceled jobs ("-")`,
    );
  }
  if (!hasStats) {
    notes.push(`rates and percentiles: the ${adapter} adapter keeps no stats`);
    return notes;
  }
  const rates = first.rates;
  if (rates?.window === "interval") {
    notes.push(`rates: measured over the last ${formatDuration(rates.seconds * 1_000)}`);
  } else if (rates?.window === "today") {
    notes.push(
      `rates: today's average (${first.day} UTC, over the ${formatDuration(rates.seconds * 1_000)} since midnight); --interval 10s measures them now`,
    );
  } else notes.push(`rates: ${first.day}'s average (UTC)`);
  notes.push(`percentiles: ${first.day} (UTC); wait is due → started, run is started → finished`);
  return notes;
}
