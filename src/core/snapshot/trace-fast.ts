/**
 * The fast path for trace entries. When the columnar reader meets a dict inside a device's trace list it
 * reads that entry, and the entries right after it, here: straight from the bytes into rows of columns.
 * Keys are matched through their memo slot, numbers never become JS values, the frame list becomes a stack
 * id. Only the shapes PyTorch's writers produce are taken (a MARK … SETITEMS or single SETITEM body, scalar
 * values, small int tuples, frame lists); anything else, or an entry cut by the end of the chunk, stops the
 * run with that entry's memo slots undone, and the general stack machine reads it instead, into the same
 * columns with the same rules (TraceBuilder.setField).
 */
import { ENTRY_CODE, type Memo } from './memo.js';
import { fieldError, listAt, textAt } from './fields.js';
import { num } from './model.js';
import { OTHER_ACTION } from './model-types.js';
import { OP } from './opcodes.js';
import { EMPTY_STACK } from './stacks.js';
import { actionCode, OOM_ACTION, type TraceBuilder } from './trace-columns.js';
import { FAIL, FrameListReader, grow, memoize } from './trace-fast-frames.js';
import { readF64, readI32, readLong, readU32 } from './unpickle-read.js';
import type { Strings } from './unpickle-strings.js';

const F_OTHER = 0;
const F_ACTION = 1;
const F_ADDR = 2;
const F_DEVICE_FREE = 3;
const F_SIZE = 4;
const F_STREAM = 5;
const F_TIME = 6;
const F_FRAMES = 7;
const FIELDS = new Map([['action', F_ACTION], ['addr', F_ADDR], ['device_free', F_DEVICE_FREE], ['size', F_SIZE], ['stream', F_STREAM], ['time_us', F_TIME], ['frames', F_FRAMES]]);
const FIELD_NAMES = ['', ...FIELDS.keys()];
/** Entries read per call at most, so the caller checks its memory budget between runs. */
const MAX_RUN = 1024;

export class FastEntryReader {
  /** Rows committed by the last read(). */
  count = 0;
  private action = OTHER_ACTION;
  private otherName: string | null = null;
  private addr = 0;
  private deviceFree = 0;
  private size = 0;
  private stream = 0;
  private time = NaN;
  private stack = EMPTY_STACK;
  private at = 0;
  /** Per memo value code: 1 + field of a key string, 1 + action code of an action string; 0 when not looked up. */
  private fieldOfCode: Int32Array = new Int32Array(1024);
  private actionOfCode: Int32Array = new Int32Array(1024);
  private readonly tupleCodes = new Map<string, number>();
  private readonly frames: FrameListReader;

  constructor(
    private readonly memo: Memo,
    private readonly strings: Strings,
    private readonly builder: TraceBuilder,
  ) {
    this.frames = new FrameListReader(memo, strings, builder);
  }

  /** Estimated bytes of frame dicts built inline so far. */
  get builtBytes(): number {
    return this.frames.builtBytes;
  }

  /** Reads entries from b[p] (an EMPTY_DICT) into rows; returns the position after the last one, or -1 (count 0). */
  read(b: Uint8Array, p: number, end: number): number {
    const memo = this.memo;
    const builder = this.builder;
    let last = FAIL;
    this.count = 0;
    while (this.count < MAX_RUN) {
      const memoLength = memo.length;
      this.action = OTHER_ACTION;
      this.otherName = null;
      this.addr = this.deviceFree = this.size = this.stream = 0;
      this.time = NaN;
      this.stack = EMPTY_STACK;
      const q = this.entry(b, p, end);
      if (q < 0) {
        memo.truncate(memoLength);
        break;
      }
      builder.commit(this.action, this.otherName, this.action === OOM_ACTION ? this.deviceFree : this.addr, this.size, this.stream, this.time, this.stack);
      this.count++;
      last = p = q;
      if (p >= end || b[p] !== OP.EMPTY_DICT) break;
    }
    return last;
  }

