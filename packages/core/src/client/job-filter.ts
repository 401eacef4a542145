/**
 * Checking the filters of searches (`list`, `listPage`, `count`, `deleteJobs`) before
 * anything reaches the adapter: unknown keys, bad values and conditions the adapter
 * cannot search by are refused with a ConfigError or UnsupportedError naming them.
 */
import { z } from "zod";
import { type Adapter, JOB_STATES, type JobFilter, type ListFilter } from "../adapter.ts";
import { ConfigError, UnsupportedError } from "../errors.ts";
import { parseOptions } from "../options.ts";
import { stripUndefined } from "../strip-undefined.ts";

const text = z.string().min(1, "must be a non-empty string").max(128, "at most 128 characters");
const epochMs = z.number().refine(Number.isFinite, "must be an epoch-ms number");

const filterShape = {
  state: z.enum(JOB_STATES).optional(),
  task: text.optional(),
  tag: text.optional(),
  errorName: text.optional(),
  since: epochMs.optional(),
  until: epochMs.optional(),
};

const jobFilterSchema = z.object(filterShape).strict();
const listFilterSchema = z
  .object({
    ...filterShape,
    fields: z.enum(["full", "summary"]).optional(),
    pageSize: z
      .number()
      .int("must be an integer from 1")
      .min(1, "must be an integer from 1")
      .optional(),
  })
  .strict();
const deleteFilterSchema = z
  .object({
    ...filterShape,
    group: text.optional(),
    limit: z.number().int("must be an integer >= 0").min(0, "must be an integer >= 0").optional(),
  })
  .strict();

/** True when the filter asks for nothing but a state (an adapter's plain `list`/`counts` do). */
export function onlyState(filter: JobFilter): boolean {
  return (
    filter.task === undefined &&
    filter.tag === undefined &&
    filter.errorName === undefined &&
    filter.since === undefined &&
    filter.until === undefined
  );
}

function checkCapabilities(adapter: Adapter, filter: JobFilter, field: string): void {
  if (filter.tag !== undefined && !adapter.capabilities.tags) {
    throw new UnsupportedError(adapter.name, "tags", `${field}.tag`);
  }
}

export function parseJobFilter(adapter: Adapter, input: unknown, field: string): JobFilter {
  const filter = stripUndefined(parseOptions(jobFilterSchema, input ?? {}, field)) as JobFilter;
  checkCapabilities(adapter, filter, field);
  return filter;
}

export function parseListFilter(adapter: Adapter, input: unknown, field: string): ListFilter {
  const filter = stripUndefined(parseOptions(listFilterSchema, input ?? {}, field)) as ListFilter;
  checkCapabilities(adapter, filter, field);
  return filter;
}

export type ParsedDeleteFilter = { filter: JobFilter; limit: number | undefined };

/** A delete filter as the job filter it means (`group` → failed jobs of that error name). */
export function parseDeleteFilter(
  adapter: Adapter,
  input: unknown,
  field: string,
): ParsedDeleteFilter {
  const parsed = stripUndefined(parseOptions(deleteFilterSchema, input, field));
  const { group, limit, ...rest } = parsed as JobFilter & { group?: string; limit?: number };
  const filter: JobFilter = rest;
  if (group !== undefined) {
    if (filter.state !== undefined && filter.state !== "failed") {
      throw new ConfigError(
        `${field}.state`,
        filter.state,
        "a failure group holds failed jobs only",
      );
    }
    if (filter.errorName !== undefined && filter.errorName !== group) {
      throw new ConfigError(
        `${field}.errorName`,
        filter.errorName,
        "give group or errorName, not both",
      );
    }
    filter.state = "failed";
    filter.errorName = group;
  }
  if (filter.state === "active") {
    throw new ConfigError(`${field}.state`, "active", "active jobs cannot be deleted: cancel them");
  }
  checkCapabilities(adapter, filter, field);
  return { filter, limit };
}
