/**
 * Runs one case in a fresh child process: set the system up, run one scenario, tear it
 * down, and report metrics to the orchestrator over IPC.
 */
import { type Cost, createProbe, type Probe } from "./probe.ts";
import { percentile, seededRandom } from "./stats.ts";
import { findSystem } from "./systems/index.ts";
import { MemorySampler, Tracker } from "./tracker.ts";
import type {
  Backend,
  BenchJob,
  CaseResult,
  CaseSpec,
  Metrics,
  SystemEnv,
  SystemUnderTest,
} from "./types.ts";

const MB = 2 ** 20;

export async function runCase(spec: CaseSpec): Promise<CaseResult> {
  const startedAt = performance.now();
  const entry = findSystem(spec.system);
  const base = {
    runId: spec.runId,
    at: new Date().toISOString(),
    system: spec.system,
    backend: entry.backend,
    scenario: spec.scenario,
    repeat: spec.repeat,
    profile: spec.profile.name,
  };
  let probe: Probe | undefined;
  let sut: SystemUnderTest | undefined;
  try {
    probe = await createProbe(entry.backend, spec);
    const env: SystemEnv = {
      queueName: spec.queueName,
      withPriorities: spec.scenario === "latency-priority",
      ...(spec.redis ? { redis: spec.redis } : {}),
      ...(spec.sqs ? { sqs: spec.sqs } : {}),
      createSqsClient() {
        const create = probe?.createSqsClient;
        if (!create) throw new Error(`${spec.system} asked for SQS but no fauxqs is running`);
        return create();
      },
    };
    const system = await entry.load();
    sut = await system.setup(env);
    const { metrics, requests } = await runScenario(spec, entry.backend, sut, probe);
    // The measurement is done: a teardown that hangs must not lose it (the process exits
    // after reporting anyway).
    const tornDown = await Promise.race([
      sut.teardown().then(() => true),
      new Promise<boolean>((resolve) => setTimeout(() => resolve(false), 15_000).unref()),
    ]);
    sut = undefined;
    if (!tornDown) metrics.teardownTimedOut = 1;
    return { ...base, ok: true, metrics, requests, wallMs: performance.now() - startedAt };
  } catch (error) {
    await sut?.teardown().catch(() => {});
    return {
      ...base,
      ok: false,
      error: error instanceof Error ? (error.stack ?? error.message) : String(error),
      metrics: {},
      wallMs: performance.now() - startedAt,
    };
  } finally {
    probe?.close();
  }
}

interface ScenarioOutput {
  metrics: Metrics;
  requests: Record<string, number>;
}

function jobCount(spec: CaseSpec, backend: Backend): number {
  return backend === "sqs" ? spec.profile.sqsJobs : spec.profile.jobs;
}

async function runScenario(
  spec: CaseSpec,
  backend: Backend,
  sut: SystemUnderTest,
  probe: Probe,
): Promise<ScenarioOutput> {
  switch (spec.scenario) {
    case "publish-single":
      return await publishSingle(spec, backend, sut, probe);
    case "publish-bulk":
      return await publishBulk(spec, backend, sut, probe);
    case "process-c1":
      return await processAll(spec, backend, sut, probe, 1);
    case "process-c10":
      return await processAll(spec, backend, sut, probe, 10);
    case "process-c100":
      return await processAll(spec, backend, sut, probe, 100);
    case "latency":
      return await latency(spec, sut, probe, false);
    case "latency-priority":
      return await latency(spec, sut, probe, true);
    case "idle":
      return await idle(spec, sut, probe);
  }
}

/** `requestsPerJob`, … or, with a prefix, `publishRequestsPerJob`, …. */
function costMetrics(prefix: string, cost: Cost, jobs: number): Metrics {
  const key = (name: string) =>
    prefix === "" ? name : `${prefix}${name[0]?.toUpperCase()}${name.slice(1)}`;
  return {
    [key("requestsPerJob")]: cost.requests / jobs,
    [key("roundTripsPerJob")]: cost.roundTrips / jobs,
    [key("backendCpuUsPerJob")]: (cost.backendCpuMs * 1000) / jobs,
  };
}

