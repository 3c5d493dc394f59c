/**
 * The fast path for trace entries. When the columnar reader meets a dict inside a device's trace list it
 * reads the whole entry here, straight from the bytes into one row of columns: keys are matched through
 * their memo slot, numbers never become JS values, the frame list becomes a stack id and its memo slot
 * points at the shared canonical list. Only the shapes PyTorch's writers produce are taken (a MARK …
 * SETITEMS or single SETITEM body, scalar values, small int tuples, a frame list of memoised or inline frame
 * dicts); anything else, or an entry cut by the end of the chunk, returns -1 having undone its memo slots,
 * and the general stack machine reads the entry instead, into the same columns with the same rules.
 */
import { ENTRY_CODE, PENDING_CODE, type Memo } from './memo.js';
import { num } from './model.js';
import { OTHER_ACTION } from './model-types.js';
import { OP } from './opcodes.js';
import { EMPTY_STACK } from './stacks.js';
import { actionCode, OOM_ACTION, type TraceBuilder } from './trace-columns.js';
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
const FAIL = -1;

export class FastEntryReader {
  private action = OTHER_ACTION;
  private otherName: string | null = null;
  private addr = 0;
  private deviceFree = 0;
  private size = 0;
  private stream = 0;
  private time = NaN;
  private stack = EMPTY_STACK;
  /** Per memo value code: 1 + frame id of a frame dict, or 0 when not looked up yet. */
  private frameOfCode: Int32Array = new Int32Array(1024);
  /** Per memo value code: 1 + field of a key string, or 0. */
  private fieldOfCode: Int8Array = new Int8Array(1024);
  /** Per stack id: the memo value code of its canonical list, or -1. */
  private readonly stackCodes: number[] = [];
  private readonly tupleCodes = new Map<string, number>();
  /** The field named by the key just read (set by key()). */
  private field = F_OTHER;
  /** Estimated bytes of frame dicts built inline, for the caller's budget. */
  builtBytes = 0;

  constructor(
    private readonly memo: Memo,
    private readonly strings: Strings,
    private readonly builder: TraceBuilder,
  ) {}

  /** Reads the entry dict at b[p] (EMPTY_DICT) into a new row; returns the position after it, or -1. */
  read(b: Uint8Array, p: number, end: number): number {
    const memoLength = this.memo.length;
    this.action = OTHER_ACTION;
    this.otherName = null;
    this.addr = this.deviceFree = this.size = this.stream = 0;
    this.time = NaN;
    this.stack = EMPTY_STACK;
    const q = this.entry(b, p, end);
    if (q < 0) {
      this.memo.truncate(memoLength);
      return FAIL;
    }
    const addr = this.action === OOM_ACTION ? this.deviceFree : this.addr;
    this.builder.commit(this.action, this.otherName, addr, this.size, this.stream, this.time, this.stack);
    return q;
  }

  private entry(b: Uint8Array, p: number, end: number): number {
    p = this.memoize(b, p + 1, end, ENTRY_CODE);
    if (p < 0 || p >= end) return FAIL;
    if (b[p] === OP.MARK) {
      p++;
      for (;;) {
        p = skipFrames(b, p, end);
        if (p < 0 || p >= end) return FAIL;
        if (b[p] === OP.SETITEMS) return p + 1;
        p = this.key(b, p, end);
        if (p < 0) return FAIL;
        p = this.value(b, p, end);
        if (p < 0) return FAIL;
      }
    }
    p = this.key(b, p, end);
    if (p >= 0) p = this.value(b, p, end);
    if (p >= 0) p = skipFrames(b, p, end);
    return p >= 0 && p < end && b[p] === OP.SETITEM ? p + 1 : FAIL;
  }

  /** An optional MEMOIZE/BINPUT/LONG_BINPUT after a value: stores `code` in the next slot. */
  private memoize(b: Uint8Array, p: number, end: number, code: number): number {
    p = skipFrames(b, p, end);
    if (p < 0 || p >= end) return p < 0 ? FAIL : p;
    const op = b[p];
    if (op === OP.MEMOIZE) {
      this.memo.push(code);
      return p + 1;
    }
    if (op === OP.BINPUT || op === OP.LONG_BINPUT) {
      const width = op === OP.BINPUT ? 1 : 4;
      if (end - p < 1 + width) return FAIL;
      // Only the next slot in order; anything else is left to the general machine and its checks.
      if ((width === 1 ? b[p + 1] : readU32(b, p + 1)) !== this.memo.length) return FAIL;
      this.memo.push(code);
      return p + 1 + width;
    }
    return p;
  }

