import type { Api, ApiError } from "./api.ts";
import type { Lane, LiveEvent } from "./types.ts";

/** Seconds of event rates kept for the live chart. */
export const RATE_WINDOW_S = 60;
/** Event types the live chart counts, in its legend's order. */
export const RATE_TYPES = ["published", "succeeded", "failed"] as const;
/** How often counts are re-read without events (and always, on adapters without them). */
const POLL_MS = 5_000;
/** Least time between two re-reads that events ask for. */
const EVENT_REFRESH_MS = 400;

export type Connection = "connecting" | "live" | "retrying" | "unavailable";

export interface LiveState {
  lanes: Lane[] | null;
  error: ApiError | null;
  /** When the lanes were last read (ms, this browser's clock). */
  readAt: number;
  connection: Connection;
  /** Why there are no live events (501 on SQS, …). */
  connectionError: ApiError | null;
}

export interface Live {
  get(): LiveState;
  subscribe(listener: () => void): () => void;
  /** Every event, for views that follow one job or one lane. */
  onEvent(listener: (event: LiveEvent) => void): () => void;
  /** Read the lanes again now (after an action), coalesced with one in flight. */
  refresh(): Promise<void>;
  /**
   * Events per second of each RATE_TYPES type over the last full seconds, oldest first,
   * and the seconds they are for; null before the page was following events.
   */
  rates(): { seconds: number[]; series: Array<Array<number | null>> };
  close(): void;
}

/**
 * The dashboard's one event stream and its view of the lanes. Counts are read with
 * GET /lanes: again shortly after events that touch them (at most every 400 ms), and every
 * 5 s regardless, so they stay right where events are missing (SQS, other processes on a
 * Redis adapter without lifecycle events) or were dropped.
 */
export function createLive(api: Api): Live {
  const controller = new AbortController();
  const listeners = new Set<() => void>();
  const eventListeners = new Set<(event: LiveEvent) => void>();
  let state: LiveState = {
    lanes: null,
    error: null,
    readAt: 0,
    connection: "connecting",
    connectionError: null,
  };
  const set = (patch: Partial<LiveState>) => {
    state = { ...state, ...patch };
    for (const listener of listeners) listener();
  };

  let inFlight: Promise<void> | undefined;
  let again = false;
  const read = async (): Promise<void> => {
    try {
      const { lanes } = await api.get<{ lanes: Lane[] }>("lanes", controller.signal);
      set({ lanes, error: null, readAt: Date.now() });
    } catch (error) {
      if (!controller.signal.aborted) set({ error: error as ApiError });
    }
  };
  const refresh = (): Promise<void> => {
    if (inFlight !== undefined) {
      again = true;
      return inFlight;
    }
    inFlight = (async () => {
      do {
        again = false;
        await read();
      } while (again && !controller.signal.aborted);
    })().finally(() => {
      inFlight = undefined;
    });
    return inFlight;
  };

  let eventTimer: ReturnType<typeof setTimeout> | undefined;
  const refreshSoon = () => {
    eventTimer ??= setTimeout(() => {
      eventTimer = undefined;
      void refresh();
    }, EVENT_REFRESH_MS);
  };

  // Per-second counts in a ring indexed by epoch second.
  const ring = RATE_TYPES.map(() => new Array<number>(RATE_WINDOW_S).fill(0));
  let ringSecond = Math.floor(Date.now() / 1000);
  /** The first second followed: seconds before it show no value, rather than a false 0. */
  let liveSince: number | null = null;
  const advance = (second: number) => {
    if (second <= ringSecond) return;
    const steps = Math.min(second - ringSecond, RATE_WINDOW_S);
    for (let s = 1; s <= steps; s++) {
      for (const row of ring) row[(ringSecond + s) % RATE_WINDOW_S] = 0;
    }
    ringSecond = second;
  };

  api.events(
    {
      onEvent(event) {
        const second = Math.floor(Date.now() / 1000);
        advance(second);
        const i = (RATE_TYPES as readonly string[]).indexOf(event.type);
        const row = ring[i];
        if (row !== undefined) row[second % RATE_WINDOW_S] = (row[second % RATE_WINDOW_S] ?? 0) + 1;
        if (event.type !== "dropped") refreshSoon();
        else void refresh();
        for (const listener of eventListeners) listener(event);
      },
      onState(connection, error) {
        // The second the stream opened in is counted too (in part: from then on).
        if (connection === "live") liveSince ??= Math.floor(Date.now() / 1000);
        set({ connection, connectionError: error ?? null });
      },
    },
    controller.signal,
  );
  void refresh();
  const poll = setInterval(() => {
    if (document.visibilityState === "visible") void refresh();
  }, POLL_MS);

  return {
    get: () => state,
    subscribe(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    onEvent(listener) {
      eventListeners.add(listener);
      return () => eventListeners.delete(listener);
    },
    refresh,
    rates() {
      advance(Math.floor(Date.now() / 1000));
      const seconds: number[] = [];
      const series = ring.map(() => [] as Array<number | null>);
      // The current second is still counting: the chart ends at the last full one.
      for (let k = RATE_WINDOW_S - 1; k >= 1; k--) {
        const second = ringSecond - k;
        seconds.push(second);
        const seen = liveSince !== null && second >= liveSince;
        for (const [i, row] of ring.entries()) {
          series[i]?.push(seen ? (row[second % RATE_WINDOW_S] ?? 0) : null);
        }
      }
      return { seconds, series };
    },
    close() {
      controller.abort();
      clearInterval(poll);
      if (eventTimer !== undefined) clearTimeout(eventTimer);
    },
  };
}
