/** A binary min-heap of timed events; ties run in scheduling order, so runs are reproducible. */
export interface TimedEvent {
  at: number;
  seq: number;
  run: () => void | Promise<void>;
}

export class EventHeap {
  private readonly items: TimedEvent[] = [];
  private seq = 0;

  get size(): number {
    return this.items.length;
  }

  push(at: number, run: () => void | Promise<void>): void {
    const items = this.items;
    items.push({ at, seq: this.seq++, run });
    let i = items.length - 1;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (!before(items[i]!, items[parent]!)) break;
      [items[i], items[parent]] = [items[parent]!, items[i]!];
      i = parent;
    }
  }

  pop(): TimedEvent | undefined {
    const items = this.items;
    const top = items[0];
    const last = items.pop();
    if (top === undefined || last === undefined || items.length === 0) return top;
    items[0] = last;
    let i = 0;
    for (;;) {
      const l = 2 * i + 1;
      const r = l + 1;
      let m = i;
      if (l < items.length && before(items[l]!, items[m]!)) m = l;
      if (r < items.length && before(items[r]!, items[m]!)) m = r;
      if (m === i) break;
      [items[i], items[m]] = [items[m]!, items[i]!];
      i = m;
    }
    return top;
  }
}

function before(a: TimedEvent, b: TimedEvent): boolean {
  return a.at < b.at || (a.at === b.at && a.seq < b.seq);
}