  private entry(b: Uint8Array, p: number, end: number): number {
    p = memoize(this.memo, b, p + 1, end, ENTRY_CODE);
    if (p < 0 || p >= end) return FAIL;
    if (b[p] !== OP.MARK) {
      p = this.item(b, p, end);
      return p >= 0 && p < end && b[p] === OP.SETITEM ? p + 1 : FAIL;
    }
    p++;
    for (;;) {
      if (p >= end) return FAIL;
      const op = b[p];
      if (op === OP.SETITEMS) return p + 1;
      if (op === OP.FRAME) {
        if (end - p < 9) return FAIL;
        p += 9;
        continue;
      }
      p = this.item(b, p, end);
      if (p < 0) return FAIL;
    }
  }

  /** One key and its value. */
  private item(b: Uint8Array, p: number, end: number): number {
    const memo = this.memo;
    let op = b[p];
    let field: number;
    if ((op === OP.BINGET && end - p >= 2) || (op === OP.LONG_BINGET && end - p >= 5)) {
      const index = op === OP.BINGET ? (b[p + 1] as number) : readU32(b, p + 1);
      p += op === OP.BINGET ? 2 : 5;
      if (index >= memo.length) return FAIL;
      const code = memo.code(index);
      if (code < 0) return FAIL;
      if (code >= this.fieldOfCode.length) this.fieldOfCode = grow(this.fieldOfCode, code);
      field = (this.fieldOfCode[code] as number) - 1;
      if (field < 0) {
        const key = memo.values[code];
        if (typeof key !== 'string') return FAIL;
        field = FIELDS.get(key) ?? F_OTHER;
        this.fieldOfCode[code] = field + 1;
      }
    } else {
      const key = this.text(b, p, end);
      if (key === null) return FAIL;
      field = FIELDS.get(key) ?? F_OTHER;
      p = memoize(memo, b, this.at, end, this.strings.code(key));
    }
    while (p >= 0 && p < end && b[p] === OP.FRAME) p = end - p < 9 ? FAIL : p + 9;
    if (p < 0 || p >= end) return FAIL;
    op = b[p];
    switch (op) {
      case OP.BININT1:
      case OP.BININT2:
      case OP.BININT: {
        const v = op === OP.BININT1 ? b[p + 1] : op === OP.BININT2 ? (b[p + 1] as number) | ((b[p + 2] as number) << 8) : readI32(b, p + 1);
        const q = p + (op === OP.BININT1 ? 2 : op === OP.BININT2 ? 3 : 5);
        if (q > end) return FAIL;
        // Another int next means a tuple (pool ids); keys, the only other thing that may follow, are never ints.
        const next = b[q];
        if (next === OP.BININT1 || next === OP.BININT2 || next === OP.BININT || next === OP.TUPLE1) return this.tuple(b, p, end, field);
        this.setNumber(field, v as number);
        return q;
      }
      case OP.LONG1: {
        if (end - p < 2) return FAIL;
        const n = b[p + 1] as number;
        if (end - p < 2 + n || n > 8) return FAIL;
        // Addresses (6 bytes) and time_us (7 bytes) are positive and below 2^53: summed exactly as doubles.
        if (n > 0 && n <= 7 && (b[p + 1 + n] as number) < (n === 7 ? 0x20 : 0x80)) {
          let v = 0;
          for (let i = p + 1 + n; i > p + 1; i--) v = v * 256 + (b[i] as number);
          this.setNumber(field, v);
        } else {
          const v = readLong(b, p + 2, n);
          if (typeof v === 'number') this.setNumber(field, v);
          else this.setValue(field, v);
        }
        return p + 2 + n;
      }
      case OP.BINGET:
      case OP.LONG_BINGET: {
        const width = op === OP.BINGET ? 1 : 4;
        if (end - p <= width) return FAIL;
        const index = width === 1 ? (b[p + 1] as number) : readU32(b, p + 1);
        if (index >= memo.length) return FAIL;
        const code = memo.code(index);
        if (code < 0) return FAIL;
        if (field === F_ACTION) this.setAction(code);
        else this.setValue(field, memo.values[code]);
        return p + 1 + width;
      }
      case OP.SHORT_BINUNICODE:
      case OP.BINUNICODE: {
        const s = this.text(b, p, end);
        if (s === null) return FAIL;
        this.setValue(field, s);
        return memoize(memo, b, this.at, end, this.strings.code(s));
      }
      case OP.EMPTY_LIST: {
        if (field !== F_FRAMES) return FAIL;
        const q = this.frames.read(b, p, end);
        this.stack = this.frames.stack;
        return q;
      }
      case OP.BINFLOAT:
        if (end - p < 9) return FAIL;
        this.setNumber(field, readF64(b, p + 1));
        return p + 9;
      case OP.NONE:
      case OP.NEWTRUE:
      case OP.NEWFALSE:
        this.setValue(field, op === OP.NONE ? null : op === OP.NEWTRUE);
        return p + 1;
      default:
        return FAIL;
    }
  }

