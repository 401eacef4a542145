/**
 * Output: lines written with backpressure (a list streamed into a slow pipe waits for it
 * instead of buffering, so memory stays constant), NDJSON for `--json`, and the human
 * formats (tables, durations, times).
 */
import { once } from "node:events";
import type { Writable } from "node:stream";
import Table from "cli-table3";

export interface LineWriter {
  /** Write one line (a newline is added); resolves when the stream can take more. */
  line(text: string): Promise<void>;
  /** Write one value as a line of JSON (NDJSON). */
  json(value: unknown): Promise<void>;
  /**
   * True once the reader went away (EPIPE: `tasklane jobs list | head`). Loops stop
   * then, and the command ends with exit code 0, as `head` asked for no more.
   */
  readonly closed: boolean;
}

export function createLineWriter(stream: Writable): LineWriter {
  let closed = false;
  // EPIPE (the reader exited) or any other write error: nothing more can be written.
  stream.on("error", () => {
    closed = true;
  });
  const line = async (text: string) => {
    if (closed) return;
    if (!stream.write(`${text}\n`)) {
      // 'drain', or 'error' (EPIPE) / 'close' when the reader is gone
      await Promise.race([once(stream, "drain"), once(stream, "close")]).catch(() => {});
    }
  };
  return {
    line,
    json: (value) => line(JSON.stringify(value)),
    get closed() {
      return closed;
    },
  };
}

const NO_BORDERS = {
  top: "",
  "top-mid": "",
  "top-left": "",
  "top-right": "",
  bottom: "",
  "bottom-mid": "",
  "bottom-left": "",
  "bottom-right": "",
  left: "",
  "left-mid": "",
  mid: "",
  "mid-mid": "",
  right: "",
  "right-mid": "",
  middle: "  ",
};

/** A plain table: a header row, columns two spaces apart, numbers right-aligned. */
export function renderTable(
  head: readonly string[],
  rows: ReadonlyArray<ReadonlyArray<string | number>>,
  align: ReadonlyArray<"left" | "right">,
): string {
  const table = new Table({
    head: [...head],
    chars: NO_BORDERS,
    style: { head: [], border: [], "padding-left": 0, "padding-right": 0 },
    colAligns: [...align],
  });
  for (const row of rows) table.push(row.map(String));
  return table
    .toString()
    .split("\n")
    .map((text) => text.trimEnd())
    .join("\n");
}

/** A duration for people: "0.4 ms", "12 ms", "1.5 s", "2.3 min", "1.2 h", "3.1 d"; "-" for none. */
export function formatDuration(ms: number): string {
  if (!Number.isFinite(ms)) return "-";
  if (ms < 10) return `${round(ms, 1)} ms`;
  if (ms < 1_000) return `${Math.round(ms)} ms`;
  if (ms < 60_000) return `${round(ms / 1_000, 1)} s`;
  if (ms < 3_600_000) return `${round(ms / 60_000, 1)} min`;
  if (ms < 86_400_000) return `${round(ms / 3_600_000, 1)} h`;
  return `${round(ms / 86_400_000, 1)} d`;
}

/** A rate per second: 2 decimals below 10, 1 below 100, none above; "-" for none. */
export function formatRate(perSecond: number | undefined): string {
  if (perSecond === undefined || !Number.isFinite(perSecond)) return "-";
  if (perSecond < 10) return perSecond.toFixed(2);
  if (perSecond < 100) return perSecond.toFixed(1);
  return perSecond.toFixed(0);
}

/** An epoch-ms time as ISO 8601 UTC; "-" for none. */
export function formatTime(atMs: number | undefined): string {
  return atMs === undefined || !Number.isFinite(atMs) ? "-" : new Date(atMs).toISOString();
}

function round(value: number, decimals: number): string {
  return String(Number(value.toFixed(decimals)));
}

/** Text shortened to `max` characters, on one line. */
export function oneLine(text: string, max: number): string {
  const flat = text.replace(/\s+/g, " ").trim();
  return flat.length > max ? `${flat.slice(0, max - 1)}…` : flat;
}
