/**
 * Test support: a tasklane client on a real adapter, its management handler served by a
 * real node:http server on a free port of 127.0.0.1, and small readers for JSON, NDJSON
 * and Server-Sent Events answers.
 */
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { createMemoryAdapter } from "@tasklane/adapter-memory";
import {
  type Adapter,
  createTasklane,
  defineTask,
  type Tasklane,
  UnrecoverableError,
} from "@tasklane/core";
import { z } from "zod";
import {
  createManagementHandler,
  type ManagementHandler,
  type ManagementHandlerOptions,
} from "../src/index.ts";
import { createNodeListener } from "../src/mounts/node.ts";

export const sendEmail = defineTask({
  name: "send-email",
  lane: "default",
  schema: z.object({ to: z.email(), subject: z.string().min(1) }),
  run: () => {},
});

/** Fails at once, without retries: its jobs go to the dead letter set. */
export const alwaysFails = defineTask({
  name: "always-fails",
  lane: "default",
  schema: z.object({ n: z.number() }),
  retry: { maxAttempts: 1 },
  run: () => {
    throw new UnrecoverableError("boom");
  },
});

export const report = defineTask({
  name: "report",
  lane: "low",
  schema: z.object({ day: z.string() }),
  run: () => {},
});

export function createClient(adapter: Adapter = createMemoryAdapter()): Tasklane {
  return createTasklane({
    adapter,
    lanes: [
      { name: "high", priority: 100 },
      { name: "default", priority: 40 },
      { name: "low", priority: 5 },
    ],
    tasks: [sendEmail, alwaysFails, report],
  });
}

export interface TestServer {
  url: string;
  handler: ManagementHandler;
  server: Server;
  close(): Promise<void>;
}

/** Serve `handler` (or a new one for `options`) with node:http on a free port. */
export async function serve(
  handlerOrOptions: ManagementHandler | ManagementHandlerOptions,
): Promise<TestServer> {
  const handler =
    typeof handlerOrOptions === "function"
      ? handlerOrOptions
      : createManagementHandler(handlerOrOptions);
  const server = createServer(createNodeListener(handler));
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}${handler.basePath}`,
    handler,
    server,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** A JSON request's status, body and headers. */
export async function call(
  url: string,
  init: { method?: string; body?: unknown; headers?: Record<string, string> } = {},
): Promise<{ status: number; body: Record<string, unknown>; headers: Headers }> {
  const headers: Record<string, string> = { ...init.headers };
  let body: string | undefined;
  if (init.body !== undefined) {
    body = typeof init.body === "string" ? init.body : JSON.stringify(init.body);
    headers["content-type"] ??= "application/json";
  }
  const response = await fetch(url, { method: init.method ?? "GET", headers, body: body ?? null });
  const text = await response.text();
  return {
    status: response.status,
    body: text === "" ? {} : (JSON.parse(text) as Record<string, unknown>),
    headers: response.headers,
  };
}

/** Every line of an NDJSON answer, parsed. */
export async function ndjson(url: string): Promise<Array<Record<string, unknown>>> {
  const response = await fetch(url);
  if (response.status !== 200) throw new Error(`${response.status}: ${await response.text()}`);
  const text = await response.text();
  return text
    .split("\n")
    .filter((line) => line !== "")
    .map((line) => JSON.parse(line) as Record<string, unknown>);
}

export interface SseEvent {
  event: string;
  data: Record<string, unknown>;
}

/** An open event stream: read events one by one, then close it. */
export interface SseClient {
  next(timeoutMs?: number): Promise<SseEvent>;
  /** Read until an event matches, returning it (events before it are skipped). */
  until(match: (e: SseEvent) => boolean, timeoutMs?: number): Promise<SseEvent>;
  close(): void;
}

export async function openSse(
  url: string,
  headers: Record<string, string> = {},
): Promise<SseClient> {
  const controller = new AbortController();
  const response = await fetch(url, { headers, signal: controller.signal });
  if (response.status !== 200 || response.body === null) {
    throw new Error(`${response.status}: ${await response.text()}`);
  }
  const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
  let buffer = "";
  const queued: SseEvent[] = [];
  const readEvent = async (timeoutMs: number): Promise<SseEvent> => {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const ready = queued.shift();
      if (ready) return ready;
      const end = buffer.indexOf("\n\n");
      if (end !== -1) {
        const block = buffer.slice(0, end);
        buffer = buffer.slice(end + 2);
        let event = "message";
        let data = "";
        for (const line of block.split("\n")) {
          if (line.startsWith("event: ")) event = line.slice(7);
          else if (line.startsWith("data: ")) data += line.slice(6);
        }
        if (data !== "") queued.push({ event, data: JSON.parse(data) as Record<string, unknown> });
        continue;
      }
      const left = deadline - Date.now();
      if (left <= 0) throw new Error("timed out waiting for an event");
      let timer: NodeJS.Timeout | undefined;
      const result = await Promise.race([
        reader.read(),
        new Promise<never>((_, reject) => {
          timer = setTimeout(() => reject(new Error("timed out waiting for an event")), left);
        }),
      ]).finally(() => clearTimeout(timer));
      if (result.done) throw new Error("event stream ended");
      buffer += result.value;
    }
  };
  return {
    next: (timeoutMs = 5_000) => readEvent(timeoutMs),
    async until(match, timeoutMs = 5_000) {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const e = await readEvent(Math.max(1, deadline - Date.now()));
        if (match(e)) return e;
      }
    },
    close: () => controller.abort(),
  };
}

/** Poll `check` until it returns a truthy value. */
export async function waitFor<T>(
  check: () => T | Promise<T>,
  what: string,
  timeoutMs = 10_000,
): Promise<NonNullable<T>> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value) return value as NonNullable<T>;
    if (Date.now() > deadline) throw new Error(`Timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

/** Publish `n` jobs of alwaysFails and run a worker until all are in the dead letter set. */
export async function makeFailedJobs(tl: Tasklane, n: number): Promise<string[]> {
  const results = await tl.publishMany(
    alwaysFails,
    Array.from({ length: n }, (_, i) => ({ payload: { n: i } })),
  );
  const worker = tl.worker({ concurrency: 20, lanes: ["default"] });
  await worker.start();
  await waitFor(async () => (await tl.lane("default").counts()).failed >= n, `${n} failed jobs`);
  await worker.stop();
  return results.map((r) => r.id);
}
