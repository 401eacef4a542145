/**
 * `tasklane failures|workers|schedules`: the operator data model (failure groups by error
 * name, a worker registry, recurring schedules). Where the installed @tasklane/core lacks a
 * feature's method, its command says so and exits with the unsupported code (3). Each
 * command looks the method up on the client (or the lane handle) by the path below
 * (`schedules.list`: `tl.schedules.list()`) and prints whatever records it returns.
 */
import type { CommandContext } from "../context.ts";
import { NotAvailableError } from "../errors.ts";
import { formatTime, renderTable } from "../output.ts";

type Records = Iterable<unknown> | AsyncIterable<unknown>;
type Lister = (this: unknown) => Records | Promise<Records>;

interface OperatorFeature {
  /** Plural, for messages: "failure groups are not supported …". */
  feature: string;
  /** The method's name, or its path from the owner ("schedules.list"). */
  method: string;
  /** Where it lives: on each lane's handle (`tl.lane(name)`), or on the client. */
  on: "lane" | "client";
}

export const OPERATOR_FEATURES = {
  failures: { feature: "failure groups", method: "failureGroups", on: "lane" },
  workers: { feature: "workers", method: "workers", on: "client" },
  schedules: { feature: "schedules", method: "schedules.list", on: "client" },
} as const satisfies Record<string, OperatorFeature>;

/** The method at `spec.method` from `owner`, bound to the object that holds it. */
function lister(owner: object, spec: OperatorFeature): Lister {
  const path = spec.method.split(".");
  let holder: unknown = owner;
  for (const key of path.slice(0, -1)) {
    holder =
      typeof holder === "object" && holder !== null
        ? (holder as Record<string, unknown>)[key]
        : undefined;
  }
  const method =
    typeof holder === "object" && holder !== null
      ? (holder as Record<string, unknown>)[path.at(-1) as string]
      : undefined;
  if (typeof method !== "function") {
    throw new NotAvailableError(
      spec.feature,
      `${spec.on === "lane" ? "tl.lane(name)." : "tl."}${spec.method}`,
    );
  }
  return (method as Lister).bind(holder);
}

async function* records(owner: object, method: Lister): AsyncGenerator<Record<string, unknown>> {
  for await (const record of await method.call(owner)) {
    yield typeof record === "object" && record !== null
      ? (record as Record<string, unknown>)
      : { value: record };
  }
}

/** A cell: times (`…At` fields) as ISO, objects as JSON. */
function cell(key: string, value: unknown): string {
  if (value === undefined || value === null) return "-";
  if (typeof value === "number" && key.endsWith("At")) return formatTime(value);
  if (typeof value === "object") return JSON.stringify(value);
  return String(value);
}

export async function listOperatorRecords(
  ctx: CommandContext,
  name: keyof typeof OPERATOR_FEATURES,
  options: { lane?: string[] },
): Promise<void> {
  const spec: OperatorFeature = OPERATOR_FEATURES[name];
  const session = await ctx.connect();
  const sources =
    spec.on === "lane"
      ? session.lanes(options.lane).map((h) => ({ owner: h as object, lane: h.name }))
      : [{ owner: session.tl as object, lane: undefined }];
  // Every source is checked before anything prints: all or nothing.
  const methods = sources.map((s) => lister(s.owner, spec));
  const rows: Array<Record<string, unknown>> = [];
  for (const [i, source] of sources.entries()) {
    for await (const record of records(source.owner, methods[i] as Lister)) {
      const row = source.lane === undefined ? record : { lane: source.lane, ...record };
      if (ctx.json) await ctx.out.json(row);
      else rows.push(row);
    }
  }
  if (ctx.json) return;
  if (rows.length === 0) {
    ctx.note(`no ${spec.feature}`);
    return;
  }
  const keys = [...new Set(rows.flatMap((row) => Object.keys(row)))];
  await ctx.out.line(
    renderTable(
      keys,
      rows.map((row) => keys.map((key) => cell(key, row[key]))),
      keys.map((key) =>
        typeof rows[0]?.[key] === "number" && !key.endsWith("At") ? "right" : "left",
      ),
    ),
  );
}
