/**
 * tasklane in OpenTelemetry: the instrumentation a client takes as
 * `createTasklane({ instrumentation: createTelemetry() })`.
 *
 * Traces: a producer span per publish call ("publish <lane>"), whose context every job of
 * the call carries (`NewJob.traceContext`); a consumer span per delivery
 * ("process <lane>"), a child of that producer span and linked to it, the handler running
 * in its context. Metrics: counts kept as plain numbers and read at collection time,
 * duration histograms, lane depth from `counts()` at most once per lane per
 * `depthIntervalMs`, worker gauges, adapter calls. Everything goes through
 * `@opentelemetry/api`: with no SDK registered (or traces and metrics off) it records
 * nothing.
 */
import {
  type Attributes,
  context,
  type Histogram,
  type Meter,
  type MeterProvider,
  metrics,
  type ObservableResult,
  type Span,
  SpanKind,
  SpanStatusCode,
  type TextMapPropagator,
  type Tracer,
  type TracerProvider,
  trace,
} from "@opentelemetry/api";
import type {
  Instrumentation,
  LaneCounts,
  LaneHandle,
  PublishTelemetry,
  PutResult,
  Tasklane,
  WorkerView,
} from "@tasklane/core";
import { type NewJob, parseOptions } from "@tasklane/core/adapter";
import { z } from "zod";
import { JobRun, type JobRunShared, ProcessParents } from "./job-run.ts";
import { type CallCount, countLaneCalls } from "./lane-calls.ts";
import {
  ATTR_ERROR_TYPE,
  ATTR_LANE,
  ATTR_MESSAGING_BATCH_MESSAGE_COUNT,
  ATTR_MESSAGING_DESTINATION_NAME,
  ATTR_MESSAGING_MESSAGE_ID,
  ATTR_MESSAGING_OPERATION_NAME,
  ATTR_MESSAGING_OPERATION_TYPE,
  ATTR_MESSAGING_SYSTEM,
  ATTR_STATE,
  ATTR_TASK,
  BATCH_BUCKETS,
  DURATION_BUCKETS_S,
  MESSAGING_SYSTEM,
  METRICS,
  SCOPE_NAME,
} from "./names.ts";
import { Tallies, type Tally } from "./tally.ts";
import { createTraceContextCodec } from "./trace-context.ts";
import { VERSION } from "./version.ts";

export interface TelemetryOptions {
  /** Where spans go. Default the global one (`trace`), as the Node SDK registers it. */
  tracerProvider?: TracerProvider;
  /**
   * Where metrics go. Default the global one (`metrics`), read when the client is created:
   * start the SDK before `createTasklane`.
   */
  meterProvider?: MeterProvider;
  /** How a job carries its trace context. Default the global propagator (W3C trace context). */
  propagator?: TextMapPropagator;
  /** Make spans. Default true. */
  traces?: boolean;
  /** Record metrics. Default true. */
  metrics?: boolean;
  /**
   * How a job's process span relates to the span that published it: `"producer"`, its
   * child (publish and runs in one trace) and linked to it; `"link"`, the root of a trace
   * of its own, linked to it (for jobs delayed for days, or retried many times, where one
   * trace would grow too long). Default "producer".
   */
  processSpanParent?: "producer" | "link";
  /**
   * The lane depth gauge calls `counts()` of each lane at most once per this many ms,
   * however often metrics are collected (a scrape does not hammer the backend); 0 reads
   * them at every collection. Default 15_000.
   */
  depthIntervalMs?: number;
  /**
   * How long a collection waits for those counts, ms; past it the gauge reports the last
   * counts it has (and the call goes on, for the next collection). Default 2_000.
   */
  depthTimeoutMs?: number;
}

/** An `Instrumentation` for `createTasklane`. */
export interface Telemetry extends Instrumentation {
  /** The options in force, defaults filled in. */
  readonly options: Readonly<ResolvedTelemetryOptions>;
}

export interface ResolvedTelemetryOptions {
  traces: boolean;
  metrics: boolean;
  processSpanParent: "producer" | "link";
  depthIntervalMs: number;
  depthTimeoutMs: number;
}

const hasMethod = (name: string) => (v: unknown) =>
  typeof v === "object" && v !== null && typeof (v as Record<string, unknown>)[name] === "function";

