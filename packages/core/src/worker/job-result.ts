/**
 * A handler's success and its return value: checked against the task's result schema,
 * encoded as JSON and bounded by `maxResultBytes`, then kept on the held job for its ack
 * (where the adapter stores results). A value that fails any of these fails the attempt
 * as unrecoverable: dead with reason "invalid_result", on every backend alike.
 */
import { byteLength } from "../codec.ts";
import { ResultTooLargeError, ValidationError } from "../errors.ts";
import { schemaError } from "../task.ts";
import type { HeldJob } from "./held-job.ts";
import { toJobError } from "./job-error.ts";
import type { Settler } from "./settler.ts";

export interface SucceedDeps {
  settle: Settler["settle"];
  /** Largest encoded result, bytes. */
  maxResultBytes: number;
  /** The adapter stores results (capability `results`): keep the encoded value for the ack. */
  storeResults: boolean;
}

/**
 * Settle a held job whose handler returned `value`. Synchronous unless the result schema
 * is asynchronous; then it resolves once the job is settled (or was lost meanwhile).
 */
export function createSucceed(deps: SucceedDeps) {
  const { settle, maxResultBytes, storeResults } = deps;

  const fail = (h: HeldJob, error: unknown) =>
    settle(h, { kind: "dead", error: toJobError(error, "invalid_result") });

  const keep = (h: HeldJob, output: unknown) => {
    let encoded: string | undefined;
    try {
      encoded = JSON.stringify(output);
    } catch (error) {
      fail(h, notJson(h, error));
      return;
    }
    if (encoded !== undefined) {
      const size = byteLength(encoded);
      if (size > maxResultBytes) {
        fail(h, new ResultTooLargeError(h.job.task, size, maxResultBytes));
        return;
      }
      if (storeResults) h.result = encoded;
    }
    settle(h, { kind: "success" });
  };

  return function succeed(h: HeldJob, value: unknown): undefined | Promise<void> {
    const schema = h.task?.result;
    if (schema === undefined) {
      // The common case: no result at all costs nothing.
      if (value === undefined) settle(h, { kind: "success" });
      else keep(h, value);
      return undefined;
    }
    let checked: ReturnType<(typeof schema)["~standard"]["validate"]>;
    try {
      checked = schema["~standard"].validate(value);
    } catch (error) {
      fail(h, error);
      return undefined;
    }
    if (!(checked instanceof Promise)) {
      if (checked.issues) fail(h, schemaError(h.job.task, checked.issues, undefined, "Result"));
      else keep(h, checked.value);
      return undefined;
    }
    return checked.then(
      (r) => {
        if (h.settled) return;
        if (r.issues) fail(h, schemaError(h.job.task, r.issues, undefined, "Result"));
        else keep(h, r.value);
      },
      (error) => {
        if (!h.settled) fail(h, error);
      },
    );
  };
}

function notJson(h: HeldJob, error: unknown): ValidationError {
  return new ValidationError(
    h.job.task,
    [{ message: `cannot be encoded as JSON (${String(error)})`, path: [] }],
    "Result",
  );
}
