import { createSeededRandom } from "@tasklane/core";
import type { DependencyPolicy, LaneStore, ReservedJob } from "@tasklane/core/adapter";
import { describe, expect, it } from "vitest";
import { createManualClock, createMemoryAdapter } from "../src/index.ts";
import { job, START } from "./helpers.ts";

/** A parent as the test's model sees it. */
interface ModelParent {
  id: string;
  lane: string;
  deps: Array<{ lane: string; id: string; policy: DependencyPolicy }>;
  /** The first end of each dependency, in order of arrival. */
  ends: Map<number, string>;
  state: "blocked" | "due" | "failed" | "ran";
}

const POLICIES: DependencyPolicy[] = ["fail", "ignore", "continue"];
const LANES = ["a", "b", "c"];

/**
 * Random flows over three lanes (children anywhere, some dependencies put earlier and
 * some already ended), children ended at random (ack, nack dead, cancel, delete, a retry
 * of a failed one that then succeeds): after every step each parent's state is the one a
 * model computes from the first end of each of its dependencies, and no parent is ever
 * handed out while the model has it blocked.
 */
describe("flows, random operations against a model", () => {
  for (const seed of [1, 2, 3, 4, 5, 6, 7, 8]) {
    it(`seed ${seed}`, async () => {
      const random = createSeededRandom(seed);
      const pick = <T>(xs: readonly T[]): T => xs[Math.floor(random() * xs.length)] as T;
      const clock = createManualClock(START);
      const adapter = createMemoryAdapter({ clock });
      const lanes = new Map<string, LaneStore>();
      for (const name of LANES) {
        lanes.set(name, await adapter.lane(name, { maxStalls: 1, historyLimit: 5 }));
      }
      const lane = (name: string) => lanes.get(name) as LaneStore;
      const parents = new Map<string, ModelParent>();
      /**
       * Children by id: their lane, how they ended (undefined while pending: again after a
       * retry) and who waits for them.
       */
      const children = new Map<
        string,
        { lane: string; end: string | undefined; waiters: string[] }
      >();
      let n = 0;

      const apply = (childId: string, end: string) => {
        const child = children.get(childId);
        if (child === undefined) return;
        child.end = end;
        for (const pid of child.waiters) {
          const p = parents.get(pid) as ModelParent;
          p.deps.forEach((d, i) => {
            if (d.id !== childId || p.ends.has(i)) return;
            p.ends.set(i, end);
            if (p.state !== "blocked") return;
            const failed = end !== "succeeded";
            if (failed && d.policy === "fail") p.state = "failed";
            else if ((failed && d.policy === "continue") || p.ends.size === p.deps.length) {
              p.state = "due";
            }
          });
        }
      };

      const newFlow = async () => {
        const parentLane = pick(LANES);
        const pid = `p${n++}`;
        const deps: ModelParent["deps"] = [];
        const items = [];
        const count = 1 + Math.floor(random() * 3);
        for (let i = 0; i < count; i++) {
          // a deleted job is gone: a dependency on it would be missing
          const known = [...children].filter(([, c]) => c.end !== "deleted").map(([id]) => id);
          if (known.length > 0 && random() < 0.3) {
            // a dependency put earlier (maybe ended already)
            const id = pick(known);
            if (deps.some((d) => d.id === id)) continue;
            deps.push({ lane: children.get(id)?.lane as string, id, policy: pick(POLICIES) });
            continue;
          }
          const cid = `c${n++}`;
          const cl = pick(LANES);
          children.set(cid, { lane: cl, end: undefined, waiters: [] });
          items.push({ lane: lane(cl), job: job(cid, { priority: Math.floor(random() * 3) }) });
          deps.push({ lane: cl, id: cid, policy: pick(POLICIES) });
        }
        items.push({
          lane: lane(parentLane),
          job: job(pid, {
            priority: 5,
            dependsOn: deps.map((d) => ({ ...d, onFailure: d.policy })),
          }),
        });
        expect(await adapter.putFlow(items)).toEqual({ status: "created" });
        const p: ModelParent = {
          id: pid,
          lane: parentLane,
          deps,
          ends: new Map(),
          state: "blocked",
        };
        parents.set(pid, p);
        for (const d of deps) children.get(d.id)?.waiters.push(pid);
        // dependencies that had ended count at once, in order
        deps.forEach((d) => {
          const end = children.get(d.id)?.end;
          if (end === undefined) return;
          // the model's apply works per child: replay this parent alone
          const i = deps.indexOf(d);
          if (p.ends.has(i)) return;
          p.ends.set(i, end);
          if (p.state !== "blocked") return;
          const failed = end !== "succeeded";
          if (failed && d.policy === "fail") p.state = "failed";
          else if ((failed && d.policy === "continue") || p.ends.size === deps.length)
            p.state = "due";
        });
      };

      const takeSome = async () => {
        const l = lane(pick(LANES));
        const { jobs } = await l.reserve({ limit: 2, leaseMs: 60_000, waitMs: 0 });
        const acks: ReservedJob[] = [];
        for (const j of jobs) {
          const p = parents.get(j.id);
          if (p !== undefined) {
            expect(p.state, `parent ${j.id} handed out`).toBe("due");
            p.state = "ran";
            acks.push(j);
            continue;
          }
          if (random() < 0.7) {
            acks.push(j);
            apply(j.id, "succeeded");
          } else {
            const error = { name: "Error", message: "x", reason: "error" as const };
            expect(await l.nack([{ lock: j.lock, dead: true, error }])).toEqual(["ok"]);
            apply(j.id, "failed");
          }
        }
        if (acks.length > 0) await l.ack(acks.map((j) => j.lock));
      };

      const endByHand = async () => {
        const pending = [...children].filter(([, c]) => c.end === undefined);
        if (pending.length === 0) return;
        const [id, c] = pick(pending);
        const l = lane(c.lane);
        const info = await l.get?.(id);
        if (info?.state !== "waiting") return;
        if (random() < 0.5) {
          expect(await l.cancel?.([id])).toEqual(["canceled"]);
          apply(id, "canceled");
        } else {
          expect(await l.delete?.([id])).toBe(1);
          apply(id, "deleted");
        }
      };

      const retryOne = async () => {
        const failed = [...children].filter(([, c]) => c.end === "failed");
        if (failed.length === 0) return;
        const [id, c] = pick(failed);
        // pending again: the parents that counted its failure keep it; a parent linked
        // from now on waits for its next end
        expect(await lane(c.lane).retryFailed?.([id])).toBe(1);
        c.end = undefined;
      };

      for (let step = 0; step < 150; step++) {
        const r = random();
        if (r < 0.25) await newFlow();
        else if (r < 0.75) await takeSome();
        else if (r < 0.9) await endByHand();
        else await retryOne();
        for (const p of parents.values()) {
          const state = (await lane(p.lane).get?.(p.id))?.state;
          const expected = {
            blocked: "blocked",
            due: "waiting",
            failed: "failed",
            ran: "succeeded",
          }[p.state];
          expect(state, `parent ${p.id} after step ${step} (seed ${seed})`).toBe(expected);
        }
      }
      await adapter.close();
    });
  }
});
