/**
 * Sending running jobs' reports (progress and log lines) to the backend, batched: a job
 * that reports is queued, and one timer per worker sends every queued job's report at
 * most every `periodMs`, in one `report` call per lane (and per `maxBatch` jobs). A
 * chatty handler costs one call per period, not one per `ctx.log`. What is still queued
 * when a job settles rides on its ack, nack or release instead (report-buffer.ts).
 *
 * Ordering: a report is sent before the ack of the same job whenever it was taken from
 * the buffer first, and an adapter applies one lane's calls in the order they are made,
 * so a late report never lands after the job's outcome.
 */
import type { ReportItem } from "../adapter.ts";
import type { Clock } from "../clock.ts";
import type { TasklaneEventBus } from "../events.ts";
import { inBatches } from "./batches.ts";
import type { HeldJob } from "./held-job.ts";
import type { LaneState } from "./lane-state.ts";
import { takeReport } from "./report-buffer.ts";
import type { Settler } from "./settler.ts";

export interface ReporterDeps {
  clock: Clock;
  events: TasklaneEventBus;
  lose: Settler["lose"];
  maxBatch: number;
  periodMs: number;
}

export interface Reporter {
  /** The job has something new to report: send it with the next batch. */
  queue(h: HeldJob): void;
  /** Send what is queued now; resolves when every call is answered. */
  flush(): Promise<void>;
  /** No send is scheduled after this (one in flight finishes). */
  stop(): void;
}

type Entry = { h: HeldJob; item: ReportItem };

export function createReporter(deps: ReporterDeps): Reporter {
  const { clock, events, lose, maxBatch, periodMs } = deps;
  let queued: HeldJob[] = [];
  let timer: unknown;
  let stopped = false;

  const flush = async (): Promise<void> => {
    if (timer !== undefined) clock.clearTimeout(timer as never);
    timer = undefined;
    const jobs = queued;
    queued = [];
    const byLane = new Map<LaneState, Entry[]>();
    for (const h of jobs) {
      // A settling job's report rides on its ack or nack instead.
      if (h.settled || h.finishing) continue;
      const report = takeReport(h);
      if (report === undefined) continue;
      const entry: Entry = { h, item: { lock: h.job.lock, ...report } };
      const list = byLane.get(h.lane);
      if (list) list.push(entry);
      else byLane.set(h.lane, [entry]);
    }
    await Promise.all([...byLane].map(([ls, entries]) => sendTo(ls, entries)));
  };

  const sendTo = async (ls: LaneState, entries: Entry[]): Promise<void> => {
    const report = ls.store.report?.bind(ls.store);
    if (report === undefined) return;
    for (const batch of inBatches(entries, maxBatch)) {
      try {
        const statuses = await report(batch.map((e) => e.item));
        batch.forEach((e, i) => {
          const s = statuses[i] ?? "lost";
          if (s !== "ok") lose(e.h, s);
        });
      } catch (error) {
        // The lines are gone with the call; the job goes on and reports again.
        events.emit("error", { error, during: "report", lane: ls.config.name });
      }
    }
  };

  return {
    queue(h) {
      const b = h.report;
      if (b === undefined || b.queued || stopped) return;
      b.queued = true;
      queued.push(h);
      if (timer === undefined) {
        timer = clock.setTimeout(() => {
          timer = undefined;
          void flush();
        }, periodMs);
      }
    },
    flush,
    stop() {
      stopped = true;
      if (timer !== undefined) clock.clearTimeout(timer as never);
      timer = undefined;
    },
  };
}