export const telemetryOptionsSchema = z
  .object({
    tracerProvider: z
      .custom<TracerProvider>(hasMethod("getTracer"), "must be a TracerProvider (getTracer)")
      .optional(),
    meterProvider: z
      .custom<MeterProvider>(hasMethod("getMeter"), "must be a MeterProvider (getMeter)")
      .optional(),
    propagator: z
      .custom<TextMapPropagator>(
        (v) => hasMethod("inject")(v) && hasMethod("extract")(v),
        "must be a TextMapPropagator (inject, extract)",
      )
      .optional(),
    traces: z.boolean().optional(),
    metrics: z.boolean().optional(),
    processSpanParent: z.enum(["producer", "link"]).optional(),
    depthIntervalMs: z.number().int().min(0).optional(),
    depthTimeoutMs: z.number().int().min(1).max(60_000).optional(),
  })
  .strict();

/** The task attribute of a job whose task no attached client knows. */
export const UNKNOWN_TASK = "(unknown)";

const STATES = ["waiting", "delayed", "active", "failed", "succeeded", "canceled"] as const;

/**
 * The telemetry a client takes as its `instrumentation`:
 *
 * @example
 * const tl = createTasklane({ adapter, lanes, tasks, instrumentation: createTelemetry() });
 */
export function createTelemetry(options: TelemetryOptions = {}): Telemetry {
  const o = parseOptions(telemetryOptionsSchema, options, "");
  const resolved: ResolvedTelemetryOptions = {
    traces: o.traces ?? true,
    metrics: o.metrics ?? true,
    processSpanParent: o.processSpanParent ?? "producer",
    depthIntervalMs: o.depthIntervalMs ?? 15_000,
    depthTimeoutMs: o.depthTimeoutMs ?? 2_000,
  };
  const tracer: Tracer | undefined = resolved.traces
    ? (o.tracerProvider ?? trace.getTracerProvider()).getTracer(SCOPE_NAME, VERSION)
    : undefined;
  const codec = createTraceContextCodec(o.propagator);
  const tallies = new Tallies();
  const callCounts: CallCount[] = [];
  const workers: WorkerView[] = [];
  const clients: Tasklane[] = [];
  /** The attached clients' task names: a job of any other task (a foreign producer's) is
   * counted under one name, so its text cannot grow the metrics' series. */
  const knownTasks = new Set<string>();
  const taskOf = (name: string) => (knownTasks.has(name) ? name : UNKNOWN_TASK);
  let reserveBatchSize: Histogram | undefined;
  let settleDuration: Histogram | undefined;
  const shared: JobRunShared = {
    tracer,
    parents: new ProcessParents(codec, resolved.processSpanParent === "link"),
    now: Date.now,
    waitDuration: undefined,
    runDuration: undefined,
  };
  let meter: Meter | undefined;

  const depth = createDepthCache(resolved);

  /** The instruments, made once, with the first client. */
  const makeInstruments = () => {
    const m = (o.meterProvider ?? metrics.getMeterProvider()).getMeter(SCOPE_NAME, VERSION);
    meter = m;
    const seconds = (name: string, description: string) =>
      m.createHistogram(name, {
        unit: "s",
        description,
        advice: { explicitBucketBoundaries: DURATION_BUCKETS_S },
      });
    shared.waitDuration = seconds(
      METRICS.waitDuration,
      "From when a job was due (published, or its retry's backoff over) to its handler's start, per attempt",
    );
    shared.runDuration = seconds(
      METRICS.runDuration,
      "From a handler's start to the worker's decision on its outcome, per attempt",
    );
    settleDuration = seconds(
      METRICS.settleDuration,
      "How long one settling call (ack, nack, release) to the backend took",
    );
    reserveBatchSize = m.createHistogram(METRICS.reserveBatchSize, {
      unit: "{job}",
      description: "Jobs one reserve call took (0 when it found none)",
      advice: { explicitBucketBoundaries: BATCH_BUCKETS },
    });

    const counter = (
      name: string,
      description: string,
      observe: (result: ObservableResult) => void,
    ) => m.createObservableCounter(name, { description, unit: "{job}" }).addCallback(observe);
    counter(METRICS.published, "Jobs published, by outcome (created, duplicate)", (r) => {
      for (const t of tallies) {
        if (t.created > 0 || t.duplicate === 0) r.observe(t.created, t.withOutcome("created"));
        if (t.duplicate > 0) r.observe(t.duplicate, t.withOutcome("duplicate"));
      }
    });
    const perTally = (name: string, description: string, read: (t: Tally) => number) =>
      counter(name, description, (r) => {
        for (const t of tallies) r.observe(read(t), t.attributes);
      });
    perTally(METRICS.started, "Handlers started", (t) => t.started);
    perTally(METRICS.succeeded, "Jobs whose ack the backend accepted", (t) => t.succeeded);
    perTally(METRICS.retried, "Failed attempts scheduled again", (t) => t.retried);
    perTally(
      METRICS.stalled,
      "Leases that ran out while this worker held the job",
      (t) => t.stalled,
    );
    perTally(METRICS.lockLost, "Leases lost while held (stalled ones included)", (t) => t.lockLost);
    perTally(METRICS.canceled, "Running jobs canceled", (t) => t.canceled);
    counter(METRICS.failed, "Failed attempts (retried or dead), by reason", (r) => {
      for (const t of tallies)
        for (const [reason, n] of t.failed) r.observe(n, t.withReason(reason));
    });
    counter(METRICS.dead, "Jobs sent to the dead letter set, by reason", (r) => {
      for (const t of tallies) for (const [reason, n] of t.dead) r.observe(n, t.withReason(reason));
    });

    m.createObservableCounter(METRICS.adapterCalls, {
      description: "Adapter calls (backend requests) by lane, call and result",
      unit: "{call}",
    }).addCallback((r) => {
      const sums = new Map<Attributes, number>();
      for (const c of callCounts) {
        // Counts of one (lane, call) made by several lane stores add up under one series.
        addTo(sums, c.okAttributes, c.ok);
        if (c.errors > 0) addTo(sums, c.errorAttributes, c.errors);
      }
      for (const [attributes, n] of sums) r.observe(n, attributes);
    });

    m.createObservableCounter(METRICS.selectorPicks, {
      description: "Turns the selector gave each lane",
      unit: "{pick}",
    }).addCallback((r) => {
      const picks = new Map<string, number>();
      for (const w of workers) {
        for (const [lane, n] of Object.entries(w.metrics().selected)) {
          picks.set(lane, (picks.get(lane) ?? 0) + n);
        }
      }
      for (const [lane, n] of picks) r.observe(n, { [ATTR_LANE]: lane });
    });

    const workerGauge = (name: string, description: string, read: (w: WorkerView) => number) =>
      m.createObservableGauge(name, { description, unit: "{job}" }).addCallback((r) => {
        if (workers.length === 0) return;
        let n = 0;
        for (const w of workers) n += read(w);
        r.observe(n);
      });
    workerGauge(METRICS.workerHeld, "Jobs whose lease this process's workers hold", (w) => w.held);
    workerGauge(METRICS.workerRunning, "Handlers running in this process", (w) => w.running);
    workerGauge(
      METRICS.workerFreeSlots,
      "Handler slots free in this process (concurrency − running)",
      // a stopped worker has no slots
      (w) => (w.started ? Math.max(0, w.concurrency - w.running) : 0),
    );

    m.createObservableGauge(METRICS.laneJobs, {
      description: `Jobs in each lane by state, from the backend's counts (at most one read per lane per ${resolved.depthIntervalMs} ms)`,
      unit: "{job}",
    }).addCallback(async (r) => {
      const handles = clients.flatMap((c) => c.lanes());
      const read = await depth.read(handles);
      read.forEach((counts, i) => {
        const lane = handles[i]?.name;
        if (counts === undefined || lane === undefined) return;
        for (const state of STATES) {
          r.observe(counts[state], { [ATTR_LANE]: lane, [ATTR_STATE]: state });
        }
        // where the adapter has capability expiry
        if (counts.expired !== undefined) {
          r.observe(counts.expired, { [ATTR_LANE]: lane, [ATTR_STATE]: "expired" });
        }
        // where the adapter has capability flows
        if (counts.blocked !== undefined) {
          r.observe(counts.blocked, { [ATTR_LANE]: lane, [ATTR_STATE]: "blocked" });
        }
      });
    });
  };

  const publish = (lane: string, task: string, jobs: readonly NewJob[]): PublishTelemetry => {
    const tally = tallies.of(lane, task);
    if (tracer === undefined) return new PublishRun(tally, undefined, undefined);
    const active = context.active();
    const attributes: Attributes = {
      [ATTR_MESSAGING_SYSTEM]: MESSAGING_SYSTEM,
      [ATTR_MESSAGING_OPERATION_TYPE]: "send",
      [ATTR_MESSAGING_OPERATION_NAME]: "publish",
      [ATTR_MESSAGING_DESTINATION_NAME]: lane,
      [ATTR_TASK]: task,
    };
    if (jobs.length === 1) attributes[ATTR_MESSAGING_MESSAGE_ID] = (jobs[0] as NewJob).id;
    else attributes[ATTR_MESSAGING_BATCH_MESSAGE_COUNT] = jobs.length;
    const span = tracer.startSpan(
      `publish ${lane}`,
      { kind: SpanKind.PRODUCER, attributes },
      active,
    );
    return new PublishRun(tally, span, codec.inject(trace.setSpan(active, span)));
  };

  const telemetry: Telemetry = {
    options: resolved,
    attach(client) {
      clients.push(client);
      for (const t of client.tasks()) knownTasks.add(t.name);
      shared.now = () => client.clock.now();
      if (resolved.metrics && meter === undefined) makeInstruments();
    },
    worker(view) {
      workers.push(view);
    },
    job: (lane, job) => new JobRun(shared, tallies.of(lane, taskOf(job.task)), lane, job),
    publish,
  };
  if (resolved.metrics) {
    telemetry.wrapLane = (store, lane) =>
      countLaneCalls(store, lane, {
        counts: callCounts,
        reserveBatchSize: () => reserveBatchSize,
        settleDuration: () => settleDuration,
      });
  }
  return telemetry;
}

