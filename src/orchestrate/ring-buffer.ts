/**
 * A fixed-capacity buffer that keeps the newest items: a live view that runs for weeks holds the last
 * `capacity` samples and never more, however long it runs.
 */
export class RingBuffer<T> {
  private readonly items: (T | undefined)[];
  private next = 0;
  private count = 0;

  constructor(readonly capacity: number) {
    if (!Number.isInteger(capacity) || capacity < 1) throw new RangeError(`ring buffer capacity must be a whole number ≥ 1, got ${capacity}`);
    this.items = new Array<T | undefined>(capacity);
  }

  get size(): number {
    return this.count;
  }

  push(item: T): void {
    this.items[this.next] = item;
    this.next = (this.next + 1) % this.capacity;
    if (this.count < this.capacity) this.count++;
  }

  /** The newest item, or undefined when empty. */
  latest(): T | undefined {
    return this.count === 0 ? undefined : this.items[(this.next - 1 + this.capacity) % this.capacity];
  }

  /** The oldest item, or undefined when empty. */
  oldest(): T | undefined {
    return this.count === 0 ? undefined : this.items[(this.next - this.count + this.capacity) % this.capacity];
  }

  /** Puts `item` in the newest item's place (a buffer that keeps one item per period, see ThinnedHistory). */
  replaceLatest(item: T): void {
    if (this.count === 0) this.push(item);
    else this.items[(this.next - 1 + this.capacity) % this.capacity] = item;
  }

  /** Items oldest first; `last` limits it to the newest `last` of them. */
  toArray(last = this.count): T[] {
    const n = Math.max(0, Math.min(last, this.count));
    const out: T[] = [];
    for (let k = this.count - n; k < this.count; k++) {
      out.push(this.items[(this.next - this.count + k + this.capacity) % this.capacity] as T);
    }
    return out;
  }

  clear(): void {
    this.items.fill(undefined);
    this.next = 0;
    this.count = 0;
  }
}
