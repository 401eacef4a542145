import {
  GetQueueUrlCommand,
  type Message,
  ReceiveMessageCommand,
  SendMessageCommand,
  type SQSClient,
} from "@aws-sdk/client-sqs";
import { createTasklane, defineTask, UnsupportedError } from "@tasklane/core";
import { ClosedError, PayloadTooLargeError } from "@tasklane/core/adapter";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { createSqsAdapter, type SqsAdapterOptions, sqsCapabilities } from "../src/index.ts";
import { countSqsRequests } from "../src/internal.ts";
import { SqsLane } from "../src/sqs-lane.ts";
import {
  job,
  type LongPollWatch,
  type SqsServer,
  sqsClient,
  startSqs,
  uniqueName,
  waitFor,
  watchLongPolls,
} from "./helpers.ts";

let server: SqsServer;
let client: SQSClient;
let polls: LongPollWatch;

beforeAll(async () => {
  server = await startSqs();
  client = sqsClient(server.endpoint);
  polls = watchLongPolls(client);
});
afterAll(async () => {
  polls.dispose();
  client.destroy();
  await server.stop();
});

const laneOptions = { maxStalls: 1, historyLimit: 10 };
const now = (limit = 10, leaseMs = 30_000) => ({ limit, leaseMs, waitMs: 0 });

async function open(options: Omit<SqsAdapterOptions, "client"> = {}, name = uniqueName()) {
  const adapter = createSqsAdapter({ client, ...options });
  const lane = await adapter.lane(name, laneOptions);
  return { adapter, lane, name };
}

/** Read raw messages of an SQS queue by name (hiding them for `seconds`). */
async function readRaw(sqsName: string, seconds = 30): Promise<Message[]> {
  const { QueueUrl } = await client.send(new GetQueueUrlCommand({ QueueName: sqsName }));
  const out = await client.send(
    new ReceiveMessageCommand({
      QueueUrl,
      MaxNumberOfMessages: 10,
      VisibilityTimeout: seconds,
      MessageAttributeNames: ["All"],
    }),
  );
  return out.Messages ?? [];
}

async function sendRaw(sqsName: string, body: string, attributes?: Record<string, string>) {
  const { QueueUrl } = await client.send(new GetQueueUrlCommand({ QueueName: sqsName }));
  await client.send(
    new SendMessageCommand({
      QueueUrl,
      MessageBody: body,
      ...(attributes
        ? {
            MessageAttributes: Object.fromEntries(
              Object.entries(attributes).map(([k, v]) => [
                k,
                { DataType: "String", StringValue: v },
              ]),
            ),
          }
        : {}),
    }),
  );
}

describe("capabilities", () => {
  it("declares what SQS cannot do", () => {
    const adapter = createSqsAdapter({ client });
    expect(adapter.name).toBe("sqs");
    expect(adapter.capabilities).toEqual(sqsCapabilities(false));
    expect(adapter.capabilities).toMatchObject({
      maxBatch: 100,
      maxLeaseMs: 12 * 3_600_000,
      maxWaitMs: 20_000,
      timeResolutionMs: 1000,
      exactCounts: false,
      ordered: false,
      priorities: false,
      dedup: false,
      fencing: true,
      get: false,
      list: false,
      cancel: false,
      cancelActive: false,
      retryFailed: true,
    });
    expect(createSqsAdapter({ client, priorityLanes: true }).capabilities.priorities).toBe(true);
  });

  it("refuses bad options, naming the field", () => {
    expect(() => createSqsAdapter({ client, probeCacheMs: -1 })).toThrow(/probeCacheMs/);
    expect(() => createSqsAdapter({ client, queuePrefix: "a b" })).toThrow(/queuePrefix/);
    expect(() => createSqsAdapter({ client, priorityLanes: { high: 0, low: 0 } })).toThrow(
      /priorityLanes.low/,
    );
  });
});