  /** A memo value code read by BINGET/LONG_BINGET at b[p], or -1; the position after it is in this.at. */
  private getCode(b: Uint8Array, p: number, end: number): number {
    const width = b[p] === OP.BINGET ? 1 : 4;
    if (end - p < 1 + width) return FAIL;
    const index = width === 1 ? (b[p + 1] as number) : readU32(b, p + 1);
    if (index >= this.memo.length) return FAIL;
    this.at = p + 1 + width;
    return this.memo.code(index);
  }

  private at = 0;

  /** A dict key (a string); sets this.field. */
  private key(b: Uint8Array, p: number, end: number): number {
    p = skipFrames(b, p, end);
    if (p < 0 || p >= end) return FAIL;
    const op = b[p];
    if (op === OP.BINGET || op === OP.LONG_BINGET) {
      const code = this.getCode(b, p, end);
      if (code < 0) return FAIL;
      if (code >= this.fieldOfCode.length) this.fieldOfCode = grow8(this.fieldOfCode, code);
      let f = this.fieldOfCode[code] as number;
      if (f === 0) {
        const s = this.memo.values[code];
        if (typeof s !== 'string') return FAIL;
        f = this.fieldOfCode[code] = 1 + (FIELDS.get(s) ?? F_OTHER);
      }
      this.field = f - 1;
      return this.at;
    }
    const s = this.text(b, p, end);
    if (s === null) return FAIL;
    this.field = FIELDS.get(s) ?? F_OTHER;
    return this.memoize(b, this.at, end, this.strings.code(s));
  }

  /** SHORT_BINUNICODE/BINUNICODE at b[p]: the string, with the position after it in this.at; null otherwise. */
  private text(b: Uint8Array, p: number, end: number): string | null {
    const op = b[p];
    let head: number;
    let n: number;
    if (op === OP.SHORT_BINUNICODE) {
      if (end - p < 2) return null;
      head = 2;
      n = b[p + 1] as number;
    } else if (op === OP.BINUNICODE) {
      if (end - p < 5) return null;
      head = 5;
      n = readU32(b, p + 1);
    } else return null;
    if (end - p - head < n) return null;
    this.at = p + head + n;
    return this.strings.utf8(b, p + head, n);
  }

  /** The value for this.field. */
  private value(b: Uint8Array, p: number, end: number): number {
    p = skipFrames(b, p, end);
    if (p < 0 || p >= end) return FAIL;
    const field = this.field;
    switch (b[p]) {
      case OP.BININT1:
      case OP.BININT2:
      case OP.BININT:
        return this.ints(b, p, end, field);
      case OP.LONG1: {
        if (end - p < 2) return FAIL;
        const n = b[p + 1] as number;
        if (n > 8 || end - p < 2 + n) return FAIL;
        const v = readLong(b, p + 2, n);
        if (typeof v === 'number') this.setNumber(field, v);
        else this.setValue(field, v);
        return p + 2 + n;
      }
      case OP.BINFLOAT:
        if (end - p < 9) return FAIL;
        this.setNumber(field, readF64(b, p + 1));
        return p + 9;
      case OP.NONE:
        this.setValue(field, null);
        return p + 1;
      case OP.NEWTRUE:
      case OP.NEWFALSE:
        this.setValue(field, b[p] === OP.NEWTRUE);
        return p + 1;
      case OP.SHORT_BINUNICODE:
      case OP.BINUNICODE: {
        const s = this.text(b, p, end);
        if (s === null) return FAIL;
        this.setValue(field, s);
        return this.memoize(b, this.at, end, this.strings.code(s));
      }
      case OP.BINGET:
      case OP.LONG_BINGET: {
        const code = this.getCode(b, p, end);
        if (code < 0) return FAIL;
        this.setValue(field, this.memo.values[code]);
        return this.at;
      }
      case OP.EMPTY_LIST:
        return field === F_FRAMES ? this.frames(b, p, end) : FAIL;
      default:
        return FAIL;
    }
  }

