/**
 * Jobs a worker cannot run (written by a foreign producer or an older deploy, or marked
 * malformed by the adapter) go dead at once, with an error that says why.
 */
import { createManualClock, createMemoryAdapter } from "@tasklane/adapter-memory";
import { afterEach, describe, expect, it } from "vitest";
import { z } from "zod";
import type { Adapter, JobError, NewJob } from "../src/adapter.ts";
import { createTasklane, defineTask, type Tasklane } from "../src/index.ts";
import { bend } from "./bent-adapter.ts";

const open: Tasklane[] = [];
afterEach(async () => {
  await Promise.all(open.splice(0).map((tl) => tl.close({ graceMs: 0 })));
});

const known = defineTask({
  name: "known",
  lane: "q",
  schema: z.object({ ok: z.boolean() }),
  run: () => {},
});

/** Put `raw` jobs straight into the lane, run a worker until they have failed; their errors. */
async function deadErrors(
  raw: Array<Partial<NewJob> & { id: string }>,
  options: { maxPayloadBytes?: number; malformed?: Record<string, string> } = {},
): Promise<Record<string, JobError | undefined>> {
  const clock = createManualClock();
  const memory = createMemoryAdapter({ clock });
  const marks = options.malformed;
  const adapter: Adapter =
    marks === undefined
      ? memory
      : bend(memory, {
          lane: (store) => ({
            reserve: async (o: Parameters<typeof store.reserve>[0]) => {
              const result = await store.reserve(o);
              for (const job of result.jobs) {
                const mark = marks[job.id];
                if (mark !== undefined) job.malformed = mark;
              }
              return result;
            },
          }),
        });
  const tl = createTasklane({
    adapter,
    clock,
    lanes: [{ name: "q" }],
    tasks: [known],
    ...(options.maxPayloadBytes ? { maxPayloadBytes: options.maxPayloadBytes } : {}),
  });
  open.push(tl);
  const store = await memory.lane("q", { maxStalls: 3, historyLimit: 20 });
  await store.put(
    raw.map((j) => ({ task: "known", payload: '{"ok":true}', priority: 0, publishedAt: 0, ...j })),
  );
  const failed: Record<string, JobError | undefined> = {};
  let succeeded = 0;
  tl.events.on("failed", (e) => {
    failed[e.jobId] = e.error;
  });
  tl.events.on("succeeded", () => {
    succeeded++;
  });
  await tl.worker().start();
  for (let i = 0; i < 200 && Object.keys(failed).length + succeeded < raw.length; i++) {
    await clock.advance(5);
  }
  for (const id of Object.keys(failed)) {
    expect((await tl.getJob(id))?.state).toBe("failed");
  }
  return failed;
}

describe("a job the worker cannot run", () => {
  it("goes dead naming an unknown task, a payload that is not JSON, or one its schema refuses", async () => {
    const errors = await deadErrors([
      { id: "ghost", task: "nobody-knows-me", payload: "{}" },
      { id: "garbled", payload: "{not json" },
      { id: "wrong", payload: '{"ok":"yes"}' },
      { id: "fine" },
    ]);
    expect(errors.ghost).toEqual({
      name: "UnknownTaskError",
      message: 'No worker task named "nobody-knows-me"',
      reason: "unknown_task",
    });
    expect(errors.garbled).toMatchObject({ name: "SyntaxError", reason: "malformed" });
    expect(errors.wrong).toMatchObject({ name: "ValidationError", reason: "invalid_payload" });
    expect(errors.wrong?.message).toMatch(/^Payload for task "known" failed its schema: ok: /);
    expect(errors.fine).toBeUndefined();
  });

  it("goes dead when its payload and appData are over maxPayloadBytes, without parsing them", async () => {
    // '{"ok":true}' is 11 bytes
    const errors = await deadErrors(
      [
        { id: "exact", payload: '{"ok":true}' },
        { id: "big", payload: '{"ok":true} ' },
        { id: "data", payload: '{"ok":true}', appData: '"a"' },
        { id: "wide", payload: '{"ok":true}', appData: `"${"€".repeat(10)}"` },
      ],
      { maxPayloadBytes: 11 },
    );
    expect(errors.exact).toBeUndefined();
    expect(errors.big).toEqual({
      name: "PayloadTooLargeError",
      message: "Payload of job big is 12 bytes encoded, over the limit of 11 bytes",
      reason: "payload_too_large",
      stack: expect.any(String),
    });
    expect(errors.data?.message).toBe(
      "Payload of job data is 14 bytes encoded, over the limit of 11 bytes",
    );
    expect(errors.wide?.message).toBe(
      "Payload of job wide is 43 bytes encoded, over the limit of 11 bytes",
    );
  });

  it("counts a large appData with a small payload", async () => {
    const errors = await deadErrors(
      [{ id: "d", payload: '{"ok":true}', appData: `"${"a".repeat(28)}"` }],
      { maxPayloadBytes: 40 },
    );
    expect(errors.d?.message).toBe(
      "Payload of job d is 41 bytes encoded, over the limit of 40 bytes",
    );
  });

  it("goes dead as malformed when the adapter marks it so", async () => {
    const errors = await deadErrors([{ id: "m" }, { id: "ok" }], {
      malformed: { m: "message body is not a job" },
    });
    expect(errors.m).toEqual({
      name: "MalformedJobError",
      message: "message body is not a job",
      reason: "malformed",
    });
    expect(errors.ok).toBeUndefined();
  });
});
