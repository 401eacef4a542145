import type { Clock } from "../clock.ts";
import { byteLength, decodeOrText } from "../codec.ts";
import {
  ConfigError,
  PayloadTooLargeError,
  RetryAfterError,
  UnsupportedError,
  ValidationError,
} from "../errors.ts";
import type { TasklaneEventBus } from "../events.ts";
import type { ChildJob, JobContext } from "../task.ts";
import type { HeldJob } from "./held-job.ts";
import { bufferLog, bufferProgress, logLine, MAX_PROGRESS_BYTES } from "./report-buffer.ts";
import type { Reporter } from "./reporter.ts";
import type { Settler } from "./settler.ts";

/** What every job's context shares: one object per worker. */
export interface ContextHost {
  clock: Clock;
  events: TasklaneEventBus;
  lose: Settler["lose"];
  /** Set where the adapter stores reports (capability `reports`). */
  reporter: Reporter | undefined;
  /** The adapter's name, and its maxDelayMs where it has capability `retryAfter`. */
  adapterName: string;
  retryAfterMaxMs: number | undefined;
  /** The adapter has capability `flows` (and `get`): `ctx.children()` reads the job. */
  flows: boolean;
  /** A lane's config name from its full name. */
  configName(full: string): string;
}

/** A handler's context. A class, so a job costs one small object rather than closures. */
export class HeldJobContext implements JobContext {
  readonly #host: ContextHost;
  readonly #h: HeldJob;
  readonly appData: unknown;

  constructor(host: ContextHost, h: HeldJob, appData: unknown) {
    this.#host = host;
    this.#h = h;
    this.appData = appData;
  }
  get jobId() {
    return this.#h.job.id;
  }
  get attempt() {
    return this.#h.job.attempt;
  }
  get maxAttempts() {
    return this.#h.task?.retry.maxAttempts ?? 1;
  }
  get lane() {
    return this.#h.lane.config.name;
  }
  get task() {
    return this.#h.job.task;
  }
  // Created on first use: an AbortController per job costs more than many handlers do.
  get signal(): AbortSignal {
    const h = this.#h;
    if (!h.controller) {
      h.controller = new AbortController();
      if (h.abortReason) h.controller.abort(h.abortReason);
    }
    return h.controller.signal;
  }
  retryAfter(ms: number): Error {
    const host = this.#host;
    if (host.retryAfterMaxMs === undefined) {
      throw new UnsupportedError(host.adapterName, "ctx.retryAfter (capability retryAfter)");
    }
    if (typeof ms !== "number" || !Number.isFinite(ms) || ms < 0 || ms > host.retryAfterMaxMs) {
      throw new ConfigError("ms", ms, `must be a number of ms from 0 to ${host.retryAfterMaxMs}`);
    }
    return new RetryAfterError(host.clock.now() + ms, ms);
  }
  async children(): Promise<ChildJob[]> {
    const host = this.#host;
    const get = this.#h.lane.store.get;
    if (!host.flows || get === undefined) {
      throw new UnsupportedError(host.adapterName, "ctx.children (capability flows)");
    }
    const info = await get.call(this.#h.lane.store, this.#h.job.id);
    return (info?.dependencies ?? []).map((d) => {
      const child: ChildJob = {
        id: d.id,
        lane: host.configName(d.lane),
        onFailure: d.onFailure,
        state: d.state ?? "pending",
      };
      if (d.task !== undefined) child.task = d.task;
      if (d.result !== undefined) child.result = decodeOrText(d.result);
      return child;
    });
  }
  async heartbeat(): Promise<boolean> {
    const h = this.#h;
    if (h.settled) return false;
    const now = this.#host.clock.now();
    const [s] = await h.lane.store.extend([h.job.lock], h.lane.config.leaseMs);
    if (s === "ok") {
      h.job.lock.expiresAt = now + h.lane.config.leaseMs;
      return true;
    }
    this.#host.lose(h, s ?? "lost");
    return false;
  }
  progress(value: unknown): void {
    const h = this.#h;
    const reporter = this.#host.reporter;
    if (reporter !== undefined && !h.settled) {
      let encoded: string;
      try {
        encoded = JSON.stringify(value) ?? "null";
      } catch (error) {
        throw new ValidationError(
          h.job.task,
          [{ message: `cannot be encoded as JSON (${String(error)})`, path: [] }],
          "Progress",
        );
      }
      const size = byteLength(encoded);
      if (size > MAX_PROGRESS_BYTES) {
        throw new PayloadTooLargeError(`Progress of job ${h.job.id}`, size, MAX_PROGRESS_BYTES);
      }
      bufferProgress(h, encoded);
      reporter.queue(h);
    }
    this.#emit(value);
  }
  log(message: string): void {
    const h = this.#h;
    const reporter = this.#host.reporter;
    if (reporter !== undefined && !h.settled) {
      const at = this.#host.clock.now();
      bufferLog(h, { at, attempt: h.job.attempt, message: logLine(String(message)) });
      reporter.queue(h);
    }
    this.#emit({ log: message });
  }
  #emit(value: unknown): void {
    const h = this.#h;
    this.#host.events.emit("progress", {
      lane: h.lane.config.name,
      jobId: h.job.id,
      task: h.job.task,
      value,
    });
  }
}
