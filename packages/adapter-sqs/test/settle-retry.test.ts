import type { SQSClient } from "@aws-sdk/client-sqs";
import { AdapterError } from "@tasklane/core/adapter";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createSqsAdapter } from "../src/index.ts";
import {
  type Fault,
  type FaultProxy,
  job,
  type SqsServer,
  sqsClient,
  startFaultProxy,
  startSqs,
  uniqueName,
} from "./helpers.ts";

let server: SqsServer;
let proxy: FaultProxy;
let client: SQSClient;
/** The fault for the next SendMessageBatch requests, while set. */
let sendFault: Fault | undefined;
/** The fault for the next DeleteMessageBatch requests, while set. */
let deleteFault: Fault | undefined;

beforeAll(async () => {
  server = await startSqs();
  proxy = await startFaultProxy(server.endpoint, (action) =>
    action === "SendMessageBatch"
      ? sendFault
      : action === "DeleteMessageBatch"
        ? deleteFault
        : undefined,
  );
  // No retries in the SDK: a failed request fails the call, as when its retries run out.
  client = sqsClient(proxy.endpoint, 0);
});
afterAll(async () => {
  client.destroy();
  await proxy.close();
  await server.stop();
});

const laneOptions = { maxStalls: 5, historyLimit: 10 };

describe("a settling call that threw keeps its lease, so core's retry of it is carried out", () => {
  it.each([
    ["nack", "unavailable"],
    ["release", "unavailable"],
    ["nack (dead)", "unavailable"],
  ] as const)("%s, retried after its request failed (%s)", async (call, fault) => {
    const adapter = createSqsAdapter({ client });
    const lane = await adapter.lane(uniqueName("settle"), laneOptions);
    await lane.put([job("j1")]);
    const [reserved] = (await lane.reserve({ limit: 1, leaseMs: 30_000, waitMs: 1_000 })).jobs;
    if (!reserved) throw new Error("nothing reserved");
    const error = { name: "Error", message: "boom", reason: "error" as const };
    const settle = () =>
      call === "nack"
        ? lane.nack([{ lock: reserved.lock, runAt: Date.now(), error }])
        : call === "release"
          ? lane.release([{ lock: reserved.lock, uncounted: true }])
          : lane.nack([{ lock: reserved.lock, dead: true, error }]);
    sendFault = fault;
    await expect(settle()).rejects.toBeInstanceOf(AdapterError);
    sendFault = undefined;
    expect(await settle()).toEqual(["ok"]);
    // Settled once: the lane holds the job once (or, dead, not at all).
    const again = await lane.reserve({ limit: 10, leaseMs: 30_000, waitMs: 1_000 });
    if (call === "nack (dead)") expect(again.jobs).toEqual([]);
    else {
      expect(again.jobs.map((j) => j.id)).toEqual(["j1"]);
      expect(again.jobs[0]?.attempt).toBe(call === "nack" ? 2 : 1);
      expect(await lane.ack(again.jobs.map((j) => j.lock))).toEqual(["ok"]);
    }
    await adapter.close();
  });

  it("an ack that landed but lost its answer: the retry deletes again, and SQS says ok", async () => {
    const adapter = createSqsAdapter({ client });
    const lane = await adapter.lane(uniqueName("settle"), laneOptions);
    await lane.put([job("j1")]);
    const [reserved] = (await lane.reserve({ limit: 1, leaseMs: 30_000, waitMs: 1_000 })).jobs;
    if (!reserved) throw new Error("nothing reserved");
    deleteFault = "lost-response"; // carried out by SQS, then answered 500
    await expect(lane.ack([reserved.lock])).rejects.toBeInstanceOf(AdapterError);
    deleteFault = undefined;
    // The receipt handle is still held (the lease is ours), so the retry is sent; deleting
    // a deleted message with its receipt handle succeeds, so the job is reported succeeded.
    expect(await lane.ack([reserved.lock])).toEqual(["ok"]);
    expect((await lane.reserve({ limit: 10, leaseMs: 30_000, waitMs: 1_000 })).jobs).toEqual([]);
    await adapter.close();
  });
});
