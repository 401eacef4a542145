import type { HeldJob } from "./held-job.ts";

/**
 * Every job whose lease this worker holds: running, waiting for a runner, or settling.
 * A worker stops only when this is empty.
 */
export class HeldJobs {
  readonly #all = new Set<HeldJob>();
  #onEmpty: Array<() => void> = [];
  /** Waiters for the count to fall to a bound (atMost). */
  #onAtMost: Array<{ n: number; resolve: () => void }> = [];

  get size(): number {
    return this.#all.size;
  }

  hold(h: HeldJob): void {
    this.#all.add(h);
    h.lane.held.set(h.job.id, h);
  }

  /** The lease is no longer ours: stop tracking the job. */
  forget(h: HeldJob): void {
    if (!this.#all.delete(h)) return;
    // The lane may hold the same id again under a newer lease (a settle retried past the
    // end of this one, while the job came back to this worker): that entry stays.
    if (h.lane.held.get(h.job.id) === h) h.lane.held.delete(h.job.id);
    if (this.#onAtMost.length > 0) {
      const size = this.#all.size;
      this.#onAtMost = this.#onAtMost.filter((w) => {
        if (size > w.n) return true;
        w.resolve();
        return false;
      });
    }
    if (this.#all.size === 0) {
      const waiters = this.#onEmpty;
      this.#onEmpty = [];
      for (const resolve of waiters) resolve();
    }
  }

  /** Resolves once at most `n` jobs are held (at once if that is so now). */
  atMost(n: number): Promise<void> {
    if (this.#all.size <= n) return Promise.resolve();
    return new Promise((resolve) => this.#onAtMost.push({ n, resolve }));
  }

  /** Resolves the next time the last held job is forgotten. */
  nextEmpty(): Promise<void> {
    return new Promise((resolve) => this.#onEmpty.push(resolve));
  }

  [Symbol.iterator](): IterableIterator<HeldJob> {
    return this.#all.values();
  }
}
