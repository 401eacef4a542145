import type { Adapter, Clock } from "@tasklane/core";
import type { LaneStore } from "@tasklane/core/adapter";

/** What `runConformanceSuite` takes: the adapter under test and how its time passes. */
export interface ConformanceOptions {
  /** Title of the top-level describe block, e.g. "redis". */
  name: string;
  /**
   * Make a fresh adapter. Called once per suite (beforeAll) and again by the tests that
   * close an adapter. Every test opens its own lane under a unique name.
   */
  createAdapter(): Promise<Adapter>;
  /**
   * Move the adapter's time forward by `ms`. Given for adapters on a manual clock (memory);
   * omitted for real backends, where the suite waits in real time with short leases.
   */
  advance?(ms: number): Promise<void>;
  /** Time source matching the adapter's clock, epoch ms. Default Date.now. */
  now?(): number;
  /** The clock to hand to createTasklane in worker tests (the adapter's manual clock). */
  clock?: Clock;
  /**
   * How many reserve calls are blocked in a long poll now, as the backend sees them: on
   * `lane` at least (an adapter that can only count across all its lanes, or across the
   * server, may do so: the suite compares with a count taken just before it polls). The
   * long-poll tests wait for this count to rise instead of sleeping, so a put or an abort
   * reaches a poll that really waits. A test hook: read it from state the adapter or the
   * server keeps anyway (memory: its waiters; Redis: CLIENT LIST; SQS: receives with a
   * wait time in flight), never by adding work to a production path.
   */
  waitingPolls(lane: LaneStore): Promise<number>;
}
