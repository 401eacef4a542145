/**
 * A first-in first-out queue with O(1) push and shift (an array with a moving head,
 * compacted once the consumed part is the larger half), for the worker's jobs waiting for
 * a slot. `Array.prototype.shift` moves every element on each call.
 */
export class Fifo<T> {
  #items: Array<T | undefined> = [];
  #head = 0;

  get size(): number {
    return this.#items.length - this.#head;
  }

  push(item: T): void {
    this.#items.push(item);
  }

  shift(): T | undefined {
    if (this.#head === this.#items.length) return undefined;
    const item = this.#items[this.#head];
    this.#items[this.#head++] = undefined;
    if (this.#head === this.#items.length) {
      this.#items.length = 0;
      this.#head = 0;
    } else if (this.#head >= 1024 && this.#head * 2 >= this.#items.length) {
      this.#items = this.#items.slice(this.#head);
      this.#head = 0;
    }
    return item;
  }
}
