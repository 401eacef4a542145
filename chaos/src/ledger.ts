/**
 * The ledger: what each worker process did, one JSON line per event, written with
 * `fs.writeSync` as it happens. A line is in the kernel once writeSync returns, so a
 * `kill -9` of the worker loses nothing it wrote; at most the event it was about to write.
 * One file per worker process (`w<slot>-<pid>.jsonl`), so no two processes share a file.
 *
 * Times are epoch ms (Date.now()) in every process: the workers, the orchestrator and
 * redis-server all read the same machine clock, so times compare across files.
 */
import { closeSync, openSync, readdirSync, readFileSync, writeSync } from "node:fs";
import { join } from "node:path";

/** The outcome of one settling or heartbeat call for one lock, as the worker saw it. */
export type CallResult = "ok" | "lost" | "canceled" | "error";

/** What a settling call asked for. */
export type SettleKind = "ack" | "nack" | "dead" | "rel";

export type LedgerEntry =
  /** The process started (before it connects). */
  | { e: "boot"; t: number; slot: number }
  /** Its worker is running. */
  | { e: "ready"; t: number }
  /** A job was handed to this worker: its reserve call left at `s`, the lease ends at `exp`. */
  | { e: "res"; t: number; s: number; id: string; a: number; tok: string; exp: number }
  /** A handler started / finished (ok: it returned rather than threw). */
  | { e: "start"; t: number; id: string; a: number }
  | { e: "fin"; t: number; id: string; a: number; ok: boolean }
  /** A poison pill is about to end this process (`how`: "exit" or "kill"). */
  | { e: "pill"; t: number; id: string; a: number; how: string }
  /** A settling call for one lock left (`runAt` for a retry). */
  | { e: "set"; t: number; k: SettleKind; id: string; tok: string; runAt?: number }
  /** Its answer. */
  | { e: "set="; t: number; k: SettleKind; id: string; tok: string; r: CallResult }
  /** A heartbeat's answer for one lock. */
  | { e: "ext="; t: number; id: string; tok: string; r: CallResult }
  /** The event loop was blocked for `ms` (a timer fired that much late). */
  | { e: "lag"; t: number; ms: number }
  /**
   * process.memoryUsage().heapUsed, bytes, as sampled (garbage included) and, where the
   * process can collect on demand, right after a full collection (`live`: what it holds).
   */
  | { e: "heap"; t: number; used: number; live?: number }
  /** Jobs finished so far (summary mode, where per-job lines are not written). */
  | { e: "count"; t: number; done: number }
  /** An infrastructure error the worker survived. */
  | { e: "err"; t: number; during: string; msg: string }
  /** The worker stopped gracefully. */
  | { e: "stop"; t: number };

export interface LedgerWriter {
  write(entry: LedgerEntry): void;
  /** Several entries in one write(2). */
  writeMany(entries: LedgerEntry[]): void;
  close(): void;
}

export function ledgerFileName(slot: number, pid: number): string {
  return `w${slot}-${pid}.jsonl`;
}

export function openLedger(path: string): LedgerWriter {
  const fd = openSync(path, "a");
  return {
    write(entry) {
      writeSync(fd, `${JSON.stringify(entry)}\n`);
    },
    writeMany(entries) {
      if (entries.length === 0) return;
      let text = "";
      for (const entry of entries) text += `${JSON.stringify(entry)}\n`;
      writeSync(fd, text);
    },
    close() {
      closeSync(fd);
    },
  };
}

/** One worker process's ledger. */
export interface ProcessLedger {
  slot: number;
  pid: number;
  entries: LedgerEntry[];
  /** Lines that did not parse (a torn last line would be one; none is expected). */
  torn: number;
}

export function readLedgerFile(path: string, slot: number, pid: number): ProcessLedger {
  const entries: LedgerEntry[] = [];
  let torn = 0;
  for (const line of readFileSync(path, "utf8").split("\n")) {
    if (line === "") continue;
    try {
      entries.push(JSON.parse(line) as LedgerEntry);
    } catch {
      torn++;
    }
  }
  return { slot, pid, entries, torn };
}

/** Every worker ledger in `dir`. */
export function readLedgers(dir: string): ProcessLedger[] {
  const ledgers: ProcessLedger[] = [];
  for (const name of readdirSync(dir).sort()) {
    const match = /^w(\d+)-(\d+)\.jsonl$/.exec(name);
    if (match === null) continue;
    ledgers.push(readLedgerFile(join(dir, name), Number(match[1]), Number(match[2])));
  }
  return ledgers;
}