describe("put and reserve", () => {
  it("round-trips every job field and hands out a lock", async () => {
    const { adapter, lane } = await open();
    const publishedAt = Date.now() - 5;
    const [r] = await lane.put([
      job("a", { task: "email", payload: '{"to":"x"}', appData: '{"k":1}', publishedAt }),
    ]);
    expect(r).toEqual({ id: "a", status: "created" });
    const { jobs } = await lane.reserve(now());
    expect(jobs).toHaveLength(1);
    const j = jobs[0]!;
    expect(j).toMatchObject({
      id: "a",
      task: "email",
      payload: '{"to":"x"}',
      appData: '{"k":1}',
      priority: 0,
      attempt: 1,
      publishedAt,
    });
    expect(j.malformed).toBeUndefined();
    expect(j.lock.jobId).toBe("a");
    expect(j.lock.expiresAt).toBeGreaterThan(Date.now() + 25_000);
    expect(await lane.ack([j.lock])).toEqual(["ok"]);
    expect(await lane.ack([j.lock])).toEqual(["lost"]);
    await adapter.close();
  });

  it("coalesces concurrent puts and acks into batch requests", async () => {
    const counter = countSqsRequests(client);
    try {
      const { adapter, lane } = await open();
      counter.reset();
      await Promise.all(Array.from({ length: 30 }, (_, i) => lane.put([job(`j${i}`)])));
      expect(counter.byCommand.SendMessageBatchCommand).toBe(3);
      expect(counter.commands).toBe(3);
      const locks = [];
      while (locks.length < 30) {
        const { jobs } = await lane.reserve(now());
        locks.push(...jobs.map((j) => j.lock));
      }
      counter.reset();
      const statuses = await Promise.all(locks.map((l) => lane.ack([l])));
      expect(statuses.flat()).toEqual(Array(30).fill("ok"));
      expect(counter.byCommand.DeleteMessageBatchCommand).toBe(3);
      counter.reset();
      // Nothing left: an empty lane costs one receive.
      expect((await lane.reserve(now())).jobs).toEqual([]);
      expect(counter.commands).toBe(1);
      await adapter.close();
    } finally {
      counter.dispose();
    }
  });

  it("a call of up to 100 jobs fans out into parallel batch requests of 10", async () => {
    const counter = countSqsRequests(client);
    try {
      const { adapter, lane } = await open({ prefetch: 0 });
      counter.reset();
      await lane.put(Array.from({ length: 100 }, (_, i) => job(`f${i}`)));
      expect(counter.byCommand.SendMessageBatchCommand).toBe(10);
      // Receives fan out while they come back full: 1, then 2, then 4 requests at once.
      const sizes: number[] = [];
      const receives: number[] = [];
      const locks = [];
      for (let i = 0; i < 3; i++) {
        counter.reset();
        const { jobs } = await lane.reserve(now(100));
        sizes.push(jobs.length);
        receives.push(counter.byCommand.ReceiveMessageCommand ?? 0);
        locks.push(...jobs.map((j) => j.lock));
      }
      expect(sizes).toEqual([10, 20, 40]);
      expect(receives).toEqual([1, 2, 4]);
      counter.reset();
      expect(await lane.ack(locks)).toEqual(locks.map(() => "ok"));
      expect(counter.byCommand.DeleteMessageBatchCommand).toBe(7);
      await adapter.close();
    } finally {
      counter.dispose();
    }
  });

  it("splits a batch over 1 MiB into several requests", async () => {
    const counter = countSqsRequests(client);
    try {
      const { adapter, lane } = await open();
      counter.reset();
      const big = JSON.stringify("x".repeat(400_000));
      await lane.put([
        job("a", { payload: big }),
        job("b", { payload: big }),
        job("c", { payload: big }),
      ]);
      expect(counter.byCommand.SendMessageBatchCommand).toBe(2);
      let got = 0;
      while (got < 3) got += (await lane.reserve(now())).jobs.length;
      await adapter.close();
    } finally {
      counter.dispose();
    }
  });

  it("refuses a message over 1 MiB for the whole batch, sending nothing", async () => {
    const counter = countSqsRequests(client);
    try {
      const { adapter, lane } = await open();
      counter.reset();
      const tooBig = JSON.stringify("y".repeat(1_048_576));
      const attempt = lane.put([job("fine"), job("big", { payload: tooBig })]);
      await expect(attempt).rejects.toBeInstanceOf(PayloadTooLargeError);
      await expect(attempt).rejects.toMatchObject({
        code: "PAYLOAD_TOO_LARGE",
        limitBytes: 1_048_576,
      });
      expect(counter.commands).toBe(0);
      expect((await lane.reserve(now())).jobs).toEqual([]);
      await adapter.close();
    } finally {
      counter.dispose();
    }
  });

  it("round-trips any Unicode byte-exact, escaping what SQS refuses", async () => {
    const { adapter, lane, name } = await open();
    const payloads = [
      JSON.stringify({ s: "lone \ud800 surrogate" }), // escaped by JSON.stringify: plain ASCII
      '{"s":"raw \ufffe and \uffff"}',
      '{"s":"NUL \u0000 and \u0001 \u001f"}',
      '{"s":"emoji 😀 and 👩‍👩‍👧 and 𝄞"}',
      '{"s":"raw lone \ud800 and \udc00 halves"}',
      '{"s":"looks escaped %u0041 %25 %"}',
      '{"s":"tab\\t and real \t newline \n cr \r"}',
    ];
    await lane.put(
      payloads.map((payload, i) =>
        job(`u${i}`, { payload, appData: payload, task: `task \u0000 ${i} 😀` }),
      ),
    );
    const seen = new Map<string, { payload: string; appData?: string; task: string }>();
    await waitFor(async () => {
      for (const j of (await lane.reserve(now())).jobs) seen.set(j.id, j as never);
      return seen.size === payloads.length;
    });
    payloads.forEach((payload, i) => {
      const j = seen.get(`u${i}`)!;
      expect(j.payload).toBe(payload);
      expect(j.appData).toBe(payload);
      expect(j.task).toBe(`task \u0000 ${i} 😀`);
    });
    // Ordinary payloads travel untouched: no escape marker on them.
    await lane.put([job("plain", { payload: '{"a":"é ü 中文"}' })]);
    const raw = await readRaw(name);
    expect(raw[0]?.Body).toBe('{"a":"é ü 中文"}');
    expect(raw[0]?.MessageAttributes?.["tl-enc"]).toBeUndefined();
    await adapter.close();
  });

  it("refuses a job priority other than 0 without bands, writing nothing", async () => {
    const { adapter, name } = await open();
    expect(adapter.capabilities.priorities).toBe(false);
    const task = defineTask({ name: "t", lane: "work", schema: z.object({}), run: () => {} });
    const tl = createTasklane({
      adapter,
      lanes: [{ name: "work" }],
      tasks: [task],
      namespace: name,
    });
    await expect(tl.publish(task, {}, { priority: 5 })).rejects.toBeInstanceOf(UnsupportedError);
    await expect(
      tl.publishMany(task, [{ payload: {} }, { payload: {}, priority: -1 }]),
    ).rejects.toBeInstanceOf(UnsupportedError);
    expect((await tl.publish(task, {})).status).toBe("created");
    expect(await readRaw(`${name}_work`)).toHaveLength(1);
    await tl.close();
  });
});

