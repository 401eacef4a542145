/**
 * Waiting for a job to finish, from any process: watch first, read second. The adapter's
 * `watch` resolves once a finish of the job can no longer go unreported; the read that
 * follows sees a job that finished before. Every event, and a slow poll besides (events
 * are delivered at most once: a reconnect can lose one), leads to another read, and only
 * a read decides: the job's stored state, result and error.
 */
import type { Adapter, JobInfo, LaneStore } from "../adapter.ts";
import type { Clock, TimerHandle } from "../clock.ts";
import { decodeJson } from "../codec.ts";
import { ConfigError, UnsupportedError } from "../errors.ts";
import { JobFailedError, JobNotFoundError, WaitTimeoutError } from "../job-errors.ts";
import type { WaitOptions } from "./tasklane.ts";

/** How often a waiter reads the job even without an event, ms. */
export const WAIT_POLL_MS = 5_000;

export interface WaiterDeps {
  adapter: Adapter;
  clock: Clock;
  /** Every lane of the client, in configuration order: its config name and store. */
  lanes(): Promise<Array<{ name: string; store: LaneStore }>>;
}

type Found = { lane: string; info: JobInfo } | undefined;

export function createWaitFor(deps: WaiterDeps) {
  const { adapter, clock } = deps;

  const find = async (
    lanes: Array<{ name: string; store: LaneStore }>,
    jobId: string,
  ): Promise<Found> => {
    const infos = await Promise.all(lanes.map((l) => l.store.get?.(jobId)));
    const i = infos.findIndex((info) => info !== undefined);
    return i < 0 ? undefined : { lane: lanes[i]?.name as string, info: infos[i] as JobInfo };
  };

  return async function waitFor(jobId: string, options: WaitOptions = {}): Promise<unknown> {
    const watch = adapter.watch?.bind(adapter);
    if (!adapter.capabilities.waitFor || !adapter.capabilities.get || watch === undefined) {
      throw new UnsupportedError(adapter.name, "waiting for a job (waitFor)");
    }
    if (typeof jobId !== "string" || jobId.length === 0) {
      throw new ConfigError("jobId", jobId, "must be a non-empty string");
    }
    const { timeoutMs, signal } = options ?? {};
    if (timeoutMs !== undefined && !(Number.isFinite(timeoutMs) && timeoutMs >= 0)) {
      throw new ConfigError("options.timeoutMs", timeoutMs, "must be a finite number of ms >= 0");
    }
    signal?.throwIfAborted();
    const lanes = await deps.lanes();

    return new Promise<unknown>((resolve, reject) => {
      let done = false;
      let stopWatching: (() => Promise<void>) | undefined;
      let timeout: TimerHandle | undefined;
      let poll: TimerHandle | undefined;
      let reading = false;
      let readAgain = false;

      const end = (settle: () => void) => {
        if (done) return;
        done = true;
        if (timeout !== undefined) clock.clearTimeout(timeout);
        if (poll !== undefined) clock.clearTimeout(poll);
        signal?.removeEventListener("abort", onAbort);
        stopWatching?.().catch(() => {});
        settle();
      };
      const onAbort = () => end(() => reject(signal?.reason));

      /** Settle on a finished job; a pending one keeps the waiter waiting. */
      const decide = (found: Found) => {
        if (found === undefined) return end(() => reject(new JobNotFoundError(jobId)));
        const { info, lane } = found;
        switch (info.state) {
          case "succeeded":
            return end(() => {
              try {
                resolve(info.result === undefined ? undefined : decodeJson(info.result));
              } catch (error) {
                reject(error);
              }
            });
          case "failed":
          case "canceled":
          case "expired":
            return end(() =>
              reject(new JobFailedError(jobId, lane, info.state as "failed", info.error)),
            );
          default:
            return undefined;
        }
      };

      // One read at a time; an event during a read makes one more.
      const read = async () => {
        if (done) return;
        if (reading) {
          readAgain = true;
          return;
        }
        reading = true;
        try {
          do {
            readAgain = false;
            const found = await find(lanes, jobId);
            if (done) return;
            decide(found);
          } while (readAgain && !done);
        } catch (error) {
          end(() => reject(error));
        } finally {
          reading = false;
        }
      };

      const schedulePoll = () => {
        poll = clock.setTimeout(() => {
          poll = undefined;
          if (done) return;
          void read().finally(() => {
            if (!done) schedulePoll();
          });
        }, WAIT_POLL_MS);
      };

      signal?.addEventListener("abort", onAbort, { once: true });
      // Aborted while the lanes opened: its abort event has come and gone.
      if (signal?.aborted) return onAbort();
      if (timeoutMs !== undefined) {
        timeout = clock.setTimeout(
          () => end(() => reject(new WaitTimeoutError(jobId, timeoutMs))),
          timeoutMs,
        );
      }
      watch(
        lanes.map((l) => ({ lane: l.store.name, jobId })),
        () => void read(),
      ).then(
        (stop) => {
          if (done) {
            stop().catch(() => {});
            return;
          }
          stopWatching = stop;
          void read();
          schedulePoll();
        },
        (error) => end(() => reject(error)),
      );
    });
  };
}
