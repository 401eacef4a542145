import { inspect } from "node:util";
import type { FailReason, JobError } from "../adapter.ts";

/** Longest error name stored with a failed job. */
export const MAX_ERROR_NAME = 200;
/** Longest message stored with a failed job: enough to read, bounded for the backend. */
export const MAX_ERROR_MESSAGE = 4_096;
/** Longest stack stored with a failed job; a stack is for reading, not for archiving. */
export const MAX_ERROR_STACK = 8_192;

/**
 * Limits for describing a thrown value: a handler may throw anything, a circular object
 * or one with a million keys included, and its description must stay short and never throw.
 */
const INSPECT_OPTIONS = {
  depth: 3,
  maxArrayLength: 20,
  maxStringLength: 1_000,
  breakLength: Number.POSITIVE_INFINITY,
  compact: 3,
  getters: false,
  showProxy: false,
  customInspect: false,
} as const;

/** How many causes deep a message follows `error.cause`. */
const MAX_CAUSES = 3;
/** How many of an AggregateError's errors its message names. */
const MAX_AGGREGATED = 5;

/**
 * The serialisable form of what a handler threw, as stored with a failed attempt. Never
 * throws, and every field is bounded (name, message, stack), whatever was thrown:
 *
 * - an Error: its name and message; the message also names its `cause` chain and, for an
 *   AggregateError, its errors; the stack holds the full picture (util.inspect of the
 *   error, causes and errors included).
 * - a string: the message is the string.
 * - an object with a string `message` (an error from another realm, a plain `{ message }`):
 *   its `name` (if a string) and message; the stack holds the object as inspected.
 * - anything else (a number, null, undefined, a symbol, a circular object): the message is
 *   the value as util.inspect shows it (cycles marked `[Circular *1]`).
 */
export function toJobError(error: unknown, reason: FailReason): JobError {
  try {
    if (error instanceof Error) return fromError(error, reason);
    if (typeof error === "string") {
      return { name: "Error", message: bounded(error, MAX_ERROR_MESSAGE), reason };
    }
    if (typeof error === "object" && error !== null) {
      const message = safeGet(error, "message");
      if (typeof message === "string") {
        const name = safeGet(error, "name");
        return {
          name: typeof name === "string" && name !== "" ? bounded(name, MAX_ERROR_NAME) : "Error",
          message: bounded(message, MAX_ERROR_MESSAGE),
          stack: bounded(describe(error), MAX_ERROR_STACK),
          reason,
        };
      }
    }
    return { name: "Error", message: bounded(describe(error), MAX_ERROR_MESSAGE), reason };
  } catch {
    // Unreachable by design (every read is guarded); a failure record must still be made.
    return { name: "Error", message: "(a thrown value that could not be described)", reason };
  }
}

function fromError(error: Error, reason: FailReason): JobError {
  const name = safeGet(error, "name");
  let message = messageOf(error);
  const errors = safeGet(error, "errors");
  if (error instanceof AggregateError && Array.isArray(errors) && errors.length > 0) {
    const listed = errors.slice(0, MAX_AGGREGATED).map(summary).join("; ");
    const more =
      errors.length > MAX_AGGREGATED ? `; and ${errors.length - MAX_AGGREGATED} more` : "";
    message = `${message}${message ? " " : ""}[${errors.length} errors: ${listed}${more}]`;
  }
  let cause = safeGet(error, "cause");
  for (let depth = 0; cause !== undefined && depth < MAX_CAUSES; depth++) {
    message += ` (caused by ${summary(cause)})`;
    cause = cause instanceof Error ? safeGet(cause, "cause") : undefined;
  }
  const out: JobError = {
    name: typeof name === "string" && name !== "" ? bounded(name, MAX_ERROR_NAME) : "Error",
    message: bounded(message, MAX_ERROR_MESSAGE),
    reason,
  };
  // A cause or aggregated errors are only in inspect's output; a plain error's own stack
  // is what inspect would print anyway, without its cost.
  const plain = safeGet(error, "cause") === undefined && !(error instanceof AggregateError);
  const stack = plain ? safeGet(error, "stack") : describe(error);
  if (typeof stack === "string" && stack !== "") out.stack = bounded(stack, MAX_ERROR_STACK);
  return out;
}

/** `Name: message` of an error, or the description of any other value. */
function summary(value: unknown): string {
  if (value instanceof Error) {
    const name = safeGet(value, "name");
    return bounded(`${typeof name === "string" ? name : "Error"}: ${messageOf(value)}`, 500);
  }
  return bounded(describe(value), 500);
}

function messageOf(error: Error): string {
  const message = safeGet(error, "message");
  return typeof message === "string" ? message : describe(message);
}

/** util.inspect with limits; never throws. */
function describe(value: unknown): string {
  try {
    return inspect(value, INSPECT_OPTIONS);
  } catch {
    try {
      return Object.prototype.toString.call(value);
    } catch {
      return "(unprintable value)";
    }
  }
}

/** A property read that survives throwing getters and revoked proxies. */
function safeGet(target: object, key: string): unknown {
  try {
    return (target as Record<string, unknown>)[key];
  } catch {
    return undefined;
  }
}

function bounded(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, max - 1)}…`;
}
