/**
 * BullMQ 6 on Redis: the Redis baseline. Jobs are removed on completion (the usual
 * production setting; keeping them would cost BullMQ more memory, not less work).
 * BullMQ priorities are "lower number first", so priority p (1..10, higher first)
 * becomes 11 - p.
 */
import { Queue, Worker } from "bullmq";
import type { BenchJob, BenchSystem, SystemUnderTest } from "../types.ts";

export const system: BenchSystem = {
  async setup(env) {
    if (!env.redis) throw new Error("bullmq needs redis");
    const connection = { host: env.redis.host, port: env.redis.port };
    const queue = new Queue(env.queueName, {
      connection,
      defaultJobOptions: { removeOnComplete: true, removeOnFail: true },
    });
    await queue.waitUntilReady();
    let worker: Worker | undefined;
    const jobOptions = (job: BenchJob) =>
      job.priority === undefined ? undefined : { priority: 11 - job.priority };
    const sut: SystemUnderTest = {
      async publish(job) {
        await queue.add("noop", { i: job.i }, jobOptions(job));
      },
      async publishMany(jobs) {
        const bulk = jobs.map((job) => {
          const opts = jobOptions(job);
          return opts
            ? { name: "noop", data: { i: job.i }, opts }
            : { name: "noop", data: { i: job.i } };
        });
        await queue.addBulk(bulk);
      },
      async process({ concurrency, hooks }) {
        worker = new Worker(
          env.queueName,
          async (job) => {
            hooks.onStart((job.data as { i: number }).i);
          },
          { connection: { ...connection, maxRetriesPerRequest: null }, concurrency },
        );
        worker.on("completed", (job) => hooks.onDone((job.data as { i: number }).i));
        worker.on("error", () => {});
        await worker.waitUntilReady();
      },
      async teardown() {
        await worker?.close();
        await queue.close();
      },
    };
    return sut;
  },
};