/** N publishes, `publishInFlight` outstanding at any time. */
async function publishSingle(
  spec: CaseSpec,
  backend: Backend,
  sut: SystemUnderTest,
  probe: Probe,
): Promise<ScenarioOutput> {
  const total = jobCount(spec, backend);
  const before = await probe.mark();
  let next = 0;
  const lane = async () => {
    while (next < total) {
      const i = next++;
      await sut.publish({ i });
    }
  };
  const t0 = performance.now();
  await Promise.all(Array.from({ length: spec.profile.publishInFlight }, lane));
  const elapsedMs = performance.now() - t0;
  const cost = probe.cost(before, await probe.mark());
  return {
    metrics: { jobsPerSec: (total / elapsedMs) * 1000, elapsedMs, ...costMetrics("", cost, total) },
    requests: cost.byCommand,
  };
}

function chunks(total: number, size: number, priority?: () => number): BenchJob[][] {
  const out: BenchJob[][] = [];
  for (let start = 0; start < total; start += size) {
    const chunk: BenchJob[] = [];
    for (let i = start; i < Math.min(total, start + size); i++) {
      chunk.push(priority ? { i, priority: priority() } : { i });
    }
    out.push(chunk);
  }
  return out;
}

/** N jobs in chunks of `bulkChunk`, one chunk at a time. */
async function publishBulk(
  spec: CaseSpec,
  backend: Backend,
  sut: SystemUnderTest,
  probe: Probe,
): Promise<ScenarioOutput> {
  const total = jobCount(spec, backend);
  const all = chunks(total, spec.profile.bulkChunk);
  const before = await probe.mark();
  const t0 = performance.now();
  for (const chunk of all) await sut.publishMany(chunk);
  const elapsedMs = performance.now() - t0;
  const cost = probe.cost(before, await probe.mark());
  return {
    metrics: { jobsPerSec: (total / elapsedMs) * 1000, elapsedMs, ...costMetrics("", cost, total) },
    requests: cost.byCommand,
  };
}

/**
 * Pre-publish N jobs in bulk (untimed; backend memory per waiting job measured here),
 * then start a worker with `concurrency` and time it from the first job start to the
 * last job done.
 */
async function processAll(
  spec: CaseSpec,
  backend: Backend,
  sut: SystemUnderTest,
  probe: Probe,
  concurrency: number,
): Promise<ScenarioOutput> {
  const total = jobCount(spec, backend);
  const tracker = new Tracker(total);
  const memoryBefore = await probe.memoryBytes();
  const m0 = await probe.mark();
  for (const chunk of chunks(total, spec.profile.bulkChunk)) await sut.publishMany(chunk);
  const m1 = await probe.mark();
  const memoryAfter = await probe.memoryBytes();
  const sampler = new MemorySampler();
  sampler.start();
  const t0 = performance.now();
  await sut.process({ concurrency, hooks: tracker });
  try {
    await tracker.allDone(spec.profile.caseTimeoutMs - 15_000);
  } finally {
    sampler.stop();
  }
  const m2 = await probe.mark();
  const publishCost = probe.cost(m0, m1);
  const processCost = probe.cost(m1, m2);
  const elapsedMs = tracker.lastDoneAt - tracker.firstStartAt;
  return {
    metrics: {
      jobsPerSec: (total / elapsedMs) * 1000,
      elapsedMs,
      startupMs: tracker.firstStartAt - t0,
      duplicates: tracker.duplicates,
      backendBytesPerJob: (memoryAfter - memoryBefore) / total,
      requestsPerJob: (publishCost.requests + processCost.requests) / total,
      backendCpuUsPerJob: ((publishCost.backendCpuMs + processCost.backendCpuMs) * 1000) / total,
      roundTripsPerJob: (publishCost.roundTrips + processCost.roundTrips) / total,
      ...costMetrics("publish", publishCost, total),
      ...costMetrics("process", processCost, total),
      rssPeakMb: sampler.rssPeak / MB,
      heapPeakMb: sampler.heapPeak / MB,
    },
    requests: processCost.byCommand,
  };
}

