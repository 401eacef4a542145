import type { FailReason, JobError } from "../adapter.ts";

/** Longest stack stored with a failed job; a stack is for reading, not for archiving. */
const MAX_STACK = 8_192;

/** The serialisable form of what a handler threw, as stored with a failed attempt. */
export function toJobError(error: unknown, reason: FailReason): JobError {
  if (error instanceof Error) {
    const out: JobError = { name: error.name, message: error.message, reason };
    if (error.stack) out.stack = error.stack.slice(0, MAX_STACK);
    return out;
  }
  return { name: "Error", message: typeof error === "string" ? error : safeString(error), reason };
}

function safeString(v: unknown): string {
  try {
    return JSON.stringify(v) ?? String(v);
  } catch {
    return String(v);
  }
}
