/**
 * One delivery of a job, as telemetry follows it: a consumer span from the moment a
 * runner takes the job until the backend answers its settling call (or the lease is gone),
 * the handler run inside the span's context, and the counts and durations of the delivery.
 *
 *   job(lane, job) ─► span "process <lane>" (child of the producer's span, linked to it)
 *   run(handler)   ─► started +1, wait time, the handler in the span's context
 *   settling(...)  ─► retry event / exception and error status
 *   end(status)    ─► outcome: counts, run time, lock-lost / cancel events, span ends
 */
import {
  type Attributes,
  type Context,
  context,
  type Histogram,
  type Link,
  type Span,
  SpanKind,
  type SpanOptions,
  SpanStatusCode,
  type Tracer,
  trace,
} from "@opentelemetry/api";
import type { JobEnd, JobError, JobSettling, JobTelemetry } from "@tasklane/core";
import type { ReservedJob } from "@tasklane/core/adapter";
import {
  ATTR_ATTEMPT,
  ATTR_ERROR_TYPE,
  ATTR_FAIL_REASON,
  ATTR_MESSAGING_DESTINATION_NAME,
  ATTR_MESSAGING_MESSAGE_ID,
  ATTR_MESSAGING_OPERATION_NAME,
  ATTR_MESSAGING_OPERATION_TYPE,
  ATTR_MESSAGING_SYSTEM,
  ATTR_OUTCOME,
  ATTR_RETRY_AT,
  ATTR_TASK,
  EVENT_CANCELED,
  EVENT_LOCK_LOST,
  EVENT_MOVED,
  EVENT_RETRY,
  EVENT_UNCONFIRMED,
  MESSAGING_SYSTEM,
  type Outcome,
} from "./names.ts";
import { bump, type Tally } from "./tally.ts";
import type { TraceContextCodec } from "./trace-context.ts";

/** What every delivery shares: one object per telemetry. */
export interface JobRunShared {
  /** Undefined when traces are off. */
  tracer: Tracer | undefined;
  /** Each delivery's parent context and link, from the trace context it carries. */
  parents: ProcessParents;
  /** The client's clock, epoch ms (the backend's times, like `readyAt`, are too). */
  now(): number;
  /** Undefined until a client is attached, or when metrics are off. */
  waitDuration: Histogram | undefined;
  runDuration: Histogram | undefined;
}

export class JobRun implements JobTelemetry {
  readonly #s: JobRunShared;
  readonly #tally: Tally;
  readonly #job: ReservedJob;
  readonly #span: Span | undefined;
  readonly #context: Context | undefined;
  #startedAt = -1;
  #settledAt = -1;
  #settling: JobSettling | undefined;

  constructor(shared: JobRunShared, tally: Tally, lane: string, job: ReservedJob) {
    this.#s = shared;
    this.#tally = tally;
    this.#job = job;
    const tracer = shared.tracer;
    if (tracer === undefined) return;
    const { parent, link } = shared.parents.of(job.traceContext);
    const options: SpanOptions = {
      kind: SpanKind.CONSUMER,
      attributes: {
        [ATTR_MESSAGING_SYSTEM]: MESSAGING_SYSTEM,
        [ATTR_MESSAGING_OPERATION_TYPE]: "process",
        [ATTR_MESSAGING_OPERATION_NAME]: "process",
        [ATTR_MESSAGING_DESTINATION_NAME]: lane,
        [ATTR_MESSAGING_MESSAGE_ID]: job.id,
        [ATTR_TASK]: job.task,
        [ATTR_ATTEMPT]: job.attempt,
      },
    };
    // A fresh array per span: a tracer may keep it as the span's own (and add to it).
    if (link !== undefined) options.links = [link];
    const span = tracer.startSpan(tally.processSpanName, options, parent);
    this.#span = span;
    this.#context = trace.setSpan(parent, span);
  }

  run<T>(handler: () => T): T {
    const now = this.#s.now();
    this.#startedAt = now;
    this.#tally.started++;
    const waitMs = now - this.#job.readyAt;
    if (waitMs >= 0) this.#s.waitDuration?.record(waitMs / 1000, this.#tally.attributes);
    const ctx = this.#context;
    return ctx === undefined ? handler() : context.with(ctx, handler);
  }

  settling(outcome: JobSettling): void {
    this.#settledAt = this.#s.now();
    this.#settling = outcome;
    const span = this.#span;
    if (span === undefined || (outcome.kind !== "retry" && outcome.kind !== "dead")) return;
    recordFailure(span, outcome.error, outcome.cause);
    if (outcome.kind === "retry") {
      span.addEvent(EVENT_RETRY, {
        [ATTR_RETRY_AT]: outcome.runAt,
        [ATTR_FAIL_REASON]: outcome.error.reason,
      });
    }
  }

