/**
 * The faults a scenario injected (and the crashes it caused, and the stalls the machine's
 * load caused), with when they happened and which worker processes they hit. The checker
 * attributes a duplicate run to a fault only through this log.
 */

export type FaultKind =
  /** kill -9 of a worker process. */
  | "kill"
  /** A worker process ended on its own (a poison pill's exit or self-kill). */
  | "crash"
  /** SIGSTOP of a worker process until `until`, then SIGCONT. */
  | "pause"
  /** Every connection of the worker through its proxy reset. */
  | "drop"
  /** The worker's proxy forwarded nothing from `at` until `until`. */
  | "blackhole"
  /** kill -9 of redis-server, started again at `until` (every worker affected). */
  | "redis-kill"
  /**
   * Not injected, observed: the orchestrator (which runs the fault proxies and fauxqs)
   * could not run, or redis-server did not answer a PING, for a third of a lease or more.
   * On a machine shared with other work this happens; it is reported apart.
   */
  | "stall";

export interface Fault {
  kind: FaultKind;
  /** Epoch ms it began. */
  at: number;
  /** Epoch ms it ended, for faults that last (pause, blackhole, redis-kill). */
  until?: number;
  /** The worker processes it hit, or every one. */
  pids: number[] | "all";
  /** Acknowledged writes may have been lost (redis-server without fsync on every write). */
  lossy?: boolean;
  /** How a crashed process ended (exit code or signal). */
  detail?: string;
}

export interface FaultLog {
  readonly faults: readonly Fault[];
  add(fault: Fault): Fault;
  count(kind: FaultKind): number;
}

export function createFaultLog(): FaultLog {
  const faults: Fault[] = [];
  return {
    faults,
    add(fault) {
      faults.push(fault);
      return fault;
    },
    count(kind) {
      return faults.filter((f) => f.kind === kind).length;
    },
  };
}

/** Whether `fault` hit worker process `pid`. */
export function hits(fault: Fault, pid: number): boolean {
  return fault.pids === "all" || fault.pids.includes(pid);
}
