/**
 * A small coalescing batcher: calls made in the same tick (from any number of callers)
 * are sent together, in requests of at most `maxEntries` items and `maxBytes` bytes. A
 * request leaves as soon as it is full, or on the next turn of the event loop. This is
 * what turns a hundred concurrent `ack` calls into ten DeleteMessageBatch requests.
 *
 * `send` returns one result per item, in order (per-entry outcomes are values), or throws
 * when the whole request failed: then every item of that request is rejected with it.
 */
export interface BatcherOptions<I, O> {
  /** Most items per request. */
  maxEntries: number;
  /** Most bytes per request (with `sizeOf`). Default unlimited. */
  maxBytes?: number;
  sizeOf?: (item: I) => number;
  send: (items: I[]) => Promise<O[]>;
}

export interface Batcher<I, O> {
  add(item: I): Promise<O>;
  /** Send what is queued now and wait until every request in flight has settled. */
  drain(): Promise<void>;
}

interface Pending<I, O> {
  item: I;
  bytes: number;
  resolve: (value: O) => void;
  reject: (reason: unknown) => void;
}

export function createBatcher<I, O>(options: BatcherOptions<I, O>): Batcher<I, O> {
  const { maxEntries, send } = options;
  const maxBytes = options.maxBytes ?? Number.POSITIVE_INFINITY;
  const sizeOf = options.sizeOf;
  let queue: Pending<I, O>[] = [];
  let queuedBytes = 0;
  let scheduled = false;
  const inFlight = new Set<Promise<void>>();

  const dispatch = (batch: Pending<I, O>[]) => {
    const p = (async () => {
      try {
        const results = await send(batch.map((b) => b.item));
        batch.forEach((b, i) => {
          b.resolve(results[i] as O);
        });
      } catch (error) {
        for (const b of batch) b.reject(error);
      }
    })();
    inFlight.add(p);
    void p.finally(() => inFlight.delete(p));
  };

  const flush = () => {
    scheduled = false;
    const all = queue;
    queue = [];
    queuedBytes = 0;
    let batch: Pending<I, O>[] = [];
    let bytes = 0;
    for (const p of all) {
      if (batch.length > 0 && (batch.length >= maxEntries || bytes + p.bytes > maxBytes)) {
        dispatch(batch);
        batch = [];
        bytes = 0;
      }
      batch.push(p);
      bytes += p.bytes;
    }
    if (batch.length > 0) dispatch(batch);
  };

  return {
    add(item) {
      return new Promise<O>((resolve, reject) => {
        const bytes = sizeOf ? sizeOf(item) : 0;
        // Would this item overflow the request being built? Send what we have first.
        if (queue.length > 0 && queuedBytes + bytes > maxBytes) flush();
        queue.push({ item, bytes, resolve, reject });
        queuedBytes += bytes;
        if (queue.length >= maxEntries) flush();
        else if (!scheduled) {
          scheduled = true;
          setImmediate(flush);
        }
      });
    },
    async drain() {
      if (queue.length > 0) flush();
      while (inFlight.size > 0) await Promise.allSettled([...inFlight]);
    },
  };
}
