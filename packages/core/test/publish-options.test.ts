import { createMemoryAdapter } from "@tasklane/adapter-memory";
import { afterEach, describe, expect, it } from "vitest";
import { z } from "zod";
import type { Adapter, Capabilities } from "../src/adapter.ts";
import {
  ConfigError,
  createManualClock,
  createTasklane,
  defineTask,
  PayloadTooLargeError,
  type PublishOptions,
  type Tasklane,
  UnsupportedError,
} from "../src/index.ts";
import { bend } from "./bent-adapter.ts";

const START = Date.UTC(2026, 0, 1);
const task = defineTask({
  name: "t",
  lane: "q",
  schema: z.object({ s: z.string() }),
  run: () => {},
});

const open: Tasklane[] = [];
afterEach(async () => {
  await Promise.all(open.splice(0).map((tl) => tl.close()));
});

/** A client on the memory adapter at START, whose adapter may declare capabilities false. */
function client(options: { caps?: Partial<Capabilities>; maxPayloadBytes?: number } = {}) {
  const clock = createManualClock(START);
  const memory = createMemoryAdapter({ clock });
  const adapter: Adapter =
    options.caps === undefined ? memory : bend(memory, { name: "partial", caps: options.caps });
  const tl = createTasklane({
    adapter,
    clock,
    lanes: [{ name: "q" }],
    tasks: [task],
    ...(options.maxPayloadBytes === undefined ? {} : { maxPayloadBytes: options.maxPayloadBytes }),
  });
  open.push(tl);
  return { tl, clock };
}

async function refusal(promise: Promise<unknown>): Promise<unknown> {
  return promise.then(
    () => {
      throw new Error("expected a refusal");
    },
    (err: unknown) => err,
  );
}

async function configError(
  tl: Tasklane,
  options: PublishOptions,
): Promise<{ field: string; value: unknown; message: string }> {
  const err = await refusal(tl.publish(task, { s: "x" }, options));
  expect(err).toBeInstanceOf(ConfigError);
  expect(await tl.lane("q").counts()).toMatchObject({ waiting: 0, delayed: 0 });
  const { field, value, message } = err as ConfigError;
  return { field, value, message };
}

async function stored(tl: Tasklane, options: PublishOptions) {
  const { id } = await tl.publish(task, { s: "x" }, options);
  const job = await tl.lane("q").get(id);
  if (!job) throw new Error("not stored");
  return job;
}

describe("publish's options, stored", () => {
  it("stores a job without options as waiting now, priority 0, no tags, no expiry", async () => {
    const { tl } = client();
    const job = await stored(tl, {});
    expect(job).toMatchObject({ state: "waiting", priority: 0, runAt: START, publishedAt: START });
    expect(job.tags).toBeUndefined();
    expect(job.expiresAt).toBeUndefined();
    expect(job.appData).toBeUndefined();
  });

  it("stores each option given alone", async () => {
    const { tl } = client();
    expect(await stored(tl, { priority: 7 })).toMatchObject({ priority: 7, state: "waiting" });
    expect(await stored(tl, { delayMs: 500 })).toMatchObject({
      state: "delayed",
      runAt: START + 500,
    });
    expect(await stored(tl, { runAt: START + 900 })).toMatchObject({
      state: "delayed",
      runAt: START + 900,
    });
    expect(await stored(tl, { jobId: "mine" })).toMatchObject({ id: "mine", state: "waiting" });
    expect((await stored(tl, { appData: { a: 1 } })).appData).toBe('{"a":1}');
    expect((await stored(tl, { tags: ["a", "b"] })).tags).toEqual(["a", "b"]);
    expect((await stored(tl, { expiresInMs: 1_000 })).expiresAt).toBe(START + 1_000);
    expect((await stored(tl, { expiresAt: START + 5 })).expiresAt).toBe(START + 5);
  });

  it("starts a job whose runAt is now or past at once, and one given an empty tag list untagged", async () => {
    const { tl } = client();
    expect(await stored(tl, { runAt: START })).toMatchObject({ state: "waiting", runAt: START });
    expect(await stored(tl, { runAt: START - 10 })).toMatchObject({ state: "waiting" });
    expect(await stored(tl, { delayMs: 0 })).toMatchObject({ state: "waiting", runAt: START });
    expect((await stored(tl, { tags: [] })).tags).toBeUndefined();
  });

  it("gives a second publish with the same jobId the answer duplicate", async () => {
    const { tl } = client();
    expect((await tl.publish(task, { s: "a" }, { jobId: "j" })).status).toBe("created");
    expect((await tl.publish(task, { s: "b" }, { jobId: "j" })).status).toBe("duplicate");
  });
});

