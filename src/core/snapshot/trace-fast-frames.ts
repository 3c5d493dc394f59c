/**
 * The trace fast path's frame lists: EMPTY_LIST, an optional memo slot, then MARK frames… APPENDS, one
 * frame + APPEND, or nothing. Each frame (a memoised dict, or a dict written inline as PyTorch's C++ writer
 * does) becomes a frame id and the list a stack id; the list's memo slot then points at the shared
 * canonical list. Every method returns the position after what it read, or -1 to make the whole entry fall
 * back to the general machine.
 */
import { PENDING_CODE, type Memo } from './memo.js';
import { OP } from './opcodes.js';
import { EMPTY_STACK } from './stacks.js';
import type { TraceBuilder } from './trace-columns.js';
import { readI32, readU32 } from './unpickle-read.js';
import type { Strings } from './unpickle-strings.js';

export const FAIL = -1;
const MISS = -2;
const NOT_CACHED = -3;
const STACK_CACHE_BITS = 12;

export class FrameListReader {
  /** The stack id of the list just read. */
  stack = EMPTY_STACK;
  /** Position after the last value read by scalar(). */
  private at = 0;
  /** Per memo value code: 1 + frame id of a frame value, or 0 when not looked up yet. */
  private frameOfCode: Int32Array = new Int32Array(1024);
  /** Per stack id: the memo value code of its canonical list, or 0 when it has none yet (codes ≥ 1 here). */
  private stackCodes: Int32Array = new Int32Array(1024);
  /** Estimated bytes of frame dicts built inline, for the caller's budget. */
  builtBytes = 0;
  private readonly cacheKeys: Array<Uint8Array | undefined> = new Array(1 << STACK_CACHE_BITS);
  private readonly cacheStacks = new Int32Array(1 << STACK_CACHE_BITS);
  private cacheEpoch = 0;
  private pendingSlot = 0;
  private pendingKey: Uint8Array | undefined;

  constructor(
    private readonly memo: Memo,
    private readonly strings: Strings,
    private readonly builder: TraceBuilder,
  ) {}

  /** The list at b[p] (EMPTY_LIST); sets this.stack. */
  read(b: Uint8Array, p: number, end: number): number {
    const memo = this.memo;
    const slot = memo.length;
    p = memoize(memo, b, p + 1, end, PENDING_CODE);
    if (p < 0 || p >= end) return FAIL;
    const stacks = this.builder.stacks;
    let stack = EMPTY_STACK;
    if (b[p] === OP.MARK) {
      p++;
      const cached = this.cachedStack(b, p, end);
      if (cached >= 0) {
        stack = cached;
        p = this.at;
      } else for (;;) {
        if (p >= end) return FAIL;
        const op = b[p] as number;
        if (op === OP.BINGET || op === OP.LONG_BINGET) {
          const width = op === OP.BINGET ? 1 : 4;
          if (end - p <= width) return FAIL;
          const frame = this.memoFrame(width === 1 ? (b[p + 1] as number) : readU32(b, p + 1));
          if (frame < 0) return FAIL;
          stack = stacks.child(stack, frame);
          p += 1 + width;
        } else if (op === OP.APPENDS) {
          p++;
          break;
        } else if (op === OP.EMPTY_DICT) {
          const frame = this.frameDict(b, p, end);
          if (frame < 0) return FAIL;
          stack = stacks.child(stack, frame);
          p = this.at;
        } else if (op === OP.FRAME && end - p >= 9) p += 9;
        else return FAIL;
      }
      if (cached === MISS) this.remember(stack);
    } else {
      // One frame then APPEND; otherwise the list is empty and what follows is the entry's next key.
      const memoLength = memo.length;
      const op = b[p];
      let frame = FAIL;
      let q = FAIL;
      if ((op === OP.BINGET && end - p >= 2) || (op === OP.LONG_BINGET && end - p >= 5)) {
        frame = this.memoFrame(op === OP.BINGET ? (b[p + 1] as number) : readU32(b, p + 1));
        q = p + (op === OP.BINGET ? 2 : 5);
      } else if (op === OP.EMPTY_DICT) {
        frame = this.frameDict(b, p, end);
        q = this.at;
      }
      if (frame >= 0 && q < end && b[q] === OP.APPEND) {
        stack = stacks.child(stack, frame);
        p = q + 1;
      } else memo.truncate(memoLength);
    }
    if (memo.length > slot) memo.fill(slot, this.stackCode(stack));
    this.stack = stack;
    return p;
  }

