/**
 * The checker's rules on hand-written ledgers: each case is a few ledger lines of one or
 * two worker processes, a fault log and the store's final state, as a run would leave them.
 */
import { describe, expect, it } from "vitest";
import { type CheckInput, check, failuresOf, type StoredJob } from "./checker.ts";
import type { Fault } from "./faults.ts";
import type { LedgerEntry, ProcessLedger } from "./ledger.ts";
import { buildFacts } from "./runs.ts";

const LEASE = 2_000;

/** One reservation's lines: reserved at `at`, started at +1, finished at +10, then `end`. */
function run(
  id: string,
  a: number,
  tok: string,
  at: number,
  end: "ack" | "retry" | "none" | "ack-unknown",
  ackResult: "ok" | "lost" = "ok",
): LedgerEntry[] {
  const lines: LedgerEntry[] = [
    { e: "res", t: at, s: at - 1, id, a, tok, exp: at + LEASE },
    { e: "start", t: at + 1, id, a },
  ];
  if (end === "none") return lines;
  lines.push({ e: "fin", t: at + 10, id, a, ok: end !== "retry" });
  if (end === "retry") {
    lines.push(
      { e: "set", t: at + 11, k: "nack", id, tok, runAt: at + 500 },
      { e: "set=", t: at + 12, k: "nack", id, tok, r: "ok" },
    );
  } else {
    lines.push({ e: "set", t: at + 11, k: "ack", id, tok });
    if (end === "ack") lines.push({ e: "set=", t: at + 12, k: "ack", id, tok, r: ackResult });
  }
  return lines;
}

function ledger(pid: number, entries: LedgerEntry[]): ProcessLedger {
  return { slot: 0, pid, entries, torn: 0 };
}

function succeeded(...ids: string[]): Map<string, StoredJob> {
  return new Map(
    ids.map((id) => [id, { states: ["succeeded"], attempt: 1, succeededInHistory: 1 }]),
  );
}

function input(
  ledgers: ProcessLedger[],
  faults: Fault[],
  jobs: Map<string, StoredJob>,
  ids: string[] = ["j1"],
): CheckInput {
  return {
    attempted: new Set(ids),
    acked: new Set(ids),
    facts: buildFacts(ledgers, LEASE),
    faults,
    store: { kind: "jobs", jobs },
    leaseMs: LEASE,
  };
}

