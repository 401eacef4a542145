/**
 * `tasklane tail`: job events from every process on the backend, as they happen
 * (`tl.subscribe`), until Ctrl-C (SIGINT) or SIGTERM, which end it cleanly (exit 0), or
 * until `--count` events were printed.
 */
import type { AdapterEvent } from "@tasklane/core";
import type { CommandContext } from "../context.ts";

export const EVENT_TYPES = [
  "published",
  "started",
  "succeeded",
  "retrying",
  "failed",
  "stalled",
  "released",
  "retried",
  "deleted",
  "canceled",
  "put",
] as const;

export interface TailOptions {
  lane?: string[];
  type?: string[];
  /** Stop after this many events. */
  count?: number;
}

export async function tail(ctx: CommandContext, options: TailOptions): Promise<void> {
  const session = await ctx.connect();
  const lanes = new Set(session.lanes(options.lane).map((h) => h.name));
  const types = options.type === undefined ? undefined : new Set(options.type);
  let printed = 0;
  let done!: () => void;
  const finished = new Promise<void>((resolve) => {
    done = resolve;
  });
  // Events arrive faster than a slow terminal may print them: they queue here and are
  // written in order, each write waiting for the stream.
  let writing = Promise.resolve();
  const print = (event: AdapterEvent) => {
    // the reader went away (`tasklane tail | head -3`): nothing more to print
    if (ctx.out.closed) done();
    if (!lanes.has(event.lane) || (types !== undefined && !types.has(event.type))) return;
    if (options.count !== undefined && printed >= options.count) return;
    printed++;
    const at = new Date().toISOString();
    writing = writing.then(() =>
      ctx.json
        ? ctx.out.json({ at, type: event.type, lane: event.lane, jobId: event.jobId })
        : ctx.out.line(`${at}  ${event.type.padEnd(9)}  ${event.lane}  ${event.jobId}`),
    );
    if (options.count !== undefined && printed >= options.count) void writing.then(done);
  };
  const stop = await session.tl.subscribe(print);
  const caps = session.tl.adapter.capabilities;
  ctx.note(
    `watching lane${lanes.size > 1 ? "s" : ""} ${[...lanes].join(", ")} on ${session.tl.adapter.name}` +
      (caps.lifecycleEvents ? "" : " (cancels only: this adapter carries no lifecycle events)") +
      "; Ctrl-C to stop",
  );
  const onAbort = () => done();
  ctx.signal.addEventListener("abort", onAbort, { once: true });
  if (ctx.signal.aborted) done();
  try {
    await finished;
  } finally {
    ctx.signal.removeEventListener("abort", onAbort);
    await stop();
    await writing;
  }
}