describe("leases", () => {
  it("a lease that expired is lost; the job comes back with the next attempt", async () => {
    const { adapter, lane } = await open();
    await lane.put([job("a")]);
    const [first] = (await lane.reserve(now(10, 1000))).jobs;
    expect(first?.attempt).toBe(1);
    const second = await waitFor(async () => (await lane.reserve(now(10, 30_000))).jobs[0], 5000);
    expect(second.id).toBe("a");
    expect(second.attempt).toBe(2);
    expect(await lane.ack([first!.lock])).toEqual(["lost"]);
    expect(await lane.extend([first!.lock], 5000)).toEqual(["lost"]);
    expect(await lane.ack([second.lock])).toEqual(["ok"]);
    await adapter.close();
  });

  it("extend keeps the job hidden past its first lease", async () => {
    const { adapter, lane } = await open();
    await lane.put([job("a")]);
    const [j] = (await lane.reserve(now(10, 1000))).jobs;
    expect(await lane.extend([j!.lock], 3000)).toEqual(["ok"]);
    const until = Date.now() + 1500;
    while (Date.now() < until) {
      expect((await lane.reserve({ limit: 10, leaseMs: 1000, waitMs: 300 })).jobs).toEqual([]);
    }
    expect(await lane.ack([j!.lock])).toEqual(["ok"]);
    await adapter.close();
  });

  it("a forged or foreign token is lost", async () => {
    const { adapter, lane } = await open();
    const lock = { jobId: "x", token: "not-a-receipt-handle", expiresAt: Date.now() + 60_000 };
    expect(await lane.ack([lock])).toEqual(["lost"]);
    expect(await lane.extend([lock], 1000)).toEqual(["lost"]);
    expect(
      await lane.nack([
        { lock, runAt: Date.now(), error: { name: "E", message: "m", reason: "error" } },
      ]),
    ).toEqual(["lost"]);
    await adapter.close();
  });

  it("a job whose lease expires more than maxStalls times goes dead as stalled", async () => {
    const { adapter, lane, name } = await open();
    await lane.put([job("s")]);
    // maxStalls 1: delivery 1 stalls, delivery 2 stalls, the next receive dead-letters it.
    expect((await lane.reserve(now(10, 1000))).jobs[0]?.attempt).toBe(1);
    const again = await waitFor(async () => (await lane.reserve(now(10, 1000))).jobs[0], 5000);
    expect(again.attempt).toBe(2);
    // The next receive finds the stall count over the limit and dead-letters the job.
    await waitFor(
      async () => {
        expect((await lane.reserve(now())).jobs).toEqual([]);
        return (await lane.counts()).failed === 1;
      },
      8000,
      200,
    );
    const [dead] = await readRaw(`${name}-dlq`);
    expect(dead?.MessageAttributes?.["tl-error-reason"]?.StringValue).toBe("stalled");
    expect(dead?.MessageAttributes?.["tl-error-name"]?.StringValue).toBe("StalledError");
    await adapter.close();
  }, 20_000);
});

describe("retries, releases and dead letters", () => {
  const error = {
    name: "Boom",
    message: "it broke",
    stack: "Boom: it broke\n  at x",
    reason: "error" as const,
  };

  it("nack with runAt delays the job; the attempt counts", async () => {
    const { adapter, lane } = await open();
    await lane.put([job("a")]);
    const [j] = (await lane.reserve(now())).jobs;
    const runAt = Date.now() + 1500;
    expect(await lane.nack([{ lock: j!.lock, runAt, error }])).toEqual(["ok"]);
    expect((await lane.reserve(now())).jobs).toEqual([]);
    const back = await waitFor(async () => (await lane.reserve(now())).jobs[0], 6000);
    expect(Date.now()).toBeGreaterThanOrEqual(runAt - 1000);
    expect(back.attempt).toBe(2);
    expect(back.readyAt).toBe(runAt);
    await lane.ack([back.lock]);
    await adapter.close();
  });

  it("release hands the job back due now without counting the attempt", async () => {
    const { adapter, lane } = await open();
    await lane.put([job("a")]);
    const [j] = (await lane.reserve(now())).jobs;
    expect(await lane.release([{ lock: j!.lock, uncounted: true }])).toEqual(["ok"]);
    const back = await waitFor(async () => (await lane.reserve(now())).jobs[0]);
    expect(back.attempt).toBe(1);
    // A retry after the release still counts from there.
    await lane.nack([{ lock: back.lock, runAt: Date.now(), error }]);
    const third = await waitFor(async () => (await lane.reserve(now())).jobs[0]);
    expect(third.attempt).toBe(2);
    expect(await lane.release([{ lock: back.lock, uncounted: true }])).toEqual(["lost"]);
    await adapter.close();
  });

  it("nack dead moves the job to <name>-dlq with its error; retryFailed moves it back", async () => {
    const { adapter, lane, name } = await open();
    await lane.put([job("a", { appData: '{"x":1}' }), job("b")]);
    const got = (await lane.reserve(now())).jobs;
    expect(got).toHaveLength(2);
    const statuses = await lane.nack(
      got.map((j) => ({ lock: j.lock, dead: true as const, error })),
    );
    expect(statuses).toEqual(["ok", "ok"]);
    expect((await lane.counts()).failed).toBe(2);
    const raw = await readRaw(`${name}-dlq`, 1);
    expect(raw).toHaveLength(2);
    const attrs = raw[0]!.MessageAttributes!;
    expect(attrs["tl-error-name"]?.StringValue).toBe("Boom");
    expect(attrs["tl-error-message"]?.StringValue).toBe("it broke");
    expect(attrs["tl-error-stack"]?.StringValue).toBe("Boom: it broke\n  at x");
    expect(attrs["tl-error-reason"]?.StringValue).toBe("error");
    // The raw read hid them for a second; retryFailed("a") finds "a" once they show again.
    const moved = await waitFor(async () => lane.retryFailed!(["a"]), 5000, 200);
    expect(moved).toBe(1);
    const back = await waitFor(async () => (await lane.reserve(now())).jobs[0]);
    expect(back).toMatchObject({ id: "a", attempt: 1, appData: '{"x":1}' });
    expect(await lane.retryFailed!()).toBe(1);
    const b = await waitFor(async () => (await lane.reserve(now())).jobs[0]);
    expect(b.id).toBe("b");
    expect((await lane.counts()).failed).toBe(0);
    await adapter.close();
  });

  it("trims a huge stack so the dead letter fits", async () => {
    const { adapter, lane, name } = await open();
    await lane.put([job("a", { payload: JSON.stringify("p".repeat(900_000)) })]);
    const [j] = (await lane.reserve(now())).jobs;
    const stack = "s".repeat(400_000);
    expect(await lane.nack([{ lock: j!.lock, dead: true, error: { ...error, stack } }])).toEqual([
      "ok",
    ]);
    const [dead] = await readRaw(`${name}-dlq`);
    const kept = dead?.MessageAttributes?.["tl-error-stack"]?.StringValue ?? "";
    expect(kept.length).toBeLessThan(stack.length);
    expect(dead?.Body?.length).toBe(900_002);
    await adapter.close();
  });

  it("hands out a foreign or malformed message with `malformed`, and dead-letters it", async () => {
    const { adapter, lane, name } = await open();
    await sendRaw(name, "not json at all");
    await sendRaw(name, '{"ok":true}', { tl: '{"id":"m","task":"t","v":1,"p":0' });
    const got: Array<{ id: string; malformed?: string; payload: string; lock: never }> = [];
    await waitFor(async () => {
      got.push(...((await lane.reserve(now())).jobs as never[]));
      return got.length === 2;
    });
    for (const j of got)
      expect(j.malformed).toMatch(/not written by tasklane|invalid "tl" attribute/);
    expect(got.map((j) => j.payload).sort()).toEqual(["not json at all", '{"ok":true}']);
    const statuses = await lane.nack(
      got.map((j) => ({
        lock: j.lock,
        dead: true as const,
        error: { name: "MalformedJobError", message: j.malformed!, reason: "malformed" as const },
      })),
    );
    expect(statuses).toEqual(["ok", "ok"]);
    const dead = await readRaw(`${name}-dlq`);
    expect(dead.map((m) => m.MessageAttributes?.["tl-error-reason"]?.StringValue)).toEqual([
      "malformed",
      "malformed",
    ]);
    expect(dead.map((m) => m.Body).sort()).toEqual(["not json at all", '{"ok":true}']);
    await adapter.close();
  });
});

