/**
 * p-queue: a bare in-process promise queue, the ceiling for the memory adapter. A job is
 * a closure; "published" means added to the paused queue, "done" means its promise
 * resolved. No ids, no states, no leases: the cost of the job life cycle is what the
 * ratio to it shows.
 */
import PQueue from "p-queue";
import type { BenchJob, BenchSystem, JobHooks, SystemUnderTest } from "../types.ts";

export const system: BenchSystem = {
  async setup() {
    const queue = new PQueue({ autoStart: false, concurrency: 1 });
    let hooks: JobHooks | undefined;
    const noop = async (i: number) => {
      hooks?.onStart(i);
    };
    const add = (job: BenchJob) => {
      const options = job.priority === undefined ? undefined : { priority: job.priority };
      void queue.add(() => noop(job.i), options).then(() => hooks?.onDone(job.i));
    };
    const sut: SystemUnderTest = {
      async publish(job) {
        add(job);
      },
      async publishMany(jobs) {
        for (const job of jobs) add(job);
      },
      async process(options) {
        hooks = options.hooks;
        queue.concurrency = options.concurrency;
        queue.start();
      },
      async teardown() {
        queue.pause();
        queue.clear();
      },
    };
    return sut;
  },
};
