/**
 * The unpickler's memo, compact: one int32 code per slot, in chunks (so it never doubles and copies a
 * multi-hundred-MB array), pointing into a table of distinct values. Python's pickler memoises every dict,
 * list and string, so a 1 GB snapshot has tens of millions of slots; most of them are trace entries that
 * are never read back, and they all share one code (ENTRY_CODE) instead of each holding an object.
 */

const CHUNK_BITS = 16;
const CHUNK = 1 << CHUNK_BITS;

/** Code of a slot that holds a trace entry or trace list the columnar reader did not keep as a value. */
export const ENTRY_CODE = -1;
/** Code of a slot whose value is still being built by the trace fast path. */
export const PENDING_CODE = -2;

export class Memo {
  private chunks: Int32Array[] = [];
  /** Distinct values; a code ≥ 0 is an index here. */
  readonly values: unknown[] = [];
  length = 0;
  /** Bumped whenever a slot changes meaning (overwritten, or taken back): caches keyed by slot index check it. */
  epoch = 0;

  /** The code of slot i (i < length). */
  code(i: number): number {
    return (this.chunks[i >>> CHUNK_BITS] as Int32Array)[i & (CHUNK - 1)] as number;
  }

  /** Stores `code` in slot i, which is at most `length` (writers number slots in order). */
  put(i: number, code: number): void {
    if (i === this.length) {
      if ((i & (CHUNK - 1)) === 0) this.chunks.push(new Int32Array(CHUNK));
      this.length++;
    } else this.epoch++;
    (this.chunks[i >>> CHUNK_BITS] as Int32Array)[i & (CHUNK - 1)] = code;
  }

  /** Gives a slot pushed as a placeholder (PENDING_CODE) its value; unlike put() it does not change the epoch. */
  fill(i: number, code: number): void {
    (this.chunks[i >>> CHUNK_BITS] as Int32Array)[i & (CHUNK - 1)] = code;
  }

  /** Appends a slot with `code`. */
  push(code: number): void {
    this.put(this.length, code);
  }

  /** Adds a value to the table and returns its code. */
  add(value: unknown): number {
    this.values.push(value);
    return this.values.length - 1;
  }

  /** Drops slots from `length` on (used to undo a fast-path attempt that fell back). */
  truncate(length: number): void {
    if (length < this.length) this.epoch++;
    this.length = length;
    this.chunks.length = (length + CHUNK - 1) >>> CHUNK_BITS;
  }

  /** Estimated bytes: 4 per slot and 8 per table entry. */
  get bytes(): number {
    return this.chunks.length * CHUNK * 4 + this.values.length * 8;
  }

  clear(): void {
    this.chunks = [];
    this.values.length = 0;
    this.length = 0;
  }
}