/** One publish call: its span (when traces are on) and its counts. */
class PublishRun implements PublishTelemetry {
  readonly traceContext: string | undefined;
  readonly #tally: Tally;
  readonly #span: Span | undefined;

  constructor(tally: Tally, span: Span | undefined, traceContext: string | undefined) {
    this.#tally = tally;
    this.#span = span;
    this.traceContext = traceContext;
  }

  end(results: readonly PutResult[] | undefined, error?: unknown): void {
    const span = this.#span;
    if (results !== undefined) {
      let duplicates = 0;
      for (const r of results) if (r.status === "duplicate") duplicates++;
      this.#tally.created += results.length - duplicates;
      this.#tally.duplicate += duplicates;
      if (span !== undefined && results.length === 1 && duplicates === 1) {
        span.setAttribute("tasklane.publish.duplicate", true);
      }
    } else if (span !== undefined) {
      if (error instanceof Error) span.recordException(error);
      span.setAttribute(ATTR_ERROR_TYPE, error instanceof Error ? error.name : "Error");
      span.setStatus({
        code: SpanStatusCode.ERROR,
        message: error instanceof Error ? error.message : String(error),
      });
    }
    span?.end();
  }
}

function addTo(sums: Map<Attributes, number>, attributes: Attributes, n: number): void {
  // Attribute objects are made once per (lane, call) store; two stores of one lane (two
  // clients) get equal but distinct objects: compare by content.
  for (const [a, v] of sums) {
    if (sameAttributes(a, attributes)) {
      sums.set(a, v + n);
      return;
    }
  }
  sums.set(attributes, n);
}

