/**
 * A bare ioredis list loop: the physical ceiling of a Redis queue on this machine.
 * Publish is LPUSH (one LPUSH of 1,000 values in bulk); each of `concurrency` loops does
 * RPOP, runs the handler, and loops, on one connection with auto-pipelining, so the
 * RPOPs of all loops issued in one tick travel in one write. When the list is empty the
 * loops park and one BRPOP on a second connection wakes them. No ids, no leases, no
 * acknowledgement (a crash loses the jobs in hand): nothing a real queue could skip.
 */
import { Redis } from "ioredis";
import type { BenchSystem, SystemUnderTest } from "../types.ts";

export const system: BenchSystem = {
  async setup(env) {
    if (!env.redis) throw new Error("raw-ioredis needs redis");
    const key = `raw:${env.queueName}`;
    const main = new Redis({ ...env.redis, enableAutoPipelining: true });
    const blocking = new Redis({ ...env.redis, maxRetriesPerRequest: null });
    let running = false;
    const parked: Array<(value: string | null) => void> = [];
    let blockerActive = false;

    const encode = (i: number) => JSON.stringify({ i });

    /** One BRPOP at a time, handing each value to one parked loop. */
    const runBlocker = async () => {
      if (blockerActive) return;
      blockerActive = true;
      try {
        while (running && parked.length > 0) {
          const popped = await blocking.brpop(key, 1).catch(() => null);
          if (popped) parked.shift()?.(popped[1]);
        }
      } finally {
        blockerActive = false;
      }
    };
    const park = () =>
      new Promise<string | null>((resolve) => {
        parked.push(resolve);
        void runBlocker();
      });

    const loop = async (onStart: (i: number) => void, onDone: (i: number) => void) => {
      while (running) {
        let value = await main.rpop(key);
        if (value === null) value = await park();
        if (value === null) continue;
        const { i } = JSON.parse(value) as { i: number };
        onStart(i);
        await Promise.resolve();
        onDone(i);
      }
    };

    const sut: SystemUnderTest = {
      async publish(job) {
        await main.lpush(key, encode(job.i));
      },
      async publishMany(jobs) {
        await main.lpush(key, ...jobs.map((job) => encode(job.i)));
      },
      async process({ concurrency, hooks }) {
        running = true;
        const onStart = hooks.onStart.bind(hooks);
        const onDone = hooks.onDone.bind(hooks);
        for (let n = 0; n < concurrency; n++) void loop(onStart, onDone);
      },
      async teardown() {
        running = false;
        for (const resolve of parked.splice(0)) resolve(null);
        blocking.disconnect();
        await main.quit();
      },
    };
    return sut;
  },
};