describe("delays", () => {
  it("a delayed job is not handed out before its runAt", async () => {
    const { adapter, lane } = await open();
    const runAt = Date.now() + 2000;
    await lane.put([job("d", { runAt })]);
    expect((await lane.reserve(now())).jobs).toEqual([]);
    expect((await lane.counts()).delayed).toBe(1);
    const j = await waitFor(async () => (await lane.reserve(now())).jobs[0], 6000);
    expect(Date.now()).toBeGreaterThanOrEqual(runAt - 1000);
    expect(j).toMatchObject({ id: "d", attempt: 1, readyAt: runAt });
    await adapter.close();
  });

  it("a job received before its runAt (longer than 15 min) is re-delayed, not run", async () => {
    const { adapter, lane, name } = await open();
    // What a 15-minute hop delivers: a message whose runAt is still an hour away.
    const runAt = Date.now() + 3_600_000;
    await sendRaw(name, "{}", {
      tl: JSON.stringify({ v: 1, id: "later", task: "t", p: 0, pub: Date.now(), run: runAt }),
    });
    expect((await lane.reserve({ limit: 10, leaseMs: 30_000, waitMs: 1000 })).jobs).toEqual([]);
    // It went back as a fresh copy, delayed by SQS's longest delay (900 s).
    await waitFor(async () => {
      const c = await lane.counts();
      return c.delayed === 1 && c.active === 0;
    });
    await adapter.close();
  });

  it("a put longer than 15 minutes is accepted (first hop of 900 s)", async () => {
    const { adapter, lane } = await open();
    await lane.put([job("far", { runAt: Date.now() + 2 * 3_600_000 })]);
    expect((await lane.counts()).delayed).toBe(1);
    await adapter.close();
  });
});

