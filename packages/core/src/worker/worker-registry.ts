/**
 * A worker's entry in the backend's worker registry (capability `workers`), so that
 * `tl.workers()` in any process lists who runs, where, on which lanes, holding what. The
 * worker registers at start and again on every heartbeat tick (the timer it already has:
 * one call per tick, none per job), and deregisters at stop. An entry not renewed for
 * `ttlMs` (three heartbeat periods) lapses: a crashed worker drops out by itself.
 */
import { randomUUID } from "node:crypto";
import { hostname } from "node:os";
import type { Adapter, JobRef, WorkerRegistration } from "../adapter.ts";
import type { TasklaneEventBus } from "../events.ts";
import { VERSION } from "../version.ts";
import type { HeldJobs } from "./held-jobs.ts";

/** Jobs named in one registry entry at most (the entry's `held` counts them all). */
const MAX_LISTED_JOBS = 100;

export interface WorkerRegistryDeps {
  adapter: Adapter;
  events: TasklaneEventBus;
  held: HeldJobs;
  /** The served lanes' full names. */
  lanes: string[];
  concurrency: number;
  startedAt: number;
  ttlMs: number;
  /** Jobs whose handler runs now. */
  running(): number;
}

export interface WorkerRegistry {
  /** Register or renew; an error is reported as an `error` event, never thrown. */
  register(): Promise<void>;
  deregister(): Promise<void>;
}

/** A fresh worker id: the host, the pid and a random part, readable in a listing. */
export function createWorkerId(): string {
  return `${hostname()}:${process.pid}:${randomUUID().slice(0, 8)}`;
}

/** The registry entry of one worker; undefined when the adapter has no registry. */
export function createWorkerRegistry(
  id: string,
  deps: WorkerRegistryDeps,
): WorkerRegistry | undefined {
  const { adapter, events, held } = deps;
  const register = adapter.registerWorker?.bind(adapter);
  const deregister = adapter.deregisterWorker?.bind(adapter);
  if (!adapter.capabilities.workers || register === undefined || deregister === undefined) {
    return undefined;
  }
  const host = hostname();

  const describe = (): WorkerRegistration => {
    const jobs: JobRef[] = [];
    for (const h of held) {
      if (jobs.length >= MAX_LISTED_JOBS) break;
      jobs.push({ lane: h.lane.store.name, jobId: h.job.id });
    }
    return {
      id,
      host,
      pid: process.pid,
      lanes: deps.lanes,
      concurrency: deps.concurrency,
      held: held.size,
      running: deps.running(),
      jobs,
      startedAt: deps.startedAt,
      version: VERSION,
    };
  };

  return {
    async register() {
      try {
        await register(describe(), deps.ttlMs);
      } catch (error) {
        events.emit("error", { error, during: "register" });
      }
    },
    async deregister() {
      try {
        await deregister(id);
      } catch (error) {
        events.emit("error", { error, during: "deregister" });
      }
    },
  };
}
