import type { SQSClient } from "@aws-sdk/client-sqs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createSqsAdapter } from "../src/index.ts";
import {
  type FaultProxy,
  job,
  type SqsServer,
  sqsClient,
  startFaultProxy,
  startSqs,
  uniqueName,
  waitFor,
} from "./helpers.ts";

let server: SqsServer;
beforeAll(async () => {
  server = await startSqs();
});
afterAll(() => server.stop());

const laneOptions = { maxStalls: 5, historyLimit: 10 };

describe("through a proxy that throttles and fails requests", () => {
  let proxy: FaultProxy;
  let client: SQSClient;

  beforeAll(async () => {
    // Every 3rd request of each write action is throttled, every 4th gets a 503, and every
    // 7th is carried out by SQS but its answer is lost (a 500 after the fact).
    proxy = await startFaultProxy(server.endpoint, (action, n) => {
      if (action === "CreateQueue" || action === "GetQueueUrl") return undefined;
      if (n % 7 === 0) return "lost-response";
      if (n % 3 === 0) return "throttle";
      if (n % 4 === 0) return "unavailable";
      return undefined;
    });
    client = sqsClient(proxy.endpoint, 10);
  });
  afterAll(async () => {
    client.destroy();
    await proxy.close();
  });

  it("loses no job: batches are retried, at-least-once is kept", async () => {
    const adapter = createSqsAdapter({ client });
    const lane = await adapter.lane(uniqueName("faults"), laneOptions);
    const ids = Array.from({ length: 120 }, (_, i) => `job-${i}`);
    // 120 concurrent single puts: coalesced into batches, each retried through faults.
    await Promise.all(ids.map((id) => lane.put([job(id)])));
    const done = new Set<string>();
    let deliveries = 0;
    await waitFor(
      async () => {
        // A lease long enough for a reserve and its ack on a loaded machine: with 1 s the
        // loop once ran out its 40 s under a full test run beside a mutation run (likely
        // leases ending between reserve and ack, so acks came back "lost").
        const { jobs } = await lane.reserve({ limit: 10, leaseMs: 3000, waitMs: 200 });
        deliveries += jobs.length;
        const statuses = await lane.ack(jobs.map((j) => j.lock));
        jobs.forEach((j, i) => {
          if (statuses[i] === "ok") done.add(j.id);
        });
        return ids.every((id) => done.has(id));
      },
      40_000,
      0,
    );
    expect(done.size).toBe(120);
    expect(deliveries).toBeGreaterThanOrEqual(120);
    expect(proxy.injected.SendMessageBatch ?? 0).toBeGreaterThan(0);
    expect(proxy.injected.ReceiveMessage ?? 0).toBeGreaterThan(0);
    expect(proxy.injected.DeleteMessageBatch ?? 0).toBeGreaterThan(0);
    await adapter.close();
  }, 60_000);

  it("heartbeats and retries survive faults too", async () => {
    const adapter = createSqsAdapter({ client });
    const lane = await adapter.lane(uniqueName("faults"), laneOptions);
    await lane.put([job("a"), job("b")]);
    // Short lease: a receive whose answer the proxy loses hides its messages that long.
    const got = await waitFor(async () => {
      const { jobs } = await lane.reserve({ limit: 10, leaseMs: 2000, waitMs: 200 });
      return jobs.length > 0 ? jobs : undefined;
    });
    for (let i = 0; i < 6; i++) {
      expect(
        await lane.extend(
          got.map((j) => j.lock),
          30_000,
        ),
      ).toEqual(got.map(() => "ok"));
    }
    const error = { name: "E", message: "m", reason: "error" as const };
    expect(await lane.nack(got.map((j) => ({ lock: j.lock, runAt: Date.now(), error })))).toEqual(
      got.map(() => "ok"),
    );
    await adapter.close();
  }, 30_000);
});

