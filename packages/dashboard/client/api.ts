import type { PageConfig } from "./config.ts";
import type { LiveEvent } from "./types.ts";

/** An error answer of the API, or a network failure (status 0). */
export class ApiError extends Error {
  readonly status: number;
  readonly code: string;
  readonly capability: string | undefined;
  constructor(status: number, code: string, message: string, capability?: string) {
    super(message);
    this.name = "ApiError";
    this.status = status;
    this.code = code;
    this.capability = capability;
  }
}

export interface Api {
  /** The API's base URL (ends with a slash). */
  readonly base: URL;
  readonly auth: PageConfig["auth"];
  /** The token kept for this tab, if the auth is by token. */
  token(): string | null;
  setToken(token: string | null): void;
  get<T>(path: string, signal?: AbortSignal): Promise<T>;
  send<T>(method: "POST" | "DELETE", path: string, body?: unknown): Promise<T>;
  /**
   * Read an NDJSON list line by line; `onItem` returns false to stop, and the request is
   * then aborted, so the server stops reading the backend too (its list is pulled). A
   * list's `{"next": …}` line is handed on like the others.
   */
  lines<T>(
    path: string,
    onItem: (item: T) => boolean | undefined,
    signal?: AbortSignal,
  ): Promise<void>;
  /** Follow GET /events until `signal` aborts, reconnecting with back-off. */
  events(handlers: EventHandlers, signal: AbortSignal): void;
}

export interface EventHandlers {
  onEvent(event: LiveEvent): void;
  /** `live` once subscribed, `retrying` between attempts; `unavailable` stops (501, 401). */
  onState(state: "connecting" | "live" | "retrying" | "unavailable", error?: ApiError): void;
}

/** The API's relative paths (`lanes/x`) resolve under its base, wherever it is mounted. */
export function createApi(config: PageConfig): Api {
  const base = new URL(config.api, window.location.href);
  base.hash = "";
  base.search = "";
  const tokenKey = `tasklane-dashboard:token:${base.pathname}`;
  const auth = config.auth;

  const headers = (extra: Record<string, string> = {}): Record<string, string> => {
    const h: Record<string, string> = { accept: "application/json", ...extra };
    const token = api.token();
    if (auth.kind === "token" && token !== null) {
      h[auth.header] = auth.scheme === "" ? token : `${auth.scheme} ${token}`;
    }
    return h;
  };

  const request = async (path: string, init: RequestInit): Promise<Response> => {
    let response: Response;
    try {
      // Same origin: cookies go along (cookie auth), and the browser's Sec-Fetch-Site:
      // same-origin is what the API's CSRF check lets writes through on.
      response = await fetch(new URL(path, base), { credentials: "same-origin", ...init });
    } catch (error) {
      if ((error as Error).name === "AbortError") throw error;
      throw new ApiError(0, "NETWORK", "The API cannot be reached");
    }
    if (!response.ok) throw await toError(response);
    return response;
  };

  const api: Api = {
    base,
    auth,
    token: () => (auth.kind === "token" ? sessionStorage.getItem(tokenKey) : null),
    setToken(token) {
      if (token === null) sessionStorage.removeItem(tokenKey);
      else sessionStorage.setItem(tokenKey, token);
    },
    async get(path, signal) {
      const response = await request(path, { headers: headers(), signal: signal ?? null });
      return (await response.json()) as never;
    },
    async send(method, path, body) {
      const init: RequestInit = { method, headers: headers() };
      if (body !== undefined) {
        init.headers = headers({ "content-type": "application/json" });
        init.body = JSON.stringify(body);
      }
      const response = await request(path, init);
      const text = await response.text();
      return (text === "" ? {} : JSON.parse(text)) as never;
    },
    async lines(path, onItem, signal) {
      const controller = new AbortController();
      const stop = () => controller.abort();
      signal?.addEventListener("abort", stop, { once: true });
      try {
        const response = await request(path, {
          headers: headers({ accept: "application/x-ndjson" }),
          signal: controller.signal,
        });
        if (response.body === null) return;
        const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
        let buffer = "";
        for (;;) {
          const { done, value } = await reader.read();
          if (done) break;
          buffer += value;
          let newline = buffer.indexOf("\n");
          while (newline !== -1) {
            const line = buffer.slice(0, newline);
            buffer = buffer.slice(newline + 1);
            newline = buffer.indexOf("\n");
            if (line === "") continue;
            const item = JSON.parse(line) as {
              id?: string;
              error?: { code: string; message: string };
            };
            // A failure after the answer started comes as a last line of its own (with the
            // `next` cursor to go on from, where the list has one): not a job.
            if (item.error !== undefined && item.id === undefined) {
              throw new ApiError(503, item.error.code, item.error.message);
            }
            if (onItem(item as never) === false) {
              await reader.cancel();
              return;
            }
          }
        }
      } finally {
        signal?.removeEventListener("abort", stop);
        controller.abort();
      }
    },
    events(handlers, signal) {
      void followEvents(handlers, signal);
    },
  };

  /**
   * Server-Sent Events read with fetch, not EventSource: EventSource cannot send the
   * token header. Reconnects after 1, 2, 4 … 30 s; stops on 401/403/501.
   */
  const followEvents = async (handlers: EventHandlers, signal: AbortSignal) => {
    let delayMs = 1_000;
    while (!signal.aborted) {
      handlers.onState("connecting");
      try {
        const response = await request("events", {
          headers: headers({ accept: "text/event-stream" }),
          signal,
        });
        if (response.body === null) throw new ApiError(0, "NETWORK", "No event stream");
        const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
        let buffer = "";
        for (;;) {
          const { done, value } = await reader.read();
          if (done) break;
          buffer += value;
          let end = buffer.indexOf("\n\n");
          while (end !== -1) {
            const block = buffer.slice(0, end);
            buffer = buffer.slice(end + 2);
            end = buffer.indexOf("\n\n");
            let type = "message";
            let data = "";
            for (const line of block.split("\n")) {
              if (line.startsWith("event: ")) type = line.slice(7);
              else if (line.startsWith("data: ")) data += line.slice(6);
            }
            if (data === "") continue;
            if (type === "ready") {
              handlers.onState("live");
              delayMs = 1_000;
              continue;
            }
            handlers.onEvent({ ...(JSON.parse(data) as object), type } as LiveEvent);
          }
        }
      } catch (error) {
        if (signal.aborted) return;
        if (error instanceof ApiError && [401, 403, 501].includes(error.status)) {
          handlers.onState("unavailable", error);
          return;
        }
      }
      if (signal.aborted) return;
      handlers.onState("retrying");
      await new Promise((resolve) => setTimeout(resolve, delayMs));
      delayMs = Math.min(delayMs * 2, 30_000);
    }
  };

  return api;
}

async function toError(response: Response): Promise<ApiError> {
  try {
    const body = (await response.json()) as {
      code?: string;
      message?: string;
      capability?: string;
    };
    return new ApiError(
      response.status,
      body.code ?? `HTTP_${response.status}`,
      body.message ?? response.statusText,
      body.capability,
    );
  } catch {
    return new ApiError(response.status, `HTTP_${response.status}`, response.statusText);
  }
}