  /**
   * The stack of a list body that is only memo reads (BINGET/LONG_BINGET … APPENDS), looked up by its bytes:
   * the same stack is written with the same bytes every time, so one hash over a dozen bytes replaces a trie
   * walk. Returns the stack id (position after APPENDS in this.at), MISS (body remembered for remember()),
   * or NOT_CACHED. Entries are dropped whenever a memo slot is overwritten or taken back (memo.epoch).
   */
  private cachedStack(b: Uint8Array, p: number, end: number): number {
    let q = p;
    let h = 0x811c9dc5 | 0; // an int32 from the start, so the loop never works in doubles
    for (;;) {
      if (q >= end) return NOT_CACHED;
      const op = b[q] as number;
      if (op === OP.BINGET) {
        if (end - q < 2) return NOT_CACHED;
        h = Math.imul(h ^ (b[q + 1] as number), 0x01000193);
        q += 2;
      } else if (op === OP.LONG_BINGET) {
        if (end - q < 5) return NOT_CACHED;
        h = Math.imul(h ^ (readU32(b, q + 1) | 0x40000000), 0x01000193);
        q += 5;
      } else if (op === OP.APPENDS) break;
      else return NOT_CACHED;
    }
    if (this.memo.epoch !== this.cacheEpoch) {
      this.cacheKeys.fill(undefined);
      this.cacheEpoch = this.memo.epoch;
    }
    const slot = (h >>> 0) >>> (32 - STACK_CACHE_BITS);
    const key = this.cacheKeys[slot];
    if (key !== undefined && key.length === q - p && sameBytes(key, b, p)) {
      this.at = q + 1;
      return this.cacheStacks[slot] as number;
    }
    this.pendingSlot = slot;
    this.pendingKey = b.slice(p, q);
    return MISS;
  }

  private remember(stack: number): void {
    this.cacheKeys[this.pendingSlot] = this.pendingKey;
    this.cacheStacks[this.pendingSlot] = stack;
  }

  /** The frame id of memo slot `index`, or -1 when the slot is unset or not readable. */
  private memoFrame(index: number): number {
    if (index >= this.memo.length) return FAIL;
    const code = this.memo.code(index);
    if (code < 0) return FAIL;
    if (code >= this.frameOfCode.length) this.frameOfCode = grow(this.frameOfCode, code);
    let id = this.frameOfCode[code] as number;
    if (id === 0) id = this.frameOfCode[code] = 1 + this.builder.stacks.frameId(this.memo.values[code]);
    return id - 1;
  }

  /** An inline frame dict (string keys, scalar values; MARK … SETITEMS or one key + SETITEM). Its frame id; the position after it in this.at. */
  private frameDict(b: Uint8Array, p: number, end: number): number {
    const memo = this.memo;
    const dict: Record<string, unknown> = {};
    const slot = memo.length;
    p = memoize(memo, b, p + 1, end, 0);
    if (p < 0 || p >= end) return FAIL;
    if (memo.length > slot) memo.fill(slot, memo.add(dict));
    const batch = b[p] === OP.MARK;
    if (batch) p++;
    for (let items = 0; ; items++) {
      if (p >= end) return FAIL;
      if (batch ? b[p] === OP.SETITEMS : items === 1) {
        if (b[p] !== (batch ? OP.SETITEMS : OP.SETITEM)) return FAIL;
        break;
      }
      const name = this.scalar(b, p, end);
      if (typeof name !== 'string') return FAIL;
      const value = this.scalar(b, this.at, end);
      if (value === undefined) return FAIL;
      // "__proto__" must stay an own property, never the object's prototype.
      if (name === '__proto__') Object.defineProperty(dict, name, { value, enumerable: true, writable: true, configurable: true });
      else dict[name] = value;
      p = this.at;
    }
    this.at = p + 1;
    const id = this.builder.stacks.frameId(dict);
    if (memo.length > slot) {
      // Only a memoised dict stays alive; an inline one (PyTorch's C++ writer) is garbage once interned.
      this.builtBytes += 64 + 16 * Object.keys(dict).length;
      const code = memo.code(slot);
      if (code >= this.frameOfCode.length) this.frameOfCode = grow(this.frameOfCode, code);
      this.frameOfCode[code] = 1 + id;
    }
    return id;
  }

