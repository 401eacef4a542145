/**
 * A job's trace context as the text it carries (`NewJob.traceContext`): the carrier a
 * propagator fills (W3C `traceparent`, and `tracestate` and `baggage` when there are any),
 * stored as the bare `traceparent` value when that is all there is (55 characters: the
 * usual case), else as the carrier's JSON.
 */
import {
  type Context,
  defaultTextMapGetter,
  defaultTextMapSetter,
  propagation,
  ROOT_CONTEXT,
  type TextMapPropagator,
} from "@opentelemetry/api";
import { MAX_TRACE_CONTEXT_LENGTH } from "@tasklane/core/adapter";

export interface TraceContextCodec {
  /** The text to store for `context`'s span (and baggage), or undefined when it has none. */
  inject(context: Context): string | undefined;
  /** The context a stored text describes (the root context when there is none); parses it every call. */
  extract(text: string | undefined): Context;
}

export function createTraceContextCodec(
  propagator: Pick<TextMapPropagator, "inject" | "extract"> = propagation,
): TraceContextCodec {
  return {
    inject(context) {
      const carrier: Record<string, string> = {};
      propagator.inject(context, carrier, defaultTextMapSetter);
      const keys = Object.keys(carrier);
      if (keys.length === 0) return undefined;
      const traceparent = carrier.traceparent;
      if (keys.length === 1 && traceparent !== undefined) return traceparent;
      const text = JSON.stringify(carrier);
      if (text.length <= MAX_TRACE_CONTEXT_LENGTH) return text;
      // Too much baggage to carry: keep what links the traces.
      return traceparent;
    },
    extract(text) {
      if (text === undefined || text === "") return ROOT_CONTEXT;
      return propagator.extract(ROOT_CONTEXT, parseCarrier(text), defaultTextMapGetter);
    },
  };
}

/** The carrier a stored text holds; a text that is neither form gives an empty one. */
function parseCarrier(text: string): Record<string, string> {
  if (text.charCodeAt(0) !== 123 /* { */) return { traceparent: text };
  try {
    const parsed: unknown = JSON.parse(text);
    if (typeof parsed !== "object" || parsed === null) return {};
    const carrier: Record<string, string> = {};
    for (const [key, value] of Object.entries(parsed)) {
      if (typeof value === "string") carrier[key] = value;
    }
    return carrier;
  } catch {
    return {};
  }
}