/**
 * A steady `latencyRatePerSec` of single publishes into an idle worker (concurrency
 * `latencyConcurrency`); latency = handler start − the moment publish was called. The
 * warm-up's jobs are not measured.
 */
async function latency(
  spec: CaseSpec,
  sut: SystemUnderTest,
  probe: Probe,
  withPriorities: boolean,
): Promise<ScenarioOutput> {
  const { latencyRatePerSec, latencySeconds, latencyWarmupSeconds, latencyConcurrency } =
    spec.profile;
  const warmup = Math.round(latencyRatePerSec * latencyWarmupSeconds);
  const total = warmup + Math.round(latencyRatePerSec * latencySeconds);
  const intervalMs = 1000 / latencyRatePerSec;
  const random = seededRandom(spec.seed);
  const tracker = new Tracker(total);
  await sut.process({ concurrency: latencyConcurrency, hooks: tracker });
  // Let the worker reach its idle wait before the first publish.
  await new Promise((resolve) => setTimeout(resolve, 200));
  const m0 = await probe.mark();
  const pending: Promise<void>[] = [];
  let failures = 0;
  const t0 = performance.now();
  let next = 0;
  while (next < total) {
    const now = performance.now();
    while (next < total && t0 + next * intervalMs <= now) {
      const i = next++;
      const job: BenchJob = withPriorities ? { i, priority: 1 + Math.floor(random() * 10) } : { i };
      tracker.sentAt[i] = performance.now();
      pending.push(
        sut.publish(job).catch(() => {
          failures++;
        }),
      );
    }
    const wait = t0 + next * intervalMs - performance.now();
    if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
  }
  const publishMs = performance.now() - t0;
  await Promise.all(pending);
  await tracker.allDone(15_000);
  const cost = probe.cost(m0, await probe.mark());
  const measured = Array.from(tracker.latencyMs.subarray(warmup)).sort((a, b) => a - b);
  const mean = measured.reduce((sum, value) => sum + value, 0) / measured.length;
  return {
    metrics: {
      p50Ms: percentile(measured, 50),
      p90Ms: percentile(measured, 90),
      p99Ms: percentile(measured, 99),
      maxMs: percentile(measured, 100),
      meanMs: mean,
      samples: measured.length,
      publishedPerSec: (total / publishMs) * 1000,
      publishFailures: failures,
      duplicates: tracker.duplicates,
      requestsPerJob: cost.requests / total,
      roundTripsPerJob: cost.roundTrips / total,
    },
    requests: cost.byCommand,
  };
}

/**
 * A worker (concurrency 10) on an empty queue for `idleSeconds`: backend requests and
 * round trips per second while nothing happens (long polls, blocking pops, probes).
 */
async function idle(spec: CaseSpec, sut: SystemUnderTest, probe: Probe): Promise<ScenarioOutput> {
  const tracker = new Tracker(0);
  await sut.process({ concurrency: 10, hooks: tracker });
  // Past start-up (connections, queue lookups, the first poll).
  await new Promise((resolve) => setTimeout(resolve, 500));
  const m0 = await probe.mark();
  const t0 = performance.now();
  await new Promise((resolve) => setTimeout(resolve, spec.profile.idleSeconds * 1000));
  const cost = probe.cost(m0, await probe.mark());
  const seconds = (performance.now() - t0) / 1000;
  return {
    metrics: {
      idleRequestsPerSec: cost.requests / seconds,
      idleRoundTripsPerSec: cost.roundTrips / seconds,
    },
    requests: cost.byCommand,
  };
}