  /** A scalar at b[p] (string, small int, None, memoised non-container); undefined for anything else. */
  private scalar(b: Uint8Array, p: number, end: number): unknown {
    if (p >= end) return undefined;
    const op = b[p];
    if (op === OP.SHORT_BINUNICODE || op === OP.BINUNICODE) {
      const head = op === OP.SHORT_BINUNICODE ? 2 : 5;
      if (end - p < head) return undefined;
      const n = head === 2 ? (b[p + 1] as number) : readU32(b, p + 1);
      if (end - p - head < n) return undefined;
      const s = this.strings.utf8(b, p + head, n);
      this.at = memoize(this.memo, b, p + head + n, end, this.strings.code(s));
      return this.at < 0 ? undefined : s;
    }
    if ((op === OP.BINGET && end - p >= 2) || (op === OP.LONG_BINGET && end - p >= 5)) {
      const index = op === OP.BINGET ? (b[p + 1] as number) : readU32(b, p + 1);
      const code = index < this.memo.length ? this.memo.code(index) : FAIL;
      const v = code < 0 ? undefined : this.memo.values[code];
      this.at = p + (op === OP.BINGET ? 2 : 5);
      return typeof v === 'object' && v !== null ? undefined : v;
    }
    let v: number | null;
    if (op === OP.BININT1 && end - p >= 2) v = b[p + 1] as number;
    else if (op === OP.BININT2 && end - p >= 3) v = (b[p + 1] as number) | ((b[p + 2] as number) << 8);
    else if (op === OP.BININT && end - p >= 5) v = readI32(b, p + 1);
    else if (op === OP.NONE) v = null;
    else return undefined;
    this.at = p + (op === OP.BININT1 ? 2 : op === OP.BININT2 ? 3 : op === OP.BININT ? 5 : 1);
    return v;
  }

  private stackCode(stack: number): number {
    if (stack >= this.stackCodes.length) this.stackCodes = grow(this.stackCodes, stack);
    let code = (this.stackCodes[stack] as number) - 1;
    if (code < 0) {
      code = this.memo.add(this.builder.stacks.stacks[stack]);
      this.stackCodes[stack] = code + 1;
    }
    return code;
  }
}

/** An optional MEMOIZE, or BINPUT/LONG_BINPUT of the next slot, at b[p]: stores `code`. Other memo writes fall back. */
export function memoize(memo: Memo, b: Uint8Array, p: number, end: number, code: number): number {
  while (p < end && b[p] === OP.FRAME) {
    if (end - p < 9) return FAIL;
    p += 9;
  }
  if (p >= end) return p;
  const op = b[p];
  if (op === OP.MEMOIZE) {
    memo.push(code);
    return p + 1;
  }
  if (op === OP.BINPUT || op === OP.LONG_BINPUT) {
    const width = op === OP.BINPUT ? 1 : 4;
    if (end - p <= width) return FAIL;
    if ((width === 1 ? b[p + 1] : readU32(b, p + 1)) !== memo.length) return FAIL;
    memo.push(code);
    return p + 1 + width;
  }
  return p;
}

function sameBytes(known: Uint8Array, b: Uint8Array, p: number): boolean {
  for (let i = 0; i < known.length; i++) if (known[i] !== b[p + i]) return false;
  return true;
}

/** A copy of `a` long enough to index `index`. */
export function grow(a: Int32Array, index: number): Int32Array {
  const out = new Int32Array(Math.max(index + 1, a.length * 2));
  out.set(a);
  return out;
}
