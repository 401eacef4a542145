/**
 * The orchestrator's side of the worker processes: one slot per worker, each running
 * worker/worker-main.ts in a forked process. A killed or crashed worker is started again
 * at once in its slot, as a supervisor (systemd, Kubernetes) would restart a service;
 * what that costs in duplicate runs and delay is what the scenarios measure.
 */
import { type ChildProcess, fork } from "node:child_process";
import { closeSync, openSync } from "node:fs";
import { join } from "node:path";
import type { FaultLog } from "./faults.ts";
import type { WorkerSpec } from "./worker/worker-spec.ts";

const WORKER_MAIN = new URL("./worker/worker-main.ts", import.meta.url);

export interface WorkerLife {
  slot: number;
  pid: number;
  bornAt: number;
  /** When it was ready (its worker running). */
  readyAt?: number;
  diedAt?: number;
  /** How it ended: "killed", "crashed", "stopped". */
  end?: "killed" | "crashed" | "stopped";
}

export interface StopReport {
  /** Jobs each stopped worker's handlers finished in its lifetime, by pid. */
  done: Map<number, number>;
}

export interface WorkerPool {
  readonly size: number;
  readonly lives: readonly WorkerLife[];
  /** Start every slot's worker; resolves when all are ready. */
  start(): Promise<void>;
  /** The pid in a slot now (undefined while it restarts). */
  pid(slot: number): number | undefined;
  /** kill -9 the slot's worker (logged as a fault), then start a new one in the slot. */
  kill(slot: number): Promise<number>;
  /** SIGSTOP the slot's worker for `ms`, then SIGCONT (logged as a fault). */
  pause(slot: number, ms: number): Promise<number>;
  /** Resolves when no restart is pending (every slot has a ready worker). */
  settled(): Promise<void>;
  /** Stop every worker gracefully (SIGKILL after `graceMs` + 10 s). */
  stop(graceMs: number): Promise<StopReport>;
}

interface Slot {
  child: ChildProcess | undefined;
  starting: Promise<void> | undefined;
}

export function createWorkerPool(options: {
  size: number;
  spec: (slot: number) => WorkerSpec;
  runDir: string;
  faults: FaultLog;
}): WorkerPool {
  const { size, runDir, faults } = options;
  const slots: Slot[] = Array.from({ length: size }, () => ({
    child: undefined,
    starting: undefined,
  }));
  const lives: WorkerLife[] = [];
  const expected = new Set<number>(); // pids we killed or are stopping
  let stopping = false;
  let spawned = 0;

  const spawnIn = (slot: number): Promise<void> => {
    const s = slots[slot] as Slot;
    const logPath = join(runDir, `w${slot}-${spawned++}.log`);
    const log = openSync(logPath, "a");
    const child = fork(WORKER_MAIN, [JSON.stringify(options.spec(slot))], {
      execPath: process.execPath,
      execArgv: ["--conditions=source", "--expose-gc", "--disable-warning=ExperimentalWarning"],
      stdio: ["ignore", log, log, "ipc"],
    });
    closeSync(log);
    const pid = child.pid ?? -1;
    const life: WorkerLife = { slot, pid, bornAt: Date.now() };
    lives.push(life);
    s.child = child;
    child.once("exit", (code, signal) => {
      life.diedAt ??= Date.now();
      if (s.child === child) s.child = undefined;
      if (expected.has(pid)) return;
      // Not asked for: a poison pill (or a bug) ended it. Logged as a crash and restarted.
      life.end = "crashed";
      faults.add({
        kind: "crash",
        at: life.diedAt,
        pids: [pid],
        detail: `${code === null ? signal : `exit ${code}`}, log ${logPath}`,
      });
      if (!stopping) restart(slot);
    });
    const ready = new Promise<void>((resolve, reject) => {
      const onMessage = (message: { type?: string }) => {
        if (message.type !== "ready") return;
        life.readyAt = Date.now();
        child.off("message", onMessage);
        resolve();
      };
      child.on("message", onMessage);
      child.once("exit", (code, signal) => {
        if (life.readyAt === undefined) {
          reject(
            new Error(
              `worker ${slot} (pid ${pid}) exited before it was ready: ${code ?? signal}; see ${logPath}`,
            ),
          );
        }
      });
    });
    return ready;
  };

  const restart = (slot: number) => {
    const s = slots[slot] as Slot;
    const starting = spawnIn(slot).finally(() => {
      if (s.starting === starting) s.starting = undefined;
    });
    s.starting = starting;
    starting.catch(() => {}); // reported by settled()
  };

  const signal = (slot: number): { child: ChildProcess; pid: number } => {
    const child = slots[slot]?.child;
    if (child?.pid === undefined) throw new Error(`no worker in slot ${slot}`);
    return { child, pid: child.pid };
  };

  return {
    size,
    lives,
    async start() {
      await Promise.all(slots.map((_, slot) => spawnIn(slot)));
    },
    pid(slot) {
      return slots[slot]?.child?.pid;
    },
    async kill(slot) {
      const { child, pid } = signal(slot);
      expected.add(pid);
      const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
      const at = Date.now();
      child.kill("SIGKILL");
      faults.add({ kind: "kill", at, pids: [pid] });
      await exited;
      const life = lives.find((l) => l.pid === pid);
      if (life) life.end = "killed";
      if (!stopping) restart(slot);
      return pid;
    },
    async pause(slot, ms) {
      const { child, pid } = signal(slot);
      const at = Date.now();
      child.kill("SIGSTOP");
      await new Promise((resolve) => setTimeout(resolve, ms)); // the fault's length
      child.kill("SIGCONT");
      faults.add({ kind: "pause", at, until: Date.now(), pids: [pid] });
      return pid;
    },
    async settled() {
      for (;;) {
        const pending = slots.map((s) => s.starting).filter((p) => p !== undefined);
        if (pending.length === 0) return;
        await Promise.all(pending);
      }
    },
    async stop(graceMs) {
      stopping = true;
      await Promise.allSettled(slots.map((s) => s.starting));
      const report: StopReport = { done: new Map() };
      await Promise.all(
        slots.map(async (s) => {
          const child = s.child;
          const pid = child?.pid;
          if (child === undefined || pid === undefined) return;
          expected.add(pid);
          const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
          child.on("message", (m: { type?: string; done?: number }) => {
            if (m.type === "stopped") report.done.set(pid, m.done ?? 0);
          });
          child.send({ type: "stop", graceMs });
          const timer = setTimeout(() => child.kill("SIGKILL"), graceMs + 10_000);
          await exited;
          clearTimeout(timer);
          const life = lives.find((l) => l.pid === pid);
          if (life) life.end ??= "stopped";
        }),
      );
      return report;
    },
  };
}
