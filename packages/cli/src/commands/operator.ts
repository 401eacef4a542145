/**
 * `tasklane failures|workers|schedules`: failure groups (failed jobs by error name) and
 * the worker registry, from the operator data model; each needs a capability of the
 * adapter and exits 3 naming it where the backend lacks it; and the recurring schedules of
 * every lane (capability schedules).
 */
import { type Capabilities, type FailureGroup, UnsupportedError } from "@tasklane/core";
import type { CommandContext } from "../context.ts";
import { formatDuration, formatTime, oneLine, renderTable } from "../output.ts";
import type { Session } from "../session.ts";

/** Exit 3 naming the capability, before anything is read. */
function requireCapability(
  session: Session,
  capability: keyof Capabilities,
  what: string,
  detail?: string,
): void {
  const adapter = session.tl.adapter;
  if (adapter.capabilities[capability] !== true) {
    throw new UnsupportedError(adapter.name, `${what} (capability ${capability})`, detail);
  }
}

/** `tasklane failures`: the failure groups of the chosen lanes, largest first. */
export async function failures(ctx: CommandContext, options: { lane?: string[] }): Promise<void> {
  const session = await ctx.connect();
  const handles = session.lanes(options.lane);
  requireCapability(session, "failureGroups", "failure groups");
  const groups: FailureGroup[] = (await Promise.all(handles.map((h) => h.failures())))
    .flat()
    .sort((a, b) => b.count - a.count || (a.group < b.group ? -1 : 1));
  if (ctx.json) {
    for (const group of groups) await ctx.out.json(group);
    return;
  }
  if (groups.length === 0) {
    ctx.note("no failed jobs");
    return;
  }
  await ctx.out.line(
    renderTable(
      ["lane", "group", "jobs", "last failed", "task", "latest message"],
      groups.map((g) => [
        g.lane,
        g.group,
        g.count,
        formatTime(g.sample.failedAt),
        g.sample.task,
        oneLine(g.sample.message, 80),
      ]),
      ["left", "left", "right", "left", "left", "left"],
    ),
  );
  const first = groups[0] as FailureGroup;
  ctx.note(
    `retry a group: tasklane jobs retry --all --lane ${first.lane} --error-name ${first.group}` +
      ` (jobs list --state failed --error-name … shows its jobs)`,
  );
}

/** `tasklane workers`: the running workers serving the client's lanes, from any process. */
export async function workers(ctx: CommandContext): Promise<void> {
  const session = await ctx.connect();
  requireCapability(session, "workers", "the worker registry");
  const list = await session.tl.workers();
  if (ctx.json) {
    for (const worker of list) await ctx.out.json(worker);
    return;
  }
  if (list.length === 0) {
    ctx.note("no running workers");
    return;
  }
  // The registry's times are the backend's clock; "ago" is against this machine's.
  const now = Date.now();
  await ctx.out.line(
    renderTable(
      [
        "worker",
        "host",
        "pid",
        "lanes",
        "concurrency",
        "held",
        "running",
        "started",
        "heartbeat",
        "lapses",
      ],
      list.map((w) => [
        w.id,
        w.host,
        w.pid,
        w.lanes.join(","),
        w.concurrency,
        w.held,
        w.running,
        formatTime(w.startedAt),
        `${formatDuration(Math.max(0, now - w.lastHeartbeatAt))} ago`,
        w.expiresAt > now ? `in ${formatDuration(w.expiresAt - now)}` : "lapsed",
      ]),
      ["left", "left", "right", "left", "right", "right", "right", "left", "right", "right"],
    ),
  );
}

/** `tasklane schedules`: every lane's recurring schedules, by next slot. */
export async function schedules(ctx: CommandContext): Promise<void> {
  const session = await ctx.connect();
  requireCapability(session, "schedules", "recurring schedules");
  const list = await session.tl.schedules.list();
  if (ctx.json) {
    for (const schedule of list) await ctx.out.json(schedule);
    return;
  }
  if (list.length === 0) {
    ctx.note("no schedules");
    return;
  }
  await ctx.out.line(
    renderTable(
      ["schedule", "lane", "task", "every", "timezone", "next", "runs", "paused"],
      list.map((s) => [
        s.id,
        s.lane,
        s.task,
        s.spec.cron ?? formatDuration(s.spec.everyMs ?? 0),
        s.spec.timezone ?? "",
        s.nextAt === null ? "-" : formatTime(s.nextAt),
        s.runs,
        s.paused ? "yes" : "",
      ]),
      ["left", "left", "left", "left", "left", "left", "right", "left"],
    ),
  );
}
