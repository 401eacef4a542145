/** Figures the scenarios derive from the ledgers and the fault log. */
import type { Fault, FaultKind } from "./faults.ts";
import { type LedgerFacts, outcomeOf, type Reservation } from "./runs.ts";

/** The q-quantile (0..1) of `values` by nearest rank; undefined when empty. */
export function quantile(values: readonly number[], q: number): number | undefined {
  if (values.length === 0) return undefined;
  const sorted = [...values].sort((a, b) => a - b);
  const rank = Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1));
  return sorted[rank];
}

export interface Recovery {
  /** ms from each kill to the start of the next run of each job the killed worker held. */
  samples: number[];
  /** Jobs the killed worker held whose ack had left and that never ran again (acked). */
  notRerun: number;
}

/**
 * Kill -9 recovery: for each fault of `kinds`, every job its process held then (reserved,
 * its lease not over, no answer to a settling call yet) and the time from the fault to
 * the start of that job's next run.
 */
export function recovery(
  facts: LedgerFacts,
  faults: readonly Fault[],
  kinds: FaultKind[],
): Recovery {
  const byPid = new Map<number, Reservation[]>();
  for (const list of facts.jobs.values()) {
    for (const r of list) {
      const mine = byPid.get(r.pid);
      if (mine) mine.push(r);
      else byPid.set(r.pid, [r]);
    }
  }
  const out: Recovery = { samples: [], notRerun: 0 };
  for (const f of faults) {
    if (!kinds.includes(f.kind) || f.pids === "all") continue;
    for (const pid of f.pids) {
      for (const r of byPid.get(pid) ?? []) {
        if (r.at > f.at || r.leaseEnd < f.at) continue;
        const answered = r.settles.some(
          (s) => s.answeredAt !== undefined && s.answeredAt <= f.at && s.result !== "error",
        );
        if (answered) continue;
        const next = (facts.jobs.get(r.id) ?? []).find(
          (n) => n.at > f.at && n.startedAt !== undefined,
        );
        if (next?.startedAt === undefined) out.notRerun++;
        else out.samples.push(next.startedAt - f.at);
      }
    }
  }
  return out;
}

/** Retry lateness: for each accepted retry, the next run's start minus its runAt, ms. */
export function retryLateness(facts: LedgerFacts): number[] {
  const samples: number[] = [];
  for (const list of facts.jobs.values()) {
    for (const [i, r] of list.entries()) {
      const retry = outcomeOf(r).retry;
      if (retry?.runAt === undefined) continue;
      const next = list.slice(i + 1).find((n) => n.startedAt !== undefined);
      if (next?.startedAt !== undefined) samples.push(next.startedAt - retry.runAt);
    }
  }
  return samples;
}

/** Handler starts per job id. */
export function runsOf(facts: LedgerFacts, id: string): number {
  return (facts.jobs.get(id) ?? []).filter((r) => r.startedAt !== undefined).length;
}