  end(status: JobEnd): void {
    const outcome = outcomeOf(status, this.#settling);
    const tally = this.#tally;
    const settling = this.#settling;
    switch (outcome) {
      case "succeeded":
        tally.succeeded++;
        break;
      case "retried":
        tally.retried++;
        if (settling?.kind === "retry") bump(tally.failed, settling.error.reason);
        break;
      case "dead":
        if (settling?.kind === "dead") {
          bump(tally.failed, settling.error.reason);
          bump(tally.dead, settling.error.reason);
        }
        break;
      case "stalled":
        tally.stalled++;
        tally.lockLost++;
        break;
      case "lock_lost":
        tally.lockLost++;
        break;
      case "canceled":
        tally.canceled++;
        break;
    }
    if (this.#startedAt >= 0) {
      const endedAt = this.#settledAt >= 0 ? this.#settledAt : this.#s.now();
      this.#s.runDuration?.record((endedAt - this.#startedAt) / 1000, tally.withOutcome(outcome));
    }
    const span = this.#span;
    if (span === undefined) return;
    span.setAttribute(ATTR_OUTCOME, outcome);
    if (outcome === "lock_lost" || outcome === "stalled") {
      span.addEvent(EVENT_LOCK_LOST, { [ATTR_OUTCOME]: outcome });
      span.setStatus({
        code: SpanStatusCode.ERROR,
        message:
          outcome === "stalled" ? "the lease ran out while the job was held" : "the lease was lost",
      });
      span.setAttribute(ATTR_ERROR_TYPE, "LockLostError");
    } else if (outcome === "canceled") span.addEvent(EVENT_CANCELED);
    else if (outcome === "moved") span.addEvent(EVENT_MOVED);
    else if (outcome === "unconfirmed") span.addEvent(EVENT_UNCONFIRMED);
    span.end();
  }
}

function outcomeOf(status: JobEnd, settling: JobSettling | undefined): Outcome {
  switch (status) {
    case "ok":
      if (settling === undefined) return "released";
      return settling.kind === "ack"
        ? "succeeded"
        : settling.kind === "retry"
          ? "retried"
          : settling.kind === "dead"
            ? "dead"
            : "released";
    case "lost":
      return "lock_lost";
    case "stalled":
      return "stalled";
    case "canceled":
      return "canceled";
    case "put":
      return "moved";
    case "unconfirmed":
      return "unconfirmed";
  }
}

/** The failure on the span: an exception event, `error.type`, the error status. */
function recordFailure(span: Span, error: JobError, cause: unknown): void {
  if (cause instanceof Error) span.recordException(cause);
  else {
    const exception: { name: string; message: string; stack?: string } = {
      name: error.name,
      message: error.message,
    };
    if (error.stack !== undefined) exception.stack = error.stack;
    span.recordException(exception);
  }
  const attributes: Attributes = {
    [ATTR_ERROR_TYPE]: error.name || "Error",
    [ATTR_FAIL_REASON]: error.reason,
  };
  span.setAttributes(attributes);
  span.setStatus({ code: SpanStatusCode.ERROR, message: error.message });
}

/** What a process span starts from: its parent context, and the producer's span to link. */
export interface ProcessParent {
  readonly parent: Context;
  readonly link: Link | undefined;
}

/** Traces' texts read lately: the jobs of one publishMany share one. */
const PARENTS_CACHED = 64;

/**
 * Process parents by the trace context text a job carries, each read once: the jobs of
 * one publish call share one text, so a delivery usually costs one map lookup.
 */
export class ProcessParents {
  readonly #codec: TraceContextCodec;
  readonly #linkOnly: boolean;
  readonly #byText = new Map<string, ProcessParent>();
  readonly #none: ProcessParent;

  /**
   * `linkOnly`: a process span starts a trace of its own, linked to the producer's span,
   * instead of joining the producer's trace as its child (linked to it as well, as the
   * messaging conventions ask of a process span).
   */
  constructor(codec: TraceContextCodec, linkOnly: boolean) {
    this.#codec = codec;
    this.#linkOnly = linkOnly;
    this.#none = this.#read(undefined);
  }

  of(text: string | undefined): ProcessParent {
    if (text === undefined || text === "") return this.#none;
    let parent = this.#byText.get(text);
    if (parent === undefined) {
      parent = this.#read(text);
      if (this.#byText.size >= PARENTS_CACHED) this.#byText.clear();
      this.#byText.set(text, parent);
    }
    return parent;
  }

  #read(text: string | undefined): ProcessParent {
    const extracted = this.#codec.extract(text);
    const producer = trace.getSpanContext(extracted);
    return {
      parent: this.#linkOnly ? trace.deleteSpan(extracted) : extracted,
      link: producer === undefined ? undefined : { context: producer },
    };
  }
}