describe("long polls", () => {
  it("a waiting reserve wakes on a put", async () => {
    const { adapter, lane } = await open();
    const pending = lane.reserve({ limit: 10, leaseMs: 30_000, waitMs: 5000 });
    await waitFor(() => polls.waiting(lane.name) > 0);
    await lane.put([job("w")]);
    const { jobs } = await pending;
    expect(jobs.map((j) => j.id)).toEqual(["w"]);
    await adapter.close();
  });

  it("an aborted signal ends the wait at once, and a later put is not swallowed", async () => {
    const { adapter, lane } = await open();
    const controller = new AbortController();
    const started = Date.now();
    const pending = lane.reserve({
      limit: 10,
      leaseMs: 30_000,
      waitMs: 10_000,
      signal: controller.signal,
    });
    setTimeout(() => controller.abort(), 50);
    expect((await pending).jobs).toEqual([]);
    expect(Date.now() - started).toBeLessThan(1000);
    // The SQS long poll may still be open: whatever it brings goes to the next reserve.
    await lane.put([job("after")]);
    const j = await waitFor(async () => (await lane.reserve(now())).jobs[0], 3000);
    expect(j.id).toBe("after");
    await adapter.close();
  });

  it("idle: one receive per long-poll period", async () => {
    const counter = countSqsRequests(client);
    try {
      const { adapter, lane } = await open();
      counter.reset();
      const started = Date.now();
      for (let i = 0; i < 3; i++) await lane.reserve({ limit: 10, leaseMs: 30_000, waitMs: 1000 });
      expect(Date.now() - started).toBeGreaterThanOrEqual(2900);
      // At most one poll is in flight per SQS queue, and each lasts the long-poll period.
      expect(counter.byCommand.ReceiveMessageCommand).toBeGreaterThanOrEqual(2);
      expect(counter.byCommand.ReceiveMessageCommand).toBeLessThanOrEqual(3);
      await adapter.close();
    } finally {
      counter.dispose();
    }
  });

  it("a waiting reserve on a busy lane fans out short receives instead of one long poll", async () => {
    // The worker asks with waitMs > 0 whenever its last batch was short (fewer than its
    // limit). On a busy band that must not mean one ReceiveMessage of 10 per reserve.
    let polls = 0;
    let receives = 0;
    const name = "countLongPolls";
    client.middlewareStack.add(
      (next, context) => (args) => {
        if (context.commandName === "ReceiveMessageCommand") {
          receives++;
          if (((args.input as { WaitTimeSeconds?: number }).WaitTimeSeconds ?? 0) > 0) polls++;
        }
        return next(args);
      },
      { step: "initialize", name },
    );
    try {
      const { adapter, lane } = await open({ prefetch: 0 });
      await lane.put(Array.from({ length: 150 }, (_, i) => job(`b${i}`)));
      const wait = { limit: 100, leaseMs: 30_000, waitMs: 1000 };
      const first = await lane.reserve(wait);
      expect(first.jobs).toHaveLength(10);
      // A full receive: the band holds more (approximately), so the worker stays on it.
      expect(first.ready).toBeGreaterThan(0);
      const sizes = [first.jobs.length];
      for (let i = 0; i < 4; i++) sizes.push((await lane.reserve(wait)).jobs.length);
      // Long poll of 10, then 1, 2, 4 and 8 parallel receives of 10 (the last one short).
      expect(sizes).toEqual([10, 10, 20, 40, 70]);
      expect(polls).toBe(1);
      expect(receives).toBe(1 + 1 + 2 + 4 + 8);
      // Drained (the last receives came back short): the next reserve long-polls again.
      const started = Date.now();
      const empty = await lane.reserve(wait);
      expect(empty.jobs).toHaveLength(0);
      expect(empty.ready).toBeUndefined();
      expect(Date.now() - started).toBeGreaterThanOrEqual(900);
      expect(polls).toBe(2);
      await adapter.close();
    } finally {
      client.middlewareStack.remove(name);
    }
  });

  it("close ends a pending long poll with no jobs; later calls throw ClosedError", async () => {
    const own = createSqsAdapter({ client });
    const lane = await own.lane(uniqueName(), laneOptions);
    const pending = lane.reserve({ limit: 10, leaseMs: 30_000, waitMs: 10_000 });
    await waitFor(() => polls.waiting(lane.name) > 0);
    const started = Date.now();
    await own.close();
    await own.close();
    expect((await pending).jobs).toEqual([]);
    expect(Date.now() - started).toBeLessThan(1000);
    await expect(lane.put([job("x")])).rejects.toBeInstanceOf(ClosedError);
    await expect(lane.reserve(now())).rejects.toBeInstanceOf(ClosedError);
    await expect(own.lane("other", laneOptions)).rejects.toBeInstanceOf(ClosedError);
    // The injected client was not destroyed: it still answers (a destroyed one rejects).
    expect(
      (await client.send(new GetQueueUrlCommand({ QueueName: lane.name }))).QueueUrl,
    ).toContain(lane.name);
    expect((await readRaw(lane.name)).length).toBe(0);
  });
});

