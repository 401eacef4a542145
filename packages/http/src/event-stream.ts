/**
 * Server-Sent Events from a tasklane client: lifecycle events from every process on the
 * backend (`tl.subscribe`) and this process's own events (`tl.events`).
 */
import type { AdapterEvent, Tasklane, TasklaneEvents } from "@tasklane/core";

export type EventSource = "backend" | "process";

export interface EventStreamOptions {
  sources: ReadonlySet<EventSource>;
  /** Only these lanes (config names); undefined: every lane. */
  lanes: ReadonlySet<string> | undefined;
  /** Only these event types; undefined: every type. */
  types: ReadonlySet<string> | undefined;
  /** A comment line this often keeps proxies from closing an idle stream. */
  heartbeatMs: number;
  /** Events held for a client that reads slower than they come; past it they are dropped and counted. */
  maxQueued: number;
  /** Ends the stream (the request's signal: the client went away). */
  signal: AbortSignal;
}

/** Every `tl.events` event; `error` and `drained` name lanes, the rest one job. */
const PROCESS_EVENTS = [
  "published",
  "started",
  "progress",
  "succeeded",
  "retrying",
  "failed",
  "lock_lost",
  "canceled",
  "put",
  "stalled",
  "drained",
  "error",
] as const satisfies ReadonlyArray<keyof TasklaneEvents>;

/** The JSON of one process event: errors as name and message, never their objects. */
function processEventData(type: string, event: object): Record<string, unknown> {
  const data: Record<string, unknown> = { source: "process", type, ...event };
  if (type === "error") {
    const error = (event as TasklaneEvents["error"]).error;
    data.error =
      error instanceof Error
        ? { name: error.name, message: error.message }
        : { message: String(error) };
  }
  return data;
}

function eventLanes(type: string, event: object): string[] | undefined {
  if (type === "drained") return (event as TasklaneEvents["drained"]).lanes;
  const lane = (event as { lane?: string }).lane;
  return lane === undefined ? undefined : [lane];
}

/**
 * Subscribe and return the stream. The first event, `ready`, is sent once every source
 * is subscribed: a client that acts after it sees what follows. Unsubscribes when the
 * client goes away or the stream is canceled.
 */
export async function openEventStream(
  tl: Tasklane,
  options: EventStreamOptions,
): Promise<ReadableStream<Uint8Array>> {
  const encoder = new TextEncoder();
  let controller!: ReadableStreamDefaultController<Uint8Array>;
  let dropped = 0;
  let closed = false;
  const cleanups: Array<() => unknown> = [];

  const send = (text: string) => {
    if (closed) return;
    // desiredSize counts queued chunks against maxQueued: a slow reader loses events
    // (counted and reported) instead of growing this process's memory.
    if ((controller.desiredSize ?? 0) <= 0) {
      dropped++;
      return;
    }
    if (dropped > 0) {
      controller.enqueue(encoder.encode(`event: dropped\ndata: {"count":${dropped}}\n\n`));
      dropped = 0;
    }
    controller.enqueue(encoder.encode(text));
  };
  const emit = (type: string, data: Record<string, unknown>) => {
    if (options.types !== undefined && !options.types.has(type)) return;
    let json: string;
    try {
      json = JSON.stringify(data);
    } catch {
      // A progress value JSON cannot hold (a BigInt, a cycle). This runs inside the
      // emitter of tl.events, so a throw would reach the job's ctx.progress() call.
      const { source, lane, jobId, task } = data;
      json = JSON.stringify({ source, type, lane, jobId, task, unserializable: true });
    }
    send(`event: ${type}\ndata: ${json}\n\n`);
  };
  const laneWanted = (lanes: string[] | undefined) =>
    options.lanes === undefined ||
    lanes === undefined ||
    lanes.some((lane) => options.lanes?.has(lane));

  const close = async () => {
    if (closed) return;
    closed = true;
    options.signal.removeEventListener("abort", onAbort);
    await Promise.allSettled(cleanups.map((stop) => stop()));
  };
  const onAbort = () => {
    void close().then(() => {
      try {
        controller.close();
      } catch {
        // already closed or canceled by the reader
      }
    });
  };

  const stream = new ReadableStream<Uint8Array>(
    {
      start(c) {
        controller = c;
      },
      cancel: close,
    },
    { highWaterMark: options.maxQueued },
  );

  try {
    if (options.sources.has("process")) {
      for (const type of PROCESS_EVENTS) {
        const listener = (event: object) => {
          if (laneWanted(eventLanes(type, event))) emit(type, processEventData(type, event));
        };
        tl.events.on(type, listener);
        cleanups.push(() => tl.events.off(type, listener));
      }
    }
    if (options.sources.has("backend")) {
      const stop = await tl.subscribe((event: AdapterEvent) => {
        if (laneWanted([event.lane])) emit(event.type, { source: "backend", ...event });
      });
      cleanups.push(stop);
    }
  } catch (error) {
    await close();
    throw error;
  }
  if (options.signal.aborted) {
    await close();
  } else {
    options.signal.addEventListener("abort", onAbort, { once: true });
    const heartbeat = setInterval(() => send(": keep-alive\n\n"), options.heartbeatMs);
    heartbeat.unref?.();
    cleanups.push(() => clearInterval(heartbeat));
    send(`event: ready\ndata: ${JSON.stringify({ sources: [...options.sources] })}\n\n`);
  }
  return stream;
}
