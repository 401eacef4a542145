// What an operator can ask (README "Operating"), on the memory adapter:
// `npm run example:operator`
// or on Redis (every operator feature too; SQS has none of them):
// `TASKLANE_ADAPTER=redis REDIS_URL=redis://127.0.0.1:6379 npm run example:operator`
//
// Results and waiting for a job, stored progress and logs, tags and search, failure
// groups and retrying one, the worker registry, moving a job and an expiry. Each step
// prints one line; the process exits 0 when every answer is the one expected.
import { createTasklane, defineTask, JobFailedError, UnrecoverableError } from "@tasklane/core";
import { z } from "zod";
import { adapterFromEnv } from "./adapter-from-env.ts";

const resize = defineTask({
  name: "resize",
  lane: "default",
  schema: z.object({ image: z.string(), width: z.number().int().positive() }),
  result: z.object({ image: z.string(), bytes: z.number() }),
  async run({ image, width }, ctx) {
    for (let step = 1; step <= 3; step++) {
      ctx.progress({ step, of: 3 });
      ctx.log(`pass ${step} of 3 over ${image}`);
    }
    return { image: `${image.replace(/\.png$/, "")}-${width}.png`, bytes: width * 42 };
  },
});

const charge = defineTask({
  name: "charge",
  lane: "default",
  schema: z.object({ customer: z.number(), cents: z.number() }),
  retry: { maxAttempts: 1 },
  run({ customer, cents }) {
    if (cents < 0) throw new RangeError(`negative amount for customer ${customer}`);
    if (customer === 13) throw new UnrecoverableError("card declined");
    return { charged: cents };
  },
});

const report = defineTask({
  name: "report",
  lane: "slow",
  schema: z.object({ day: z.string() }),
  run: ({ day }) => ({ day, rows: 3 }),
});

const tl = createTasklane({
  adapter: await adapterFromEnv(),
  lanes: [{ name: "default", priority: 10 }, { name: "slow" }, { name: "fast", priority: 100 }],
  tasks: [resize, charge, report],
});
const failures: string[] = [];
const check = (ok: boolean, what: string) => {
  if (!ok) failures.push(what);
};

// Lanes "default" and "fast" are served; "slow" has no worker here.
const worker = tl.worker({ concurrency: 10, lanes: ["default", "fast"] });
await worker.start();

// 1. Results: publishAndWait resolves with what run returned, typed by its result schema.
const thumb = await tl.publishAndWait(
  resize,
  { image: "cat.png", width: 320 },
  { timeoutMs: 5_000 },
);
console.log(`result: ${thumb.image}, ${thumb.bytes} bytes`);
check(thumb.image === "cat-320.png", "result");

// 2. Progress and logs were stored with the job.
const { id: resized } = await tl.publish(
  resize,
  { image: "dog.png", width: 64 },
  { tags: ["customer:7"] },
);
await tl.waitFor(resized);
const job = await tl.getJob(resized);
console.log(
  `progress: ${JSON.stringify(job?.progress)}, log: ${job?.logs?.map((l) => l.message).join(" / ")}`,
);
check(job?.logs?.length === 3, "logs");

// 3. Waiting for a job that fails: JobFailedError carries the stored error.
const { id: declined } = await tl.publish(
  charge,
  { customer: 13, cents: 500 },
  { tags: ["customer:13"] },
);
const error = await tl.waitFor(declined).catch((e: unknown) => e);
if (error instanceof JobFailedError)
  console.log(`failed: ${error.error?.name}: ${error.error?.message}`);
check(error instanceof JobFailedError && error.state === "failed", "JobFailedError");

// 4. Failure groups: failed jobs by error name, with the newest as a sample.
const negative = await tl.publishMany(charge, [
  { payload: { customer: 1, cents: -1 }, tags: ["customer:1"] },
  { payload: { customer: 2, cents: -2 }, tags: ["customer:2"] },
]);
await Promise.all(negative.map((r) => tl.waitFor(r.id).catch(() => undefined)));
const groups = await tl.failures();
console.log(
  `failure groups: ${groups.map((g) => `${g.group} ×${g.count} (e.g. "${g.sample.message}")`).join(", ")}`,
);
check(
  groups.map((g) => `${g.group}:${g.count}`).join() === "RangeError:2,UnrecoverableError:1",
  "failures",
);

// 5. Tags and search: summaries (no payloads) of one customer's jobs, and counts by filter.
const lane = tl.lane("default");
const customer7: string[] = [];
for await (const j of lane.list({ tag: "customer:7", fields: "summary" }))
  customer7.push(`${j.task} ${j.state}`);
const failedCount = await lane.count({ state: "failed", errorName: "RangeError" });
console.log(`customer:7 → ${customer7.join(", ")}; RangeError failures: ${failedCount}`);
check(customer7.join() === "resize succeeded" && failedCount === 2, "search");

// 6. Retry a failure group in bounded batches (they fail again: the amounts are still negative).
const retried = await lane.retryFailed({ group: "RangeError" });
console.log(`retried ${retried} jobs of group RangeError`);
check(retried === 2, "retryFailed");

// 7. The worker registry: who runs, where, holding what.
const [me] = await tl.workers();
console.log(
  `workers: ${me?.id} on ${me?.lanes.join("+")}, concurrency ${me?.concurrency}, tasklane ${me?.version}`,
);
check(me?.id === worker.id, "workers");

// 8. Move a job out of a lane nobody serves, to one that is served; it runs there.
const { id: stuck } = await tl.publish(report, { day: "2026-11-26" });
const moved = await tl.lane("slow").move([stuck], "fast");
const moveResult = await tl.waitFor(stuck, { timeoutMs: 5_000 });
console.log(
  `moved: ${moved[0]}, ran in ${(await tl.getJob(stuck))?.lane}: ${JSON.stringify(moveResult)}`,
);
check(moved[0] === "moved", "move");

// 9. Expiry: a job nobody starts within 50 ms ends expired, never run. (Expiry is swept
// as the lane is used, here by the waiter's read; an idle waiter reads every 5 s.)
const { id: late } = await tl.publish(report, { day: "2026-11-27" }, { expiresInMs: 50 });
await new Promise((resolve) => setTimeout(resolve, 60));
const expired = await tl.waitFor(late).catch((e: unknown) => e);
console.log(
  `expiry: ${expired instanceof JobFailedError ? expired.state : String(expired)}; expired in lane slow: ${(await tl.lane("slow").counts()).expired}`,
);
check(expired instanceof JobFailedError && expired.state === "expired", "expiry");

await tl.close();
if (failures.length > 0) {
  console.error(`unexpected answers: ${failures.join(", ")}`);
  process.exit(1);
}
console.log("every answer as expected");
