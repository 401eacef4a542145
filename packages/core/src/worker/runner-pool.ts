/**
 * Runners, not a pool task per job.
 *
 * Dispatched items wait in lines, one per lane priority (highest first, FIFO within one),
 * for one of at most `concurrency` runners. A runner is one p-queue task that runs
 * waiting items one after another; finding none, it parks until the next dispatch wakes
 * it, and it ends when the pool ends. Every dispatch either wakes a parked runner or,
 * below `concurrency`, starts one, so nothing waits while a runner is free.
 *
 * Why: p-queue's cost per task (its events, an async resource, a few promises) is then
 * paid once per runner, not once per job. With a task per job it was over a quarter of
 * the worker's CPU for a no-op job; without parking, a worker fed in batches started a
 * runner per job again. (Measurements: DESIGN.md, "Runners, not a pool task per job".)
 */
import PQueue from "p-queue";
import { Fifo } from "../fifo.ts";

export interface RunnerPoolOptions<T> {
  concurrency: number;
  /** The priorities items can be dispatched at; a line is made for each. */
  priorities: Iterable<number>;
  /** Run one item. A rejection goes to `onError`; the item's slot frees either way. */
  run(item: T): Promise<void>;
  onError(item: T, error: unknown): void;
}

export interface RunnerPool<T> {
  /** The line of a priority given at creation, to dispatch into. */
  line(priority: number): Fifo<T>;
  /** LaneStore an item on its line and make sure a runner will take it. */
  dispatch(line: Fifo<T>, item: T): void;
  /**
   * Items dispatched whose run has not ended, waiting or running. Counted here, not by
   * p-queue, so the worker learns of a free slot without an event per job.
   */
  readonly active: number;
  /** Resolves when the next item's run ends (one waiter at a time: the worker's loop). */
  nextSlotFree(): Promise<void>;
  /** Resolve the waiter of `nextSlotFree` now (at stop, so the loop can see it). */
  wakeSlotWaiter(): void;
  /** From now on runners that find nothing to run end instead of parking. */
  end(): void;
  /** Resolves when every runner has ended. */
  onIdle(): Promise<void>;
}

export function createRunnerPool<T>(options: RunnerPoolOptions<T>): RunnerPool<T> {
  const { concurrency, run, onError } = options;
  const pool = new PQueue({ concurrency });
  const lines = new Map(
    [...new Set(options.priorities)].sort((a, b) => b - a).map((p) => [p, new Fifo<T>()]),
  );
  let runners = 0;
  let ending = false;
  /** Parked runners: resolve with true to run, false to end. */
  const parked: Array<(run: boolean) => void> = [];
  let active = 0;
  let onSlotFree: (() => void) | undefined;

  const wakeSlotWaiter = () => {
    const wake = onSlotFree;
    onSlotFree = undefined;
    wake?.();
  };

  /** The next item to run: the highest priority first, FIFO within one. */
  const next = (): T | undefined => {
    for (const line of lines.values()) {
      const item = line.shift();
      if (item !== undefined) return item;
    }
    return undefined;
  };

  // A woken runner may find its item taken by a busier one: it parks again.
  const runner = async (): Promise<void> => {
    for (;;) {
      const item = next();
      if (item !== undefined) {
        try {
          await run(item);
        } catch (error) {
          onError(item, error);
        } finally {
          active--;
          wakeSlotWaiter();
        }
        continue;
      }
      if (ending) break;
      const go = await new Promise<boolean>((resolve) => parked.push(resolve));
      if (!go) break;
    }
    runners--;
  };

  return {
    line(priority) {
      const line = lines.get(priority);
      if (!line) throw new Error(`no line for priority ${priority}`);
      return line;
    },
    dispatch(line, item) {
      active++;
      line.push(item);
      const wake = parked.pop();
      if (wake !== undefined) wake(true);
      else if (runners < concurrency) {
        runners++;
        void pool.add(runner);
      }
    },
    get active() {
      return active;
    },
    nextSlotFree() {
      return new Promise<void>((resolve) => {
        onSlotFree = resolve;
      });
    },
    wakeSlotWaiter,
    end() {
      ending = true;
      for (const wake of parked.splice(0)) wake(false);
    },
    onIdle: () => pool.onIdle(),
  };
}
