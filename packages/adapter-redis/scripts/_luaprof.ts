import { randomUUID } from "node:crypto";
import { Redis } from "ioredis";
import { createRedisAdapter } from "/work/main/packages/adapter-redis/src/index.ts";
import { startRedis } from "/work/main/packages/adapter-redis/test/helpers.ts";

const server = await startRedis();
const stats = new Redis(server.port, "127.0.0.1");
const hist = Number(process.argv[2] ?? 20);
const B = Number(process.argv[3] ?? 100);
const adapter = createRedisAdapter({ connection: server.url, prefix: "p" });
const q = await adapter.queue("b", {
  maxStalls: 1,
  historyLimit: hist,
  retention: { succeeded: { maxCount: 1000, maxAgeMs: 86400000 } },
});
for (let i = 0; i < 10000; i += 1000) {
  await q.put(
    Array.from({ length: 1000 }, (_, k) => ({
      id: randomUUID(),
      task: "noop",
      payload: `{"i":${i + k}}`,
      priority: 0,
      publishedAt: Date.now(),
    })),
  );
}
const usec = async () =>
  Number(/cmdstat_evalsha:calls=\d+,usec=(\d+)/.exec(await stats.info("commandstats"))?.[1]);
let tr = 0,
  ta = 0;
for (let r = 0; r < 50; r++) {
  const u0 = await usec();
  const res = await q.reserve({ limit: B, leaseMs: 30000, waitMs: 0 });
  const u1 = await usec();
  await q.ack(res.jobs.map((j) => j.lock));
  const u2 = await usec();
  tr += u1 - u0;
  ta += u2 - u1;
}
console.log(
  `history ${hist}: reserve ${(tr / 50).toFixed(0)} us/call, ack ${(ta / 50).toFixed(0)} us/call (${B} jobs)`,
);
await adapter.close();
stats.disconnect();
await server.stop();