function sameAttributes(a: Attributes, b: Attributes): boolean {
  const keys = Object.keys(a);
  if (keys.length !== Object.keys(b).length) return false;
  return keys.every((k) => a[k] === b[k]);
}

interface DepthEntry {
  counts: LaneCounts | undefined;
  readAt: number;
  pending: Promise<void> | undefined;
}

/** Lane counts for the depth gauge, read at most once per lane per interval. */
function createDepthCache(options: ResolvedTelemetryOptions) {
  const entries = new Map<LaneHandle, DepthEntry>();
  const refresh = (handle: LaneHandle, entry: DepthEntry): Promise<void> => {
    entry.readAt = Date.now();
    entry.pending = handle.counts().then(
      (counts) => {
        entry.counts = counts;
        entry.pending = undefined;
      },
      () => {
        // An unreachable backend keeps the last counts; the next interval tries again.
        entry.pending = undefined;
      },
    );
    return entry.pending;
  };
  return {
    async read(handles: readonly LaneHandle[]): Promise<Array<LaneCounts | undefined>> {
      const waits: Promise<void>[] = [];
      for (const handle of handles) {
        let entry = entries.get(handle);
        if (entry === undefined) {
          entry = { counts: undefined, readAt: 0, pending: undefined };
          entries.set(handle, entry);
        }
        if (entry.pending !== undefined) waits.push(entry.pending);
        else if (Date.now() - entry.readAt >= options.depthIntervalMs) {
          waits.push(refresh(handle, entry));
        }
      }
      if (waits.length > 0) {
        let timer: NodeJS.Timeout | undefined;
        await Promise.race([
          Promise.all(waits),
          new Promise<void>((resolve) => {
            timer = setTimeout(resolve, options.depthTimeoutMs);
          }),
        ]);
        clearTimeout(timer);
      }
      return handles.map((h) => entries.get(h)?.counts);
    },
  };
}