describe("prefetch", () => {
  it("reads ahead for a fast worker, and hands back what it does not take, uncounted", async () => {
    const counter = countSqsRequests(client);
    try {
      const { adapter, lane } = await open({ prefetch: 10, bufferHoldMs: 300 });
      await lane.put(Array.from({ length: 30 }, (_, i) => job(`p${i}`)));
      const first = await lane.reserve(now());
      const second = await lane.reserve(now()); // within 100 ms of the first: read ahead
      expect(first.jobs.length + second.jobs.length).toBe(20);
      await lane.ack([...first.jobs, ...second.jobs].map((j) => j.lock));
      // Nobody reserves the 10 read ahead: after bufferHoldMs they go back to SQS.
      await waitFor(async () => {
        const c = await lane.counts();
        return c.active === 0 && c.waiting === 10;
      });
      counter.reset();
      const rest = await lane.reserve(now());
      expect(rest.jobs).toHaveLength(10);
      expect(rest.jobs.every((j) => j.attempt === 1)).toBe(true);
      expect(counter.byCommand.ReceiveMessageCommand).toBe(1);
      await adapter.close();
    } finally {
      counter.dispose();
    }
  });

  it("a fast worker with one free slot gets a full receive, served one by one", async () => {
    const counter = countSqsRequests(client);
    try {
      const { adapter, lane } = await open({ prefetch: 10 });
      await lane.put(Array.from({ length: 11 }, (_, i) => job(`c${i}`)));
      counter.reset();
      const ids: string[] = [];
      for (let i = 0; i < 11; i++) {
        const { jobs } = await lane.reserve(now(1));
        expect(jobs).toHaveLength(1);
        ids.push(jobs[0]!.id);
        await lane.ack([jobs[0]!.lock]);
      }
      expect(new Set(ids).size).toBe(11);
      // 1 receive of 1 (the band is busy), then 1 of 10 served from memory.
      expect(counter.byCommand.ReceiveMessageCommand).toBe(2);
      await adapter.close();
    } finally {
      counter.dispose();
    }
  });

  it("a slow receive does not make a fast worker look slow: the gap counts from the answer", async () => {
    const counter = countSqsRequests(client);
    const name = "slowReceive";
    // Every receive takes 150 ms, more than the gap that marks a fast worker: a gap taken
    // from the previous call would see a slow worker and read nothing ahead.
    client.middlewareStack.add(
      (next, context) => async (args) => {
        if (context.commandName === "ReceiveMessageCommand") {
          await new Promise((r) => setTimeout(r, 150));
        }
        return next(args);
      },
      { step: "initialize", name },
    );
    try {
      const { adapter, lane } = await open({ prefetch: 10 });
      await lane.put(Array.from({ length: 11 }, (_, i) => job(`g${i}`)));
      counter.reset();
      for (let i = 0; i < 11; i++) {
        const { jobs } = await lane.reserve(now(1));
        expect(jobs).toHaveLength(1);
      }
      // 1 receive of 1, then 1 of 10 served from memory (no ack between: the worker's
      // turnaround is only the loop's).
      expect(counter.byCommand.ReceiveMessageCommand).toBe(2);
      await adapter.close();
    } finally {
      client.middlewareStack.remove(name);
      counter.dispose();
    }
  });

  it("hands out at most one suspect per reserve; the next one waits for the next reserve", async () => {
    const { adapter, lane } = await open({ prefetch: 10 });
    await lane.put([job("s1"), job("s2")]);
    expect((await lane.reserve(now(2, 1000))).jobs).toHaveLength(2);
    // Both leases run out: two suspects, received together, handed out one at a time.
    const first = await waitFor(async () => {
      const { jobs } = await lane.reserve(now(2));
      return jobs.length > 0 ? jobs : undefined;
    }, 5000);
    expect(first).toHaveLength(1);
    expect(first[0]).toMatchObject({ attempt: 2, suspect: true });
    const { jobs: next } = await lane.reserve(now(2));
    expect(next).toHaveLength(1);
    expect(next[0]).toMatchObject({ attempt: 2, suspect: true });
    expect(new Set([first[0]?.id, next[0]?.id])).toEqual(new Set(["s1", "s2"]));
    await adapter.close();
  }, 20_000);

  it("hands an unreserved read-ahead back by half its lease, uncounted, never after it", async () => {
    const { adapter, lane } = await open({ prefetch: 10, bufferHoldMs: 60_000 });
    await lane.put(Array.from({ length: 30 }, (_, i) => job(`h${i}`)));
    const first = await lane.reserve(now(10, 4000));
    const second = await lane.reserve(now(10, 4000)); // fast: 10 more read ahead
    const taken = [...first.jobs, ...second.jobs];
    expect(taken).toHaveLength(20);
    await lane.ack(taken.map((j) => j.lock));
    // Nobody reserves the read-ahead: back in SQS by half the 4 s lease, before it ends.
    const started = Date.now();
    await waitFor(async () => (await lane.counts()).waiting === 10, 3500);
    expect(Date.now() - started).toBeLessThan(3500);
    const rest = await lane.reserve(now(10));
    expect(rest.jobs).toHaveLength(10);
    expect(rest.jobs.every((j) => j.attempt === 1)).toBe(true);
    await adapter.close();
  }, 20_000);

  it("does not read ahead for a slow worker", async () => {
    const counter = countSqsRequests(client);
    try {
      const { adapter, lane } = await open({ prefetch: 10 });
      await lane.put(Array.from({ length: 30 }, (_, i) => job(`s${i}`)));
      await lane.reserve(now());
      await new Promise((r) => setTimeout(r, 150));
      counter.reset();
      await lane.reserve(now());
      await new Promise((r) => setTimeout(r, 150));
      expect(counter.byCommand.ReceiveMessageCommand).toBe(1);
      expect((await lane.counts()).waiting).toBe(10);
      await adapter.close();
    } finally {
      counter.dispose();
    }
  });
});

describe("probe and counts", () => {
  it("probe is cached for probeCacheMs", async () => {
    const counter = countSqsRequests(client);
    try {
      const { adapter, lane } = await open({ probeCacheMs: 60_000 });
      await lane.put([job("a"), job("b")]);
      counter.reset();
      const [p1, p2] = await Promise.all([lane.probe(), lane.probe()]);
      expect(await lane.probe()).toBe(2);
      expect([p1, p2]).toEqual([2, 2]);
      expect(counter.byCommand.GetQueueAttributesCommand).toBe(1);
      await adapter.close();
    } finally {
      counter.dispose();
    }
  });

  it("counts waiting, delayed and active (approximately)", async () => {
    const { adapter, lane } = await open();
    await lane.put([job("a"), job("b"), job("c", { runAt: Date.now() + 60_000 })]);
    await lane.reserve(now(1));
    expect(await lane.counts()).toMatchObject({ waiting: 1, active: 1, delayed: 1, failed: 0 });
    await adapter.close();
  });
});

describe("lanes", () => {
  it("one lane object per name, a prefix, and a cached URL", async () => {
    const counter = countSqsRequests(client);
    try {
      const adapter = createSqsAdapter({ client, queuePrefix: "pre-" });
      const name = uniqueName();
      const [a, b] = await Promise.all([
        adapter.lane(name, laneOptions),
        adapter.lane(name, laneOptions),
      ]);
      expect(a).toBe(b);
      expect(a).toBeInstanceOf(SqsLane);
      expect(a.bands.map((x) => x.name)).toEqual([`pre-${name}`]);
      expect(counter.byCommand.CreateQueueCommand).toBe(1);
      await adapter.close();
    } finally {
      counter.dispose();
    }
  });

  it("refuses names SQS cannot hold", async () => {
    const adapter = createSqsAdapter({ client });
    await expect(adapter.lane("x".repeat(80), laneOptions)).rejects.toThrow(/at most 80/);
    await expect(adapter.lane("bad name", laneOptions)).rejects.toThrow(/letters/);
    await adapter.close();
  });

  it("createQueues false only looks queues up", async () => {
    const adapter = createSqsAdapter({ client, createQueues: false });
    await expect(adapter.lane(uniqueName(), laneOptions)).rejects.toThrow(/does not exist/);
    await adapter.close();
  });
});