  /** SHORT_BINUNICODE/BINUNICODE at b[p]: the string, with the position after it in this.at; null otherwise. */
  private text(b: Uint8Array, p: number, end: number): string | null {
    const op = b[p];
    const head = op === OP.SHORT_BINUNICODE ? 2 : op === OP.BINUNICODE ? 5 : 0;
    if (head === 0 || end - p < head) return null;
    const n = head === 2 ? (b[p + 1] as number) : readU32(b, p + 1);
    if (end - p - head < n) return null;
    this.at = p + head + n;
    return this.strings.utf8(b, p + head, n);
  }

  /** Up to three small ints closed by TUPLE1–3; tuples are shared by content in the memo (they are immutable). */
  private tuple(b: Uint8Array, p: number, end: number, field: number): number {
    const items: number[] = [];
    for (;;) {
      const op = b[p];
      if (op === OP.BININT1 && end - p >= 2) items.push(b[p + 1] as number);
      else if (op === OP.BININT2 && end - p >= 3) items.push((b[p + 1] as number) | ((b[p + 2] as number) << 8));
      else if (op === OP.BININT && end - p >= 5) items.push(readI32(b, p + 1));
      else break;
      p += op === OP.BININT1 ? 2 : op === OP.BININT2 ? 3 : 5;
    }
    if (items.length > 3 || p >= end || b[p] !== OP.TUPLE1 + items.length - 1) return FAIL;
    const key = items.join(',');
    let code = this.tupleCodes.get(key);
    if (code === undefined) {
      code = this.memo.add(items);
      if (this.tupleCodes.size < 10_000) this.tupleCodes.set(key, code);
    }
    this.setValue(field, this.memo.values[code]);
    return memoize(this.memo, b, p + 1, end, code);
  }

  private setAction(code: number): void {
    if (code >= this.actionOfCode.length) this.actionOfCode = grow(this.actionOfCode, code);
    let action = (this.actionOfCode[code] as number) - 1;
    if (action < 0) {
      action = actionCode(textAt(this.memo.values[code], () => this.where(F_ACTION))).code;
      this.actionOfCode[code] = action + 1;
    }
    this.action = action;
    const value = this.memo.values[code];
    this.otherName = action === OTHER_ACTION && typeof value === 'string' ? value : null;
  }

  private setNumber(field: number, v: number): void {
    if (field === F_ADDR) this.addr = v;
    else if (field === F_SIZE) {
      // The same rule as byteField on the general path: a size is a whole number of bytes.
      if (!Number.isSafeInteger(v) || v < 0) throw fieldError(this.where(field), v, 'a whole number of bytes');
      this.size = v;
    }
    else if (field === F_TIME) this.time = v;
    else if (field === F_STREAM) this.stream = v;
    else if (field === F_DEVICE_FREE) this.deviceFree = v;
    else if (field === F_ACTION) throw fieldError(this.where(field), v, 'a string');
    else if (field === F_FRAMES) throw fieldError(this.where(field), v, 'a list');
  }

  /** "trace entry 12: addr", for the entry being read (its row is the next one). */
  private where(field: number): string {
    return `trace entry ${this.builder.length}: ${FIELD_NAMES[field] ?? 'field'}`;
  }

  private setValue(field: number, v: unknown): void {
    if (field === F_OTHER) return;
    if (field === F_ACTION) {
      const { code, name } = actionCode(textAt(v, () => this.where(field)));
      this.action = code;
      this.otherName = code === OTHER_ACTION ? name : null;
    } else if (field === F_FRAMES) this.stack = this.builder.stacks.stackIdOf(listAt(v, () => this.where(field)) ?? []);
    else {
      const n = num(v as never, () => this.where(field));
      if (field === F_TIME) this.time = n ?? NaN;
      else this.setNumber(field, n ?? 0);
    }
  }
}
