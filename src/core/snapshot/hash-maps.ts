/**
 * Two open-addressing hash maps over typed arrays, for the hot loops of the snapshot reader and the trace
 * replay, where a JS Map costs a boxed number per key and a GC-visible entry per slot: PairMap maps a pair of
 * small non-negative ints to an int (the stack trie: parent stack id + frame id → stack id), AddrMap maps an
 * address (an integer below 2^53) to an int and supports deletion (the live set of a trace replay).
 */

const EMPTY = -1;

function mix(lo: number, hi: number): number {
  return Math.imul(lo ^ Math.imul(hi, 0x9e3779b1), 0x85ebca6b) ^ (hi >>> 15);
}

/** (a, b) → value, with a and b non-negative int32. Insert and look up only. */
export class PairMap {
  private keysA: Int32Array;
  private keysB: Int32Array;
  private values: Int32Array;
  private bits: number;
  size = 0;

  constructor(initialBits = 10) {
    this.bits = initialBits;
    this.keysA = new Int32Array(1 << initialBits).fill(EMPTY);
    this.keysB = new Int32Array(1 << initialBits);
    this.values = new Int32Array(1 << initialBits);
  }

  /** The value stored for (a, b), or -1. */
  get(a: number, b: number): number {
    const mask = (1 << this.bits) - 1;
    let i = mix(a, b) >>> (32 - this.bits);
    for (;;) {
      const k = this.keysA[i] as number;
      if (k === EMPTY) return -1;
      if (k === a && this.keysB[i] === b) return this.values[i] as number;
      i = (i + 1) & mask;
    }
  }

  /** Stores (a, b) → value; (a, b) must not be present yet. */
  set(a: number, b: number, value: number): void {
    if ((this.size + 1) * 2 > 1 << this.bits) this.grow();
    this.place(a, b, value);
    this.size++;
  }

  /** Bytes held by the tables. */
  get bytes(): number {
    return 12 << this.bits;
  }

  private place(a: number, b: number, value: number): void {
    const mask = (1 << this.bits) - 1;
    let i = mix(a, b) >>> (32 - this.bits);
    while (this.keysA[i] !== EMPTY) i = (i + 1) & mask;
    this.keysA[i] = a;
    this.keysB[i] = b;
    this.values[i] = value;
  }

  private grow(): void {
    const { keysA, keysB, values } = this;
    this.bits++;
    this.keysA = new Int32Array(1 << this.bits).fill(EMPTY);
    this.keysB = new Int32Array(1 << this.bits);
    this.values = new Int32Array(1 << this.bits);
    for (let i = 0; i < keysA.length; i++) if (keysA[i] !== EMPTY) this.place(keysA[i] as number, keysB[i] as number, values[i] as number);
  }
}

/**
 * number → int32 value, for addresses (integers below 2^53, but any number works: NaN, which marks an empty
 * slot, is kept aside so that the map behaves like a JS Map for every key). Deletion shifts later
 * entries of the probe run back (no tombstones), so a long replay with millions of alloc/free pairs keeps
 * the table as small as the live set.
 */
export class AddrMap {
  private keys: Float64Array;
  private values: Int32Array;
  private bits: number;
  private nanValue: number | null = null;
  size = 0;

  constructor(initialBits = 12) {
    this.bits = initialBits;
    this.keys = new Float64Array(1 << initialBits).fill(NaN);
    this.values = new Int32Array(1 << initialBits);
  }

  private slot(key: number): number {
    return mix(key >>> 0, (key / 4294967296) | 0) >>> (32 - this.bits);
  }

  /** The slot holding key (a NaN key is not stored in slots: use get/set/delete for it), or -1. */
  find(key: number): number {
    const mask = (1 << this.bits) - 1;
    let i = this.slot(key);
    for (;;) {
      const k = this.keys[i] as number;
      if (k === key) return i;
      if (k !== k) return -1; // NaN: empty
      i = (i + 1) & mask;
    }
  }

  /** The value in a slot returned by find(). */
  valueAt(slot: number): number {
    return this.values[slot] as number;
  }

  /** Replaces the value in a slot returned by find(). */
  setValueAt(slot: number, value: number): void {
    this.values[slot] = value;
  }

  has(key: number): boolean {
    if (key !== key) return this.nanValue !== null;
    return this.find(key) >= 0;
  }

  /** The value for key, or `missing`. */
  get(key: number, missing: number): number {
    if (key !== key) return this.nanValue ?? missing;
    const i = this.find(key);
    return i < 0 ? missing : (this.values[i] as number);
  }

  set(key: number, value: number): void {
    if (key !== key) {
      if (this.nanValue === null) this.size++;
      this.nanValue = value;
      return;
    }
    const i = this.find(key);
    if (i >= 0) {
      this.values[i] = value;
      return;
    }
    if ((this.size + 1) * 2 > 1 << this.bits) this.grow();
    this.place(key, value);
    this.size++;
  }

  /** Removes key; true when it was present. */
  delete(key: number): boolean {
    if (key !== key) {
      if (this.nanValue === null) return false;
      this.nanValue = null;
      this.size--;
      return true;
    }
    const i = this.find(key);
    if (i < 0) return false;
    this.removeAt(i);
    return true;
  }

  /** Removes the entry in a slot returned by find(). */
  removeAt(slot: number): void {
    let i = slot;
    const mask = (1 << this.bits) - 1;
    // Backward-shift deletion: move later members of the run into the hole when their home allows it.
    let j = i;
    for (;;) {
      j = (j + 1) & mask;
      const k = this.keys[j] as number;
      if (k !== k) break;
      const home = this.slot(k);
      const between = i <= j ? home > i && home <= j : home > i || home <= j;
      if (between) continue;
      this.keys[i] = k;
      this.values[i] = this.values[j] as number;
      i = j;
    }
    this.keys[i] = NaN;
    this.size--;
  }

  /** Calls fn(key, value) for every entry, in table order. */
  forEach(fn: (key: number, value: number) => void): void {
    const { keys, values } = this;
    for (let i = 0; i < keys.length; i++) {
      const k = keys[i] as number;
      if (k === k) fn(k, values[i] as number);
    }
    if (this.nanValue !== null) fn(NaN, this.nanValue);
  }

  private place(key: number, value: number): void {
    const mask = (1 << this.bits) - 1;
    let i = this.slot(key);
    while (this.keys[i] === this.keys[i]) i = (i + 1) & mask;
    this.keys[i] = key;
    this.values[i] = value;
  }

  private grow(): void {
    const { keys, values } = this;
    this.bits++;
    this.keys = new Float64Array(1 << this.bits).fill(NaN);
    this.values = new Int32Array(1 << this.bits);
    for (let i = 0; i < keys.length; i++) {
      const k = keys[i] as number;
      if (k === k) this.place(k, values[i] as number);
    }
  }
}
