import type { JobHooks } from "./types.ts";

/**
 * Counts starts and completions of one case and times them. `onStart`/`onDone` are the
 * hooks the systems call; they do a few array writes only. A job reported done twice
 * (at-least-once redelivery) counts once and is reported as a duplicate.
 */
export class Tracker implements JobHooks {
  readonly total: number;
  started = 0;
  done = 0;
  duplicates = 0;
  firstStartAt = Number.NaN;
  lastDoneAt = Number.NaN;
  /** When each job was handed to publish (performance.now), for latency. */
  readonly sentAt: Float64Array;
  /** Start latency per job, ms (NaN until it starts). */
  readonly latencyMs: Float64Array;
  private readonly doneFlags: Uint8Array;
  private waiter: (() => void) | undefined;

  constructor(total: number) {
    this.total = total;
    this.sentAt = new Float64Array(total).fill(Number.NaN);
    this.latencyMs = new Float64Array(total).fill(Number.NaN);
    this.doneFlags = new Uint8Array(total);
  }

  onStart(i: number): void {
    const now = performance.now();
    if (this.started++ === 0) this.firstStartAt = now;
    if (Number.isNaN(this.latencyMs[i] ?? 0)) this.latencyMs[i] = now - (this.sentAt[i] ?? now);
  }

  onDone(i: number): void {
    if (this.doneFlags[i] === 1) {
      this.duplicates++;
      return;
    }
    this.doneFlags[i] = 1;
    this.done++;
    if (this.done === this.total) {
      this.lastDoneAt = performance.now();
      this.waiter?.();
    }
  }

  /** Resolves when every job is done; rejects after `timeoutMs`. */
  async allDone(timeoutMs: number): Promise<void> {
    if (this.done >= this.total) return;
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(
        () => reject(new Error(`only ${this.done}/${this.total} jobs done after ${timeoutMs} ms`)),
        timeoutMs,
      );
      this.waiter = () => {
        clearTimeout(timer);
        resolve();
      };
    });
  }
}

/** Peak RSS and heap of this process, sampled every 50 ms while running. */
export class MemorySampler {
  rssPeak = 0;
  heapPeak = 0;
  private timer: NodeJS.Timeout | undefined;

  start(): void {
    this.sample();
    this.timer = setInterval(() => this.sample(), 50);
  }

  stop(): void {
    clearInterval(this.timer);
    this.sample();
  }

  private sample(): void {
    const usage = process.memoryUsage();
    this.rssPeak = Math.max(this.rssPeak, usage.rss);
    this.heapPeak = Math.max(this.heapPeak, usage.heapUsed);
  }
}