describe("checker", () => {
  it("passes a job run once and acked", () => {
    const r = check(input([ledger(1, run("j1", 1, "t1", 1_000, "ack"))], [], succeeded("j1")));
    expect(r.runs).toBe(1);
    expect(r.succeeded).toBe(1);
    expect(r.duplicateRuns).toHaveLength(0);
    expect(failuresOf(r)).toEqual([]);
  });

  it("attributes a re-run to a kill of the earlier run's worker inside its lease", () => {
    const ledgers = [
      ledger(1, run("j1", 1, "t1", 1_000, "none")),
      ledger(2, run("j1", 2, "t2", 3_100, "ack")),
    ];
    const kill: Fault = { kind: "kill", at: 1_500, pids: [1] };
    const r = check(input(ledgers, [kill], succeeded("j1")));
    expect(r.duplicateRuns.map((d) => d.attribution)).toEqual(["kill"]);
    expect(r.unattributed).toHaveLength(0);
    expect(failuresOf(r)).toEqual([]);
  });

  it("does not attribute a re-run to a fault on another worker, or after the lease ended", () => {
    const ledgers = [
      ledger(1, run("j1", 1, "t1", 1_000, "none")),
      ledger(2, run("j1", 2, "t2", 3_100, "ack")),
    ];
    const elsewhere: Fault = { kind: "kill", at: 1_500, pids: [3] };
    const tooLate: Fault = { kind: "drop", at: 3_050, pids: [1] };
    const r = check(input(ledgers, [elsewhere, tooLate], succeeded("j1")));
    expect(r.unattributed).toHaveLength(1);
    expect(failuresOf(r)).toEqual(["1 unattributed duplicate runs: j1"]);
  });

  it("counts an interval fault that overlaps the lease window", () => {
    const ledgers = [
      ledger(1, run("j1", 1, "t1", 1_000, "ack", "lost")),
      ledger(2, run("j1", 2, "t2", 3_100, "ack")),
    ];
    const blackhole: Fault = { kind: "blackhole", at: 500, until: 1_200, pids: [1] };
    const r = check(input(ledgers, [blackhole], succeeded("j1")));
    expect(r.byAttribution).toEqual({ blackhole: 1 });
    expect(r.refused).toBe(1);
  });

  it("blames an observed stall only when no injected fault explains the re-run", () => {
    const ledgers = [
      ledger(1, run("j1", 1, "t1", 1_000, "ack", "lost")),
      ledger(2, run("j1", 2, "t2", 3_100, "ack")),
    ];
    const stall: Fault = { kind: "stall", at: 1_200, until: 2_000, pids: "all" };
    expect(check(input(ledgers, [stall], succeeded("j1"))).byAttribution).toEqual({ stall: 1 });
    const drop: Fault = { kind: "drop", at: 1_011, pids: [1] };
    expect(check(input(ledgers, [stall, drop], succeeded("j1"))).byAttribution).toEqual({
      drop: 1,
    });
  });

  it("orders runs by delivery: a reserve answered after its lease ended, held up by a blackhole", () => {
    // Worker 1's reserve left at 999 and its answer came at 3_563, after the lease it
    // carried (to 3_000) had ended and worker 2 had been handed the job again (attempt 2)
    // and acked it. Worker 1 still ran attempt 1, and its ack was refused.
    const stale: LedgerEntry[] = [
      { e: "res", t: 3_563, s: 999, id: "j1", a: 1, tok: "t1", exp: 3_000 },
      { e: "start", t: 3_580, id: "j1", a: 1 },
      { e: "fin", t: 3_598, id: "j1", a: 1, ok: true },
      { e: "set", t: 3_598, k: "ack", id: "j1", tok: "t1" },
      { e: "set=", t: 3_611, k: "ack", id: "j1", tok: "t1", r: "lost" },
    ];
    const ledgers = [ledger(1, stale), ledger(2, run("j1", 2, "t2", 3_195, "ack"))];
    const blackhole: Fault = { kind: "blackhole", at: 900, until: 3_550, pids: [1] };
    const r = check(input(ledgers, [blackhole], succeeded("j1")));
    expect(r.byAttribution).toEqual({ blackhole: 1 });
    expect(r.staleStarts).toBe(1);
    expect(r.refused).toBe(1);
    expect(check(input(ledgers, [], succeeded("j1"))).unattributed).toHaveLength(1);
  });

  it("orders deliveries of one attempt by their fencing tokens, not by when the answers came", () => {
    // Two workers got the job, attempt 1 both times, in one millisecond: the delivery with
    // the lower token was released, the one with the higher token ran and was acked.
    const released: LedgerEntry[] = [
      { e: "res", t: 1_000, s: 999, id: "j1", a: 1, tok: "200", exp: 1_000 + LEASE },
      { e: "set", t: 1_000, k: "rel", id: "j1", tok: "200" },
      { e: "set=", t: 1_000, k: "rel", id: "j1", tok: "200", r: "ok" },
    ];
    const ran = run("j1", 1, "201", 1_000, "ack");
    const r = check(input([ledger(1, ran), ledger(2, released)], [], succeeded("j1")));
    expect(r.fencingFailures).toEqual([]);
    expect(failuresOf(r)).toEqual([]);
  });

  it("expects a run after an accepted retry", () => {
    const ledgers = [
      ledger(1, [...run("j1", 1, "t1", 1_000, "retry"), ...run("j1", 2, "t2", 1_600, "ack")]),
    ];
    const r = check(input(ledgers, [], succeeded("j1")));
    expect(r.runs).toBe(2);
    expect(r.duplicateRuns).toHaveLength(0);
  });

  it("explains a lost lease by a stalled holder only with a long enough lag", () => {
    const stalled = [
      ledger(1, [...run("j1", 1, "t1", 1_000, "ack", "lost"), { e: "lag", t: 2_900, ms: 1_500 }]),
      ledger(2, run("j1", 2, "t2", 3_100, "ack")),
    ];
    expect(check(input(stalled, [], succeeded("j1"))).byAttribution).toEqual({
      "holder-stall": 1,
    });
    const brief = [
      ledger(1, [...run("j1", 1, "t1", 1_000, "ack", "lost"), { e: "lag", t: 2_900, ms: 120 }]),
      ledger(2, run("j1", 2, "t2", 3_100, "ack")),
    ];
    expect(check(input(brief, [], succeeded("j1"))).unattributed).toHaveLength(1);
  });

  it("finds two accepted acks, in the ledgers and in the stored history", () => {
    const ledgers = [
      ledger(1, run("j1", 1, "t1", 1_000, "ack")),
      ledger(2, run("j1", 2, "t2", 3_100, "ack")),
    ];
    const jobs = new Map<string, StoredJob>([
      ["j1", { states: ["succeeded"], attempt: 2, succeededInHistory: 2 }],
    ]);
    const r = check(input(ledgers, [{ kind: "kill", at: 1_005, pids: [1] }], jobs));
    expect(r.doublyAcked).toEqual(["j1"]);
    expect(r.historyDoubleSucceeded).toEqual(["j1"]);
  });

  it("finds a late ack accepted, and one accepted after a newer reservation", () => {
    const late: LedgerEntry[] = [
      { e: "res", t: 1_000, s: 999, id: "j1", a: 1, tok: "t1", exp: 3_000 },
      { e: "start", t: 1_001, id: "j1", a: 1 },
      { e: "set", t: 3_500, k: "ack", id: "j1", tok: "t1" },
      { e: "set=", t: 3_501, k: "ack", id: "j1", tok: "t1", r: "ok" },
    ];
    const r1 = check(input([ledger(1, late)], [], succeeded("j1")));
    expect(r1.fencingFailures.map((f) => f.why)).toEqual(["late"]);

    const superseded: LedgerEntry[] = [
      { e: "res", t: 1_000, s: 999, id: "j1", a: 1, tok: "t1", exp: 3_000 },
      { e: "ext=", t: 2_000, id: "j1", tok: "t1", r: "ok" },
      { e: "set", t: 2_500, k: "ack", id: "j1", tok: "t1" },
      { e: "set=", t: 2_501, k: "ack", id: "j1", tok: "t1", r: "ok" },
    ];
    const newer: LedgerEntry[] = [
      { e: "res", t: 2_400, s: 2_399, id: "j1", a: 2, tok: "t2", exp: 4_400 },
    ];
    const r2 = check(input([ledger(1, superseded), ledger(2, newer)], [], succeeded("j1")));
    expect(r2.fencingFailures.map((f) => f.why)).toEqual(["superseded"]);
    expect(failuresOf(r2)[0]).toMatch(/fencing failures/);
  });

  it("counts a refused late ack as fencing working", () => {
    const lines: LedgerEntry[] = [
      { e: "res", t: 1_000, s: 999, id: "j1", a: 1, tok: "t1", exp: 3_000 },
      { e: "set", t: 3_500, k: "ack", id: "j1", tok: "t1" },
      { e: "set=", t: 3_501, k: "ack", id: "j1", tok: "t1", r: "lost" },
    ];
    const r = check(input([ledger(1, lines)], [], succeeded("j1")));
    expect(r.lateRefused).toBe(1);
    expect(r.fencingFailures).toHaveLength(0);
  });

  it("calls a job lost when the store does not have it, or has it pending", () => {
    const missing = check(input([], [], new Map(), ["j1"]));
    expect(missing.lost).toEqual(["j1"]);
    const pending = check(
      input([], [], new Map([["j1", { states: ["waiting"], attempt: 0, succeededInHistory: 0 }]])),
    );
    expect(pending.lost).toEqual(["j1"]);
    expect(pending.notExactlyOneTerminal).toEqual(["j1"]);
    const twice = check(
      input(
        [],
        [],
        new Map([["j1", { states: ["waiting", "succeeded"], attempt: 1, succeededInHistory: 1 }]]),
      ),
    );
    expect(twice.notExactlyOneTerminal).toEqual(["j1"]);
  });

  it("finds a run of a job nobody published", () => {
    const r = check(input([ledger(1, run("ghost", 1, "t1", 1_000, "ack"))], [], succeeded("j1")));
    expect(r.unexpected).toEqual(["ghost"]);
  });

  it("attributes a re-run after an accepted ack only to a lossy redis-server crash", () => {
    const ledgers = [
      ledger(1, run("j1", 1, "t1", 1_000, "ack")),
      ledger(2, run("j1", 2, "t2", 5_000, "ack")),
    ];
    const lossy: Fault = { kind: "redis-kill", at: 2_000, until: 2_500, pids: "all", lossy: true };
    expect(check(input(ledgers, [lossy], succeeded("j1"))).byAttribution).toEqual({
      "lost-write": 1,
    });
    const fsynced: Fault = { ...lossy, lossy: false };
    expect(check(input(ledgers, [fsynced], succeeded("j1"))).unattributed).toHaveLength(1);
  });

  it("on SQS, counts a job done by its accepted ack, or by a lost answer once the queue is empty", () => {
    const ledgers = [
      ledger(1, [...run("j1", 1, "t1", 1_000, "ack"), ...run("j2", 1, "t2", 1_000, "ack-unknown")]),
    ];
    const base = {
      attempted: new Set(["j1", "j2", "j3"]),
      acked: new Set(["j1", "j2", "j3"]),
      facts: buildFacts(ledgers, LEASE),
      faults: [],
      leaseMs: LEASE,
    };
    const empty = { waiting: 0, delayed: 0, active: 0, failed: 0, succeeded: 0, canceled: 0 };
    const r = check({ ...base, store: { kind: "counts", counts: empty } });
    expect(r.succeeded).toBe(2);
    expect(r.presumedDone).toBe(1);
    expect(r.lost).toEqual(["j3"]);
  });

  it("on SQS, counts a job in the dead-letter queue dead, and one also acked in two terminal states", () => {
    // j2: stalled too often, dead-lettered by the adapter when received (no ledger shows it).
    const ledgers = [
      ledger(1, [...run("j1", 1, "t1", 1_000, "ack"), ...run("j2", 1, "t2", 1_000, "none")]),
    ];
    const base = {
      attempted: new Set(["j1", "j2"]),
      acked: new Set(["j1", "j2"]),
      facts: buildFacts(ledgers, LEASE),
      faults: [{ kind: "crash" as const, at: 1_005, pids: [1] }],
      leaseMs: LEASE,
    };
    const empty = { waiting: 0, delayed: 0, active: 0, failed: 1, succeeded: 0, canceled: 0 };
    const ok = check({
      ...base,
      store: { kind: "counts", counts: empty, deadLetters: new Map([["j2", "stalled"]]) },
    });
    expect(ok.lost).toEqual([]);
    expect(ok.dead).toBe(1);
    expect(ok.deadByReason).toEqual({ stalled: 1 });
    expect(ok.notExactlyOneTerminal).toEqual([]);
    const both = check({
      ...base,
      store: {
        kind: "counts",
        counts: empty,
        deadLetters: new Map([
          ["j1", "stalled"],
          ["j2", "stalled"],
        ]),
      },
    });
    expect(both.notExactlyOneTerminal).toEqual(["j1"]);
  });
});
