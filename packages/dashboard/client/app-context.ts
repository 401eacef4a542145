import { createContext } from "preact";
import { useContext, useEffect, useState } from "preact/hooks";
import type { Api, ApiError } from "./api.ts";
import type { Can } from "./capabilities.ts";
import type { Live, LiveState } from "./live.ts";
import type { Info } from "./types.ts";

export interface ConfirmRequest {
  title: string;
  body: string;
  confirm: string;
  /** A destructive action: its button is red, and Cancel has the focus. */
  danger?: boolean;
}

/** What every view reaches: the API, what it can do, the live lanes, dialogs, notices. */
export interface AppCtx {
  api: Api;
  info: Info;
  can: Can;
  live: Live;
  confirm(request: ConfirmRequest): Promise<boolean>;
  /** A short message in the status area (announced to screen readers). */
  notify(message: string, kind?: "ok" | "error"): void;
}

export const AppContext = createContext<AppCtx | null>(null);

export function useApp(): AppCtx {
  const ctx = useContext(AppContext);
  if (ctx === null) throw new Error("useApp outside the app");
  return ctx;
}

export function useLive(): LiveState {
  const { live } = useApp();
  const [, setVersion] = useState(0);
  useEffect(() => live.subscribe(() => setVersion((n) => n + 1)), [live]);
  return live.get();
}

/** Re-render every `ms` (relative times). */
export function useTick(ms: number): number {
  const [now, setNow] = useState(Date.now());
  useEffect(() => {
    const timer = setInterval(() => setNow(Date.now()), ms);
    return () => clearInterval(timer);
  }, [ms]);
  return now;
}

export interface AsyncState<T> {
  data: T | undefined;
  error: ApiError | undefined;
  loading: boolean;
  reload(): void;
}

/** Load with `load` whenever `deps` change; the previous load is aborted. Keeps old data while reloading (no flicker). */
export function useAsync<T>(
  load: (signal: AbortSignal) => Promise<T>,
  deps: unknown[],
): AsyncState<T> {
  const [state, setState] = useState<{ data?: T; error?: ApiError; loading: boolean }>({
    loading: true,
  });
  const [generation, setGeneration] = useState(0);
  const bump = () => setGeneration((n) => n + 1);
  useEffect(() => {
    const controller = new AbortController();
    setState((s) => ({ ...s, loading: true }));
    load(controller.signal).then(
      (data) => {
        if (!controller.signal.aborted) setState({ data, loading: false });
      },
      (error: ApiError) => {
        if (!controller.signal.aborted) setState((s) => ({ ...s, error, loading: false }));
      },
    );
    return () => controller.abort();
  }, [...deps, generation]);
  return { data: state.data, error: state.error, loading: state.loading, reload: bump };
}

/**
 * `api.get(path)`, read again every `everyMs`, while the adapter can serve it (`why` is
 * null, as `can()` answers); without the capability: `empty`, and no request at all, so
 * the page never calls an endpoint that would answer 501.
 */
export function usePolledGet<T>(
  path: string,
  why: string | null,
  empty: T,
  everyMs: number,
): AsyncState<T> {
  const { api } = useApp();
  const result = useAsync(
    (signal) => (why === null ? api.get<T>(path, signal) : Promise.resolve(empty)),
    [why, path],
  );
  useEffect(() => {
    if (why !== null) return;
    const timer = setInterval(result.reload, everyMs);
    return () => clearInterval(timer);
  }, [why, everyMs]);
  return result;
}
