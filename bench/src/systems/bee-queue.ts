/**
 * Bee-Queue 2 on Redis: the lean Redis peer. Configured as its README recommends for
 * throughput: no pub/sub events, jobs removed on success, no job map on the producer.
 * Bee-Queue has no job-level priorities.
 */
import BeeQueue from "bee-queue";
import type { BenchSystem, SystemUnderTest } from "../types.ts";

interface Data {
  i: number;
}

export const system: BenchSystem = {
  async setup(env) {
    if (!env.redis) throw new Error("bee-queue needs redis");
    const redis = { host: env.redis.host, port: env.redis.port };
    const common = {
      redis,
      prefix: "bq",
      getEvents: false,
      sendEvents: false,
      removeOnSuccess: true,
      removeOnFailure: true,
    };
    const producer = new BeeQueue<Data>(env.queueName, {
      ...common,
      isWorker: false,
      storeJobs: false,
      activateDelayedJobs: false,
    });
    await producer.ready();
    let worker: BeeQueue<Data> | undefined;
    const sut: SystemUnderTest = {
      async publish(job) {
        await producer.createJob({ i: job.i }).save();
      },
      async publishMany(jobs) {
        const errors = await producer.saveAll(jobs.map((job) => producer.createJob({ i: job.i })));
        if (errors.size > 0) throw new Error(`bee-queue saveAll: ${errors.size} jobs failed`);
      },
      async process({ concurrency, hooks }) {
        worker = new BeeQueue<Data>(env.queueName, { ...common, isWorker: true });
        worker.on("succeeded", (job) => hooks.onDone(job.data.i));
        worker.on("error", () => {});
        await worker.ready();
        worker.process(concurrency, async (job) => {
          hooks.onStart(job.data.i);
        });
      },
      async teardown() {
        await worker?.close(5_000);
        await producer.close(5_000);
      },
    };
    return sut;
  },
};