  /** One int, or up to three ints closed by TUPLE1–3 (pool ids); tuples are shared by content in the memo. */
  private ints(b: Uint8Array, p: number, end: number, field: number): number {
    let first = 0;
    let key = '';
    let count = 0;
    for (;;) {
      const op = b[p];
      let v: number;
      if (op === OP.BININT1 && end - p >= 2) {
        v = b[p + 1] as number;
        p += 2;
      } else if (op === OP.BININT2 && end - p >= 3) {
        v = (b[p + 1] as number) | ((b[p + 2] as number) << 8);
        p += 3;
      } else if (op === OP.BININT && end - p >= 5) {
        v = readI32(b, p + 1);
        p += 5;
      } else return FAIL;
      if (count === 0) first = v;
      key = count === 0 ? `${v}` : `${key},${v}`;
      count++;
      p = skipFrames(b, p, end);
      if (p < 0 || p >= end) return FAIL;
      const next = b[p] as number;
      if (next === OP.TUPLE1 + count - 1 && count <= 3) {
        let code = this.tupleCodes.get(key);
        if (code === undefined) {
          code = this.memo.add(key.split(',').map(Number));
          if (this.tupleCodes.size < 10_000) this.tupleCodes.set(key, code);
        }
        this.setValue(field, this.memo.values[code]);
        return this.memoize(b, p + 1, end, code);
      }
      if (count === 1 && next !== OP.BININT1 && next !== OP.BININT2 && next !== OP.BININT) {
        this.setNumber(field, first);
        return p;
      }
      if (count === 3) return FAIL;
    }
  }

  /** A frame list: EMPTY_LIST, an optional memo slot, then MARK frames… APPENDS, one frame + APPEND, or nothing. */
  private frames(b: Uint8Array, p: number, end: number): number {
    const slot = this.memo.length;
    p = this.memoize(b, p + 1, end, PENDING_CODE);
    if (p < 0) return FAIL;
    const memoized = this.memo.length > slot;
    const stacks = this.builder.stacks;
    let stack = EMPTY_STACK;
    p = skipFrames(b, p, end);
    if (p < 0 || p >= end) return FAIL;
    if (b[p] === OP.MARK) {
      p++;
      for (;;) {
        p = skipFrames(b, p, end);
        if (p < 0 || p >= end) return FAIL;
        if (b[p] === OP.APPENDS) {
          p++;
          break;
        }
        const frame = this.frame(b, p, end);
        if (frame < 0) return FAIL;
        stack = stacks.child(stack, frame);
        p = this.at;
      }
    } else {
      // One frame then APPEND; otherwise the list is empty and what follows is the entry's next key.
      const memoLength = this.memo.length;
      const frame = this.frame(b, p, end);
      const q = frame < 0 ? FAIL : skipFrames(b, this.at, end);
      if (q >= 0 && q < end && b[q] === OP.APPEND) {
        stack = stacks.child(stack, frame);
        p = q + 1;
      } else this.memo.truncate(memoLength);
    }
    if (memoized) this.memo.put(slot, this.stackCode(stack));
    this.stack = stack;
    return p;
  }

  /** One element of a frame list at b[p]: a memoised value or an inline frame dict. Its frame id; position in this.at. */
  private frame(b: Uint8Array, p: number, end: number): number {
    const op = b[p];
    if (op === OP.BINGET || op === OP.LONG_BINGET) {
      const code = this.getCode(b, p, end);
      if (code < 0) return FAIL;
      if (code >= this.frameOfCode.length) this.frameOfCode = grow32(this.frameOfCode, code);
      let id = this.frameOfCode[code] as number;
      if (id === 0) id = this.frameOfCode[code] = 1 + this.builder.stacks.frameId(this.memo.values[code]);
      return id - 1;
    }
    if (op !== OP.EMPTY_DICT) return FAIL;
    return this.frameDict(b, p, end);
  }

  /** An inline frame dict: string keys, scalar values. */
  private frameDict(b: Uint8Array, p: number, end: number): number {
    const dict: Record<string, unknown> = {};
    const slot = this.memo.length;
    p = this.memoize(b, p + 1, end, 0);
    if (p < 0) return FAIL;
    if (this.memo.length > slot) this.memo.put(slot, this.memo.add(dict));
    p = skipFrames(b, p, end);
    if (p < 0 || p >= end) return FAIL;
    const batch = b[p] === OP.MARK;
    if (batch) p++;
    for (let items = 0; ; items++) {
      p = skipFrames(b, p, end);
      if (p < 0 || p >= end) return FAIL;
      if (batch && b[p] === OP.SETITEMS) break;
      if (!batch && items === 1) {
        if (b[p] !== OP.SETITEM) return FAIL;
        break;
      }
      const name = this.scalar(b, p, end);
      if (typeof name !== 'string') return FAIL;
      const value = this.scalar(b, this.at, end);
      if (value === undefined) return FAIL;
      // "__proto__" must stay an own property, never the object's prototype.
      if (name === '__proto__') Object.defineProperty(dict, name, { value, enumerable: true, writable: true, configurable: true });
      else dict[name] = value;
      this.builtBytes += 16;
      p = this.at;
    }
    this.builtBytes += 56;
    this.at = p + 1;
    const id = this.builder.stacks.frameId(dict);
    if (this.memo.length > slot) {
      const code = this.memo.code(slot);
      if (code >= this.frameOfCode.length) this.frameOfCode = grow32(this.frameOfCode, code);
      this.frameOfCode[code] = 1 + id;
    }
    return id;
  }

