/** The NDJSON stream on its own: pulled, bounded, closed and failed as the API promises. */
import { describe, expect, it } from "vitest";
import { ndjsonStream } from "../src/ndjson.ts";

/** Counts what it yields and whether its `finally` ran (a for-await's cleanup). */
function source(count = Number.POSITIVE_INFINITY, failAt = -1) {
  const state = { yielded: 0, closed: false };
  async function* items() {
    try {
      for (let i = 0; i < count; i++) {
        if (i === failAt) throw new Error(`backend down at ${i}`);
        state.yielded++;
        yield { n: i };
      }
    } finally {
      state.closed = true;
    }
  }
  return { state, items: items() };
}

const options = {
  line: (item: { n: number }) => JSON.stringify(item),
  errorLine: (error: unknown) => JSON.stringify({ error: (error as Error).message }),
};

async function text(stream: ReadableStream<Uint8Array>): Promise<string> {
  return new Response(stream).text();
}

describe("ndjsonStream", () => {
  it("reads only as far as the reader asks: about one chunk ahead", async () => {
    const { state, items } = source();
    const stream = await ndjsonStream(items, options);
    const reader = stream.getReader();
    const first = await reader.read();
    const lines = new TextDecoder().decode(first.value).split("\n").length - 1;
    expect(lines).toBeGreaterThan(1_000);
    // The first chunk, and at most one more queued behind it: not the endless rest.
    expect(state.yielded).toBeLessThanOrEqual(2 * lines + 1);
    await reader.cancel();
    expect(state.closed).toBe(true);
  });

  it("skips offset items, stops after limit, and closes the source", async () => {
    const { state, items } = source(100);
    const out = await text(await ndjsonStream(items, { ...options, offset: 10, limit: 3 }));
    expect(out).toBe('{"n":10}\n{"n":11}\n{"n":12}\n');
    expect(state.closed).toBe(true);
  });

  it("ends with an error line when the source fails after the first item", async () => {
    const { items } = source(10, 3);
    const out = await text(await ndjsonStream(items, options));
    expect(out).toBe('{"n":0}\n{"n":1}\n{"n":2}\n{"error":"backend down at 3"}\n');
  });

  it("throws when the very first read fails, so the answer can carry an error status", async () => {
    const { items } = source(10, 0);
    await expect(ndjsonStream(items, options)).rejects.toThrow("backend down at 0");
  });

  it("sends nothing for an empty source", async () => {
    const { state, items } = source(0);
    expect(await text(await ndjsonStream(items, options))).toBe("");
    expect(state.closed).toBe(true);
  });
});
