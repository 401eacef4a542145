/**
 * A worker process, forked by the orchestrator (see worker-pool.ts): a service that runs
 * tasklane's worker loop in its own process, as a user's would, and writes everything it
 * does to its ledger. It exits when told to stop, when its parent goes away, or when a
 * poison pill ends it.
 */
import { join } from "node:path";
import { createTasklane } from "@tasklane/core";
import { ledgerFileName, openLedger } from "../ledger.ts";
import { defineChaosTask } from "./chaos-task.ts";
import { createRecordingAdapter } from "./recording-adapter.ts";
import { createBackendAdapter, type WorkerSpec } from "./worker-spec.ts";

const spec = JSON.parse(process.argv[2] ?? "{}") as WorkerSpec;
const full = spec.mode === "full";
const ledger = openLedger(join(spec.ledgerDir, ledgerFileName(spec.slot, process.pid)));
ledger.write({ e: "boot", t: Date.now(), slot: spec.slot });

// The parent is gone (killed, or finished without stopping us): nothing to report to.
process.on("disconnect", () => process.exit(0));

const inner = createBackendAdapter(spec.backend);
const adapter = full ? createRecordingAdapter(inner, ledger) : inner;
let done = 0;
const laneName = spec.lane.name;
const task = defineChaosTask(laneName, spec.retry, async (payload, ctx) => {
  const a = ctx.attempt;
  if (full) ledger.write({ e: "start", t: Date.now(), id: ctx.jobId, a });
  let ok = false;
  try {
    if (payload.k === "exit" || payload.k === "kill") {
      ledger.write({ e: "pill", t: Date.now(), id: ctx.jobId, a, how: payload.k });
      if (payload.k === "exit") process.exit(1);
      process.kill(process.pid, "SIGKILL");
      await new Promise(() => {}); // the signal ends the process
    }
    if (payload.ms > 0) await new Promise((resolve) => setTimeout(resolve, payload.ms));
    if (payload.k === "fail1" && a === 1) throw new Error("fails its first attempt, by design");
    ok = true;
  } finally {
    done++;
    if (full) ledger.write({ e: "fin", t: Date.now(), id: ctx.jobId, a, ok });
  }
});

const tl = createTasklane({ adapter, lanes: [spec.lane], tasks: [task] });
tl.events.on("error", ({ error, during }) => {
  ledger.write({
    e: "err",
    t: Date.now(),
    during,
    msg: error instanceof Error ? error.message.slice(0, 200) : String(error),
  });
});

// Event-loop lag: a timer that fires late says the process could not run (machine load,
// a long GC). The checker uses it to tell a lease lost to a stalled holder from one lost
// to an injected fault.
const tickMs = 50;
let last = performance.now();
setInterval(() => {
  const now = performance.now();
  const late = now - last - tickMs;
  last = now;
  if (late >= spec.lagThresholdMs) ledger.write({ e: "lag", t: Date.now(), ms: Math.round(late) });
}, tickMs).unref();

if (spec.heapSampleMs !== undefined) {
  // Forked with --expose-gc: a full collection before the second reading shows what the
  // worker holds (the question is whether it ever holds the lane), apart from garbage.
  const gc = (globalThis as { gc?: () => void }).gc;
  setInterval(() => {
    const t = Date.now();
    const used = process.memoryUsage().heapUsed;
    gc?.();
    const live = gc === undefined ? undefined : process.memoryUsage().heapUsed;
    ledger.writeMany([
      { e: "heap", t, used, ...(live === undefined ? {} : { live }) },
      { e: "count", t, done },
    ]);
  }, spec.heapSampleMs).unref();
}

const worker = tl.worker({
  concurrency: spec.concurrency,
  ...(spec.prefetch === undefined ? {} : { prefetch: spec.prefetch }),
});
try {
  await worker.start();
} catch (error) {
  ledger.write({ e: "err", t: Date.now(), during: "start", msg: String(error) });
  process.exit(2);
}
ledger.write({ e: "ready", t: Date.now() });
process.send?.({ type: "ready" });

process.on("message", (message: { type: string; graceMs?: number }) => {
  if (message.type !== "stop") return;
  void (async () => {
    await worker.stop({ graceMs: message.graceMs ?? 5_000 });
    await tl.close({ graceMs: 0 });
    const t = Date.now();
    ledger.writeMany([
      { e: "heap", t, used: process.memoryUsage().heapUsed },
      { e: "count", t, done },
      { e: "stop", t },
    ]);
    ledger.close();
    process.send?.({ type: "stopped", done }, () => process.exit(0));
  })();
});