describe("priority lanes", () => {
  it("routes priorities to -high / base / -low SQS queues and drains the higher first", async () => {
    const { adapter, lane } = await open({ priorityLanes: { high: 5, low: -5 } });
    expect(adapter.capabilities.priorities).toBe(true);
    expect((lane as SqsLane).bands.map((b) => b.name.replace(/^q-\w+/, ""))).toEqual([
      "-high",
      "",
      "-low",
    ]);
    await lane.put([
      job("low", { priority: -10 }),
      job("mid", { priority: 0 }),
      job("high", { priority: 7 }),
      job("mid2", { priority: 4 }),
      job("high2", { priority: 5 }),
      job("low2", { priority: -5 }),
    ]);
    const order: string[] = [];
    await waitFor(async () => {
      const { jobs } = await lane.reserve(now(2));
      order.push(...jobs.map((j) => j.id));
      return order.length === 6;
    });
    expect(order.slice(0, 2).sort()).toEqual(["high", "high2"]);
    expect(order.slice(2, 4).sort()).toEqual(["mid", "mid2"]);
    expect(order.slice(4).sort()).toEqual(["low", "low2"]);
    expect(await lane.probe()).toBe(0);
    await adapter.close();
  });

  it("a high job published while the default band is busy overtakes its backlog", async () => {
    // probeCacheMs of a minute: without the watch on the empty high band, the new high
    // job would wait a minute (or the whole backlog) behind default work.
    const { adapter, lane, name } = await open({ priorityLanes: true, probeCacheMs: 60_000 });
    // The producer is another process: this adapter learns nothing from its put.
    const producer = createSqsAdapter({ client, priorityLanes: true });
    const producerLane = await producer.lane(name, laneOptions);
    await lane.put(Array.from({ length: 10 }, (_, i) => job(`d${i}`)));
    await lane.put(Array.from({ length: 10 }, (_, i) => job(`e${i}`)));
    const first = await lane.reserve(now(2));
    expect(first.jobs.map((j) => j.id)).toEqual(["d0", "d1"]);
    await lane.reserve(now(2)); // high known empty: skipped, and now watched
    await producerLane.put([job("urgent", { priority: 5 })]);
    const seen: string[] = [];
    await waitFor(async () => {
      const { jobs } = await lane.reserve(now(2));
      seen.push(...jobs.map((j) => j.id));
      return seen.includes("urgent");
    });
    expect(seen.length).toBeLessThanOrEqual(5);
    await adapter.close();
    await producer.close();
  });

  it("idle with bands: one receive per band per long-poll period", async () => {
    const counter = countSqsRequests(client);
    try {
      const { adapter, lane } = await open({ priorityLanes: true });
      await lane.reserve({ limit: 10, leaseMs: 30_000, waitMs: 1000 });
      counter.reset();
      for (let i = 0; i < 2; i++) await lane.reserve({ limit: 10, leaseMs: 30_000, waitMs: 1000 });
      expect(counter.byCommand.ReceiveMessageCommand).toBeGreaterThanOrEqual(3);
      expect(counter.byCommand.ReceiveMessageCommand).toBeLessThanOrEqual(6);
      await adapter.close();
    } finally {
      counter.dispose();
    }
  });
});

/**
 * The MessageGroupId of every message sent on `client` from now on, by payload id: read
 * from the requests as they go out to fauxqs (which keeps a group on FIFO queues only).
 */
function watchGroups(client: SQSClient) {
  const name = `tasklaneWatchGroups${uniqueName()}`;
  const groups = new Map<string, string | undefined>();
  client.middlewareStack.add(
    (next, context) => (args) => {
      const input = args.input as {
        Entries?: Array<{ MessageBody?: string; MessageGroupId?: string }>;
      };
      const single = args.input as { MessageBody?: string; MessageGroupId?: string };
      const entries =
        context.commandName === "SendMessageBatchCommand"
          ? (input.Entries ?? [])
          : context.commandName === "SendMessageCommand"
            ? [single]
            : [];
      for (const e of entries) {
        const id = (JSON.parse(e.MessageBody ?? "{}") as { id?: string }).id;
        if (id !== undefined) groups.set(id, e.MessageGroupId);
      }
      return next(args);
    },
    { step: "initialize", name },
  );
  return { groups, dispose: () => client.middlewareStack.remove(name) };
}