  /** A scalar value at b[p] (string, int, float, None, bool, memoised scalar); undefined for anything else. */
  private scalar(b: Uint8Array, p: number, end: number): unknown {
    p = skipFrames(b, p, end);
    if (p < 0 || p >= end) return undefined;
    const op = b[p];
    let v: unknown;
    if (op === OP.SHORT_BINUNICODE || op === OP.BINUNICODE) {
      const s = this.text(b, p, end);
      if (s === null) return undefined;
      this.at = this.memoize(b, this.at, end, this.strings.code(s));
      return this.at < 0 ? undefined : s;
    }
    if (op === OP.BINGET || op === OP.LONG_BINGET) {
      const code = this.getCode(b, p, end);
      v = code < 0 ? undefined : this.memo.values[code];
      return typeof v === 'object' && v !== null ? undefined : v;
    }
    if (op === OP.BININT1 && end - p >= 2) v = b[p + 1];
    else if (op === OP.BININT2 && end - p >= 3) v = (b[p + 1] as number) | ((b[p + 2] as number) << 8);
    else if (op === OP.BININT && end - p >= 5) v = readI32(b, p + 1);
    else if (op === OP.NONE) v = null;
    else return undefined;
    this.at = p + (op === OP.BININT1 ? 2 : op === OP.BININT2 ? 3 : op === OP.BININT ? 5 : 1);
    return v;
  }

  private stackCode(stack: number): number {
    let code = this.stackCodes[stack];
    if (code === undefined || code < 0) {
      code = this.memo.add(this.builder.stacks.stacks[stack]);
      this.stackCodes[stack] = code;
    }
    return code;
  }

  private setNumber(field: number, v: number): void {
    switch (field) {
      case F_ACTION:
        this.action = OTHER_ACTION;
        this.otherName = null;
        break;
      case F_ADDR: this.addr = v; break;
      case F_DEVICE_FREE: this.deviceFree = v; break;
      case F_SIZE: this.size = v; break;
      case F_STREAM: this.stream = v; break;
      case F_TIME: this.time = v; break;
      case F_FRAMES: this.stack = EMPTY_STACK; break;
      default:
    }
  }

  private setValue(field: number, v: unknown): void {
    switch (field) {
      case F_ACTION: {
        const { code, name } = actionCode(v as never);
        this.action = code;
        this.otherName = code === OTHER_ACTION ? name : null;
        break;
      }
      case F_ADDR: this.addr = num(v as never) ?? 0; break;
      case F_DEVICE_FREE: this.deviceFree = num(v as never) ?? 0; break;
      case F_SIZE: this.size = num(v as never) ?? 0; break;
      case F_STREAM: this.stream = num(v as never) ?? 0; break;
      case F_TIME: this.time = num(v as never) ?? NaN; break;
      case F_FRAMES: this.stack = Array.isArray(v) ? this.builder.stacks.stackIdOf(v) : EMPTY_STACK; break;
      default:
    }
  }
}

/** Skips FRAME opcodes (Python's framing hints may fall between any two opcodes); -1 when one is cut off. */
function skipFrames(b: Uint8Array, p: number, end: number): number {
  while (p < end && b[p] === OP.FRAME) {
    if (end - p < 9) return FAIL;
    p += 9;
  }
  return p;
}

function grow8(a: Int8Array, index: number): Int8Array {
  const out = new Int8Array(Math.max(index + 1, a.length * 2));
  out.set(a);
  return out;
}

function grow32(a: Int32Array, index: number): Int32Array {
  const out = new Int32Array(Math.max(index + 1, a.length * 2));
  out.set(a);
  return out;
}