describe("publish's options, refused before anything is written", () => {
  it("refuses priorities outside -1000..1000 and fractions, accepting both ends", async () => {
    const { tl } = client();
    for (const priority of [-1001, 1001, 1.5, Number.NaN]) {
      const err = await configError(tl, { priority });
      expect(err.field).toBe("options.priority");
      expect(err.value).toBe(priority);
      expect(err.message).toContain("must be an integer from -1000 to 1000");
    }
    expect((await stored(tl, { priority: -1000 })).priority).toBe(-1000);
    expect((await stored(tl, { priority: 1000 })).priority).toBe(1000);
  });

  it("refuses delayMs with runAt, a negative or infinite delayMs, and a runAt that is no number", async () => {
    const { tl } = client();
    expect(await configError(tl, { delayMs: 5, runAt: START })).toMatchObject({
      field: "options.delayMs",
      value: 5,
      message: expect.stringContaining("give delayMs or runAt, not both"),
    });
    for (const delayMs of [-1, Number.POSITIVE_INFINITY, Number.NaN]) {
      expect(await configError(tl, { delayMs })).toMatchObject({
        field: "options.delayMs",
        value: delayMs,
        message: expect.stringContaining("must be a finite number >= 0"),
      });
    }
    expect(await configError(tl, { runAt: Number.NaN })).toMatchObject({
      field: "options.runAt",
      message: expect.stringContaining("must be an epoch-ms number"),
    });
  });

  it("refuses job ids that are empty, too long or not strings; 128 characters pass", async () => {
    const { tl } = client();
    for (const jobId of ["", "x".repeat(129), 5 as unknown as string]) {
      expect(await configError(tl, { jobId })).toMatchObject({
        field: "options.jobId",
        value: jobId,
        message: expect.stringContaining("must be a string of 1-128 characters"),
      });
    }
    expect((await stored(tl, { jobId: "x".repeat(128) })).id).toHaveLength(128);
  });

  it("refuses more than 16 tags, empty, long or repeated tags, naming the tag", async () => {
    const { tl } = client();
    const seventeen = Array.from({ length: 17 }, (_, i) => `t${i}`);
    expect(await configError(tl, { tags: seventeen })).toMatchObject({
      field: "options.tags",
      message: expect.stringContaining("must be an array of at most 16 tags"),
    });
    expect(await configError(tl, { tags: "a" as unknown as string[] })).toMatchObject({
      field: "options.tags",
    });
    expect(await configError(tl, { tags: ["a", ""] })).toMatchObject({
      field: "options.tags[1]",
      value: "",
      message: expect.stringContaining("must be a string of 1-128 characters"),
    });
    expect(await configError(tl, { tags: ["y".repeat(129)] })).toMatchObject({
      field: "options.tags[0]",
    });
    expect(await configError(tl, { tags: ["a", "b", "a"] })).toMatchObject({
      field: "options.tags[2]",
      value: "a",
      message: expect.stringContaining("is given twice"),
    });
    expect((await stored(tl, { tags: seventeen.slice(1) })).tags).toHaveLength(16);
    expect((await stored(tl, { tags: ["z".repeat(128)] })).tags).toEqual(["z".repeat(128)]);
  });

  it("refuses expiresInMs with expiresAt, a non-positive expiresInMs, and an expiry not after now or runAt", async () => {
    const { tl } = client();
    expect(await configError(tl, { expiresInMs: 5, expiresAt: START + 10 })).toMatchObject({
      field: "options.expiresInMs",
      value: 5,
      message: expect.stringContaining("give expiresInMs or expiresAt, not both"),
    });
    for (const expiresInMs of [0, -5, Number.POSITIVE_INFINITY]) {
      expect(await configError(tl, { expiresInMs })).toMatchObject({
        field: "options.expiresInMs",
        value: expiresInMs,
        message: expect.stringContaining("must be a finite number > 0"),
      });
    }
    expect(await configError(tl, { expiresAt: START })).toMatchObject({
      field: "options.expiresAt",
      value: START,
      message: expect.stringContaining("must be an epoch-ms time after now"),
    });
    expect(await configError(tl, { expiresAt: START + 100, delayMs: 100 })).toMatchObject({
      field: "options.expiresAt",
      value: START + 100,
      message: expect.stringContaining("must be after runAt: the job could never start"),
    });
    expect(await configError(tl, { expiresInMs: 50, runAt: START + 60 })).toMatchObject({
      field: "options.expiresInMs",
      value: 50,
    });
    expect((await stored(tl, { expiresAt: START + 101, delayMs: 100 })).expiresAt).toBe(
      START + 101,
    );
  });

  it("names publishMany's item in its errors", async () => {
    const { tl } = client();
    const err = await refusal(
      tl.publishMany(task, [{ payload: { s: "a" } }, { payload: { s: "b" }, priority: 2000 }]),
    );
    expect(err).toMatchObject({ field: "items[1].priority", value: 2000 });
    const late = await refusal(tl.publishMany(task, [{ payload: { s: "a" }, tags: ["k", "k"] }]));
    expect(late).toMatchObject({ field: "items[0].tags[1]" });
  });
});