describe("message groups (publish's group; capability messageGroups)", () => {
  it("on a standard lane: the group is the message's MessageGroupId (fair queues), kept by a hand-back copy", async () => {
    const { adapter, lane } = await open();
    expect(adapter.capabilities).toMatchObject({ groups: false, messageGroups: true });
    const watch = watchGroups(client);
    try {
      await lane.put([job("a", { group: "acme" }), job("b")]);
      expect([...watch.groups]).toEqual([
        ["a", "acme"],
        ["b", undefined],
      ]);
      watch.groups.clear();
      // Retried: a standard queue sends a fresh copy, which keeps the group (from the
      // job's own record: a receive need not return a standard queue's MessageGroupId).
      const { jobs } = await lane.reserve(now());
      expect(jobs.map((j) => j.id).sort()).toEqual(["a", "b"]);
      const error = { name: "E", message: "again", reason: "error" as const };
      expect(
        await lane.nack(jobs.map((j) => ({ lock: j.lock, runAt: Date.now(), error }))),
      ).toEqual(["ok", "ok"]);
      expect(new Map(watch.groups)).toEqual(
        new Map([
          ["a", "acme"],
          ["b", undefined],
        ]),
      );
      // The copy is the same job again, its group included, so its next copy keeps it too.
      const again = await waitFor(async () => {
        const r = await lane.reserve(now());
        return r.jobs.find((j) => j.id === "a");
      });
      watch.groups.clear();
      expect(await lane.nack([{ lock: again.lock, runAt: Date.now(), error }])).toEqual(["ok"]);
      expect([...watch.groups]).toEqual([["a", "acme"]]);
    } finally {
      watch.dispose();
    }
    await adapter.close();
  });

  it("on a FIFO lane: the group is the MessageGroupId (over groupId and the job id); one in flight per group", async () => {
    const { adapter, lane } = await open({}, `${uniqueName()}.fifo`);
    const watch = watchGroups(client);
    try {
      await lane.put([
        job("a1", { group: "acme" }),
        job("b1", { groupId: "legacy" }),
        job("a2", { group: "acme" }),
        job("c1"),
      ]);
      expect(new Map(watch.groups)).toEqual(
        new Map([
          ["a1", "acme"],
          ["b1", "legacy"],
          ["a2", "acme"],
          ["c1", "c1"],
        ]),
      );
    } finally {
      watch.dispose();
    }
    // SQS's rule for a FIFO group: no receive of a2 while a1, ahead of it, is in flight.
    const first = await lane.reserve(now());
    expect(first.jobs.map((j) => j.id).sort()).toEqual(["a1", "b1", "c1"]);
    expect((await lane.reserve(now())).jobs).toEqual([]);
    expect(await lane.ack(first.jobs.map((j) => j.lock))).toEqual(["ok", "ok", "ok"]);
    const next = await waitFor(async () => (await lane.reserve(now())).jobs[0]);
    expect(next.id).toBe("a2");
    await adapter.close();
  });

  it("through the client: a lane with groups takes group; a per-group concurrency is refused", async () => {
    const { adapter, name } = await open();
    const task = defineTask({
      name: "t",
      lane: "work",
      schema: z.object({ id: z.string() }),
      run: () => {},
    });
    expect(() =>
      createTasklane({
        adapter,
        lanes: [{ name: "work", groups: { concurrency: 3 } }],
        tasks: [task],
        namespace: name,
      }),
    ).toThrow(/lanes\[0\]\.groups\.concurrency/);
    const tl = createTasklane({
      adapter,
      lanes: [{ name: "work", groups: {} }],
      tasks: [task],
      namespace: name,
    });
    const watch = watchGroups(client);
    try {
      expect((await tl.publish(task, { id: "p1" }, { group: "acme" })).status).toBe("created");
      expect([...watch.groups]).toEqual([["p1", "acme"]]);
    } finally {
      watch.dispose();
    }
    await tl.close();
  });
});

describe("FIFO queues", () => {
  it("keeps group order, de-duplicates by job id and round-trips groups", async () => {
    const { adapter, lane } = await open({}, `${uniqueName()}.fifo`);
    expect((lane as SqsLane).fifo).toBe(true);
    const r = await lane.put([
      job("1", { groupId: "g" }),
      job("2", { groupId: "g" }),
      job("1", { groupId: "g" }),
    ]);
    expect(r.map((x) => x.status)).toEqual(["created", "created", "duplicate"]);
    await lane.put([job("1", { groupId: "g" })]); // SQS drops it: same dedup id within 5 min
    const ids: string[] = [];
    await waitFor(async () => {
      const { jobs } = await lane.reserve(now());
      ids.push(...jobs.map((j) => j.id));
      await lane.ack(jobs.map((j) => j.lock));
      return ids.length >= 2;
    });
    expect(ids).toEqual(["1", "2"]);
    expect((await lane.reserve({ limit: 10, leaseMs: 30_000, waitMs: 1000 })).jobs).toEqual([]);
    await adapter.close();
  });

  it("holds a delayed FIFO job until due (by visibility: the early receive counts)", async () => {
    const { adapter, lane } = await open({}, `${uniqueName()}.fifo`);
    const runAt = Date.now() + 2000;
    await lane.put([job("later", { runAt })]);
    expect((await lane.reserve(now())).jobs).toEqual([]);
    const j = await waitFor(async () => (await lane.reserve(now())).jobs[0], 6000);
    expect(Date.now()).toBeGreaterThanOrEqual(runAt - 1000);
    expect(j).toMatchObject({ id: "later", readyAt: runAt, attempt: 2 });
    // A FIFO release keeps the job at the head of its group; the attempt counts (README).
    expect(await lane.release([{ lock: j.lock, uncounted: true }])).toEqual(["ok"]);
    const again = await waitFor(async () => (await lane.reserve(now())).jobs[0]);
    expect(again).toMatchObject({ id: "later", attempt: 3 });
    await adapter.close();
  });

  it("the fifo option makes a FIFO queue of a plain name; nack dead reaches a FIFO DLQ", async () => {
    const { adapter, lane } = await open({ fifo: true });
    expect((lane as SqsLane).bands[0]?.name.endsWith(".fifo")).toBe(true);
    await lane.put([job("a")]);
    const [j] = (await lane.reserve(now())).jobs;
    expect(
      await lane.nack([
        { lock: j!.lock, dead: true, error: { name: "E", message: "m", reason: "error" } },
      ]),
    ).toEqual(["ok"]);
    expect((await lane.counts()).failed).toBe(1);
    expect(await lane.retryFailed!()).toBe(1);
    const back = await waitFor(async () => (await lane.reserve(now())).jobs[0]);
    expect(back.id).toBe("a");
    await adapter.close();
  });
});
