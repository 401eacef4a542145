/**
 * NDJSON (one JSON value per line) from an async iterable, pulled: the next page is read
 * from the backend only when the client has taken what was sent (the server's socket
 * drained), so memory stays flat however many items there are.
 */

/** Lines are gathered into chunks of about this many bytes: one write per chunk, not per line. */
const CHUNK_CHARS = 64 * 1024;

export interface NdjsonOptions<T> {
  /** Turn one item into one line's JSON (no newline). */
  line: (item: T) => string;
  /** The line sent, last, when reading fails after the answer has started. */
  errorLine: (error: unknown) => string;
  /** A last line once every item is sent (none when it gives undefined, or the reader left). */
  trailer?: () => string | undefined;
  /** Skip this many items first. */
  offset?: number;
  /** Send at most this many. */
  limit?: number;
}

/**
 * Start reading `items` and return the stream of lines, or throw what the first read
 * throws: a failure before anything is sent still gets a proper error status.
 */
export async function ndjsonStream<T>(
  items: AsyncIterable<T>,
  options: NdjsonOptions<T>,
): Promise<ReadableStream<Uint8Array>> {
  const iterator = items[Symbol.asyncIterator]();
  const encoder = new TextEncoder();
  let toSkip = options.offset ?? 0;
  let left = options.limit ?? Number.POSITIVE_INFINITY;
  let finished = false;
  const finish = async () => {
    if (finished) return;
    finished = true;
    // Ends a for-await the adapter runs (a memory list parks a cursor until then).
    await iterator.return?.();
  };
  let first: IteratorResult<T> | undefined = left > 0 ? await iterator.next() : undefined;
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      let text = "";
      let failed = false;
      try {
        while (left > 0 && text.length < CHUNK_CHARS) {
          const next = first ?? (await iterator.next());
          first = undefined;
          if (next.done) {
            left = 0;
            break;
          }
          if (toSkip > 0) {
            toSkip--;
            continue;
          }
          text += `${options.line(next.value)}\n`;
          left--;
        }
      } catch (error) {
        text += `${options.errorLine(error)}\n`;
        failed = true;
        left = 0;
      }
      if (left === 0 && !failed) {
        const last = options.trailer?.();
        if (last !== undefined) text += `${last}\n`;
      }
      if (text !== "") controller.enqueue(encoder.encode(text));
      if (left === 0) {
        await finish();
        controller.close();
      }
    },
    async cancel() {
      // The client went away: stop reading the backend.
      await finish();
    },
  });
}