describe("the payload size limit", () => {
  it("counts the payload and appData as encoded, accepting exactly the limit", async () => {
    // {"s":"xxxx"} is 12 bytes; "ab" as appData is 4 more.
    const { tl } = client({ maxPayloadBytes: 16 });
    await expect(tl.publish(task, { s: "xxxx" }, { appData: "ab" })).resolves.toMatchObject({
      status: "created",
    });
    await expect(tl.publish(task, { s: "xxxxxxxx" })).resolves.toMatchObject({
      status: "created",
    });
    const err = await refusal(tl.publish(task, { s: "xxxx" }, { appData: "abc" }));
    expect(err).toBeInstanceOf(PayloadTooLargeError);
    expect(err).toMatchObject({ code: "PAYLOAD_TOO_LARGE", sizeBytes: 17, limitBytes: 16 });
    expect((err as Error).message).toBe(
      'Payload of task "t" is 17 bytes encoded, over the limit of 16 bytes',
    );
    const plain = await refusal(tl.publish(task, { s: "xxxxxxxxx" }));
    expect(plain).toMatchObject({ sizeBytes: 17, limitBytes: 16 });
  });

  it("names publishMany's item that is too large, with nothing written", async () => {
    const { tl } = client({ maxPayloadBytes: 16 });
    const err = await refusal(
      tl.publishMany(task, [{ payload: { s: "a" } }, { payload: { s: "xxxxxxxxx" } }]),
    );
    expect((err as Error).message).toBe(
      'Payload of task "t" (item 1) is 17 bytes encoded, over the limit of 16 bytes',
    );
    const withOptions = await refusal(
      tl.publishMany(task, [{ payload: { s: "xxxxxxxxx" }, priority: 1 }]),
    );
    expect((withOptions as Error).message).toContain("(item 0)");
    expect(await tl.lane("q").counts()).toMatchObject({ waiting: 0 });
  });
});

describe("publish's options the adapter cannot hold", () => {
  it("refuses a job-level priority without the priorities capability, but not priority 0", async () => {
    const { tl } = client({ caps: { priorities: false } });
    const err = await refusal(tl.publish(task, { s: "x" }, { priority: 1 }));
    expect(err).toBeInstanceOf(UnsupportedError);
    expect((err as Error).message).toBe(
      "The partial adapter does not support job-level priorities: use separate lanes instead",
    );
    await expect(tl.publish(task, { s: "x" }, { priority: 0 })).resolves.toMatchObject({
      status: "created",
    });
  });

  it("refuses a delay past maxDelayMs, accepting exactly the maximum", async () => {
    const { tl } = client({ caps: { maxDelayMs: 1_000 } });
    const err = await refusal(tl.publish(task, { s: "x" }, { delayMs: 1_001 }));
    expect(err).toBeInstanceOf(UnsupportedError);
    expect((err as Error).message).toBe(
      "The partial adapter does not support a delay of 1001 ms: the maximum is 1000 ms",
    );
    await expect(tl.publish(task, { s: "x" }, { runAt: START + 1_000 })).resolves.toMatchObject({
      status: "created",
    });
  });

  it("refuses tags and expiry without their capabilities, but not an empty tag list", async () => {
    const { tl } = client({ caps: { tags: false, expiry: false } });
    const tags = await refusal(tl.publish(task, { s: "x" }, { tags: ["a"] }));
    expect((tags as Error).message).toBe("The partial adapter does not support tags: options.tags");
    await expect(tl.publish(task, { s: "x" }, { tags: [] })).resolves.toMatchObject({
      status: "created",
    });
    const expiry = await refusal(tl.publish(task, { s: "x" }, { expiresInMs: 10 }));
    expect((expiry as Error).message).toBe(
      "The partial adapter does not support job expiry: options.expiresInMs",
    );
  });
});