describe("per-entry failures inside a batch response", () => {
  it("retries entries that failed on SQS's side, and reports the sender's faults per job", async () => {
    let mode: "entry-failed" | "entry-rejected" = "entry-failed";
    // The first SendMessageBatch and DeleteMessageBatch of each mode lose their last entry.
    const proxy = await startFaultProxy(server.endpoint, (action, n) =>
      (action === "SendMessageBatch" || action === "DeleteMessageBatch") && n % 2 === 1
        ? mode
        : undefined,
    );
    const client = sqsClient(proxy.endpoint, 3);
    const errors: Error[] = [];
    const adapter = createSqsAdapter({ client, onError: (e) => errors.push(e) });
    const lane = await adapter.lane(uniqueName("entries"), laneOptions);
    const ids = Array.from({ length: 10 }, (_, i) => `e${i}`);
    await lane.put(ids.map((id) => job(id)));
    expect(proxy.injected.SendMessageBatch).toBe(1);
    const got = new Set<string>();
    await waitFor(async () => {
      const { jobs } = await lane.reserve({ limit: 10, leaseMs: 30_000, waitMs: 200 });
      const statuses = await lane.ack(jobs.map((j) => j.lock));
      expect(statuses).toEqual(jobs.map(() => "ok"));
      for (const j of jobs) got.add(j.id);
      return got.size === 10;
    });
    expect(proxy.injected.DeleteMessageBatch).toBeGreaterThanOrEqual(1);
    // Not retryable: the put says which job was not written (the others were).
    mode = "entry-rejected";
    const failing = lane.put([job("r1"), job("r2"), job("r3")]);
    await expect(failing).rejects.toMatchObject({
      code: "ADAPTER",
      failures: [expect.stringMatching(/^r3: InvalidParameterValue/)],
    });
    const left = await waitFor(
      async () => (await lane.reserve({ limit: 10, leaseMs: 30_000, waitMs: 200 })).jobs,
    );
    expect(left.map((j) => j.id).sort()).toEqual(["r1", "r2"]);
    expect(errors).toEqual([]);
    await adapter.close();
    client.destroy();
    await proxy.close();
  });
});

describe("a backend that keeps failing", () => {
  it("a long-polling reserve throws AdapterError instead of spinning", async () => {
    const proxy = await startFaultProxy(server.endpoint, (action) =>
      action === "ReceiveMessage" ? "unavailable" : undefined,
    );
    const client = sqsClient(proxy.endpoint, 1);
    const errors: Error[] = [];
    const adapter = createSqsAdapter({ client, onError: (e) => errors.push(e) });
    const lane = await adapter.lane(uniqueName("down"), laneOptions);
    const reserve = (waitMs: number) => lane.reserve({ limit: 10, leaseMs: 30_000, waitMs });
    await expect(reserve(0)).rejects.toMatchObject({ code: "ADAPTER" });
    const started = Date.now();
    await expect(reserve(5000)).rejects.toMatchObject({ code: "ADAPTER" });
    expect(Date.now() - started).toBeLessThan(2000);
    expect(proxy.seen.ReceiveMessage).toBeLessThanOrEqual(4);
    expect(errors).toEqual([]);
    await adapter.close();
    client.destroy();
    await proxy.close();
  });
});

describe("a worker killed mid-job", () => {
  it("the message reappears after its visibility timeout and completes elsewhere", async () => {
    const clientA = sqsClient(server.endpoint);
    const clientB = sqsClient(server.endpoint);
    const name = uniqueName("killed");
    const a = createSqsAdapter({ client: clientA });
    const b = createSqsAdapter({ client: clientB });
    const qa = await a.lane(name, laneOptions);
    const qb = await b.lane(name, laneOptions);
    await qa.put([job("k")]);
    // Worker A takes the job with a 1 s lease, then "dies": no ack, no heartbeat, and its
    // process (client and adapter) goes away.
    const [taken] = (await qa.reserve({ limit: 1, leaseMs: 1000, waitMs: 0 })).jobs;
    expect(taken?.id).toBe("k");
    clientA.destroy();
    // Worker B sees nothing while A's lease runs, then gets the job with attempt 2.
    expect((await qb.reserve({ limit: 1, leaseMs: 30_000, waitMs: 0 })).jobs).toEqual([]);
    const again = await waitFor(
      async () => (await qb.reserve({ limit: 1, leaseMs: 30_000, waitMs: 500 })).jobs[0],
      5000,
    );
    expect(again).toMatchObject({ id: "k", attempt: 2 });
    expect(await qb.ack([again.lock])).toEqual(["ok"]);
    // A zombie A coming back cannot complete it: its lease is gone.
    expect(await qa.ack([taken!.lock])).toEqual(["lost"]);
    await a.close();
    await b.close();
    clientB.destroy();
  }, 15_000);
});
