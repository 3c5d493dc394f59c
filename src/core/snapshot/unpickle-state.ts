/**
 * The unpickler's state and the helpers its opcode loop uses: chunked input (a cut opcode waits for the next
 * chunk), the stack, marks, memo and strings, the limits and the memory budget, dict and key rules, and the
 * placeholder guard of columnar reading. The opcode loop itself is in unpickle.ts.
 */
import { GpumemError } from '../errors.js';
import { ENTRY_CODE, Memo } from './memo.js';
import { OP, opcodeName } from './opcodes.js';
import { TraceEntryRef } from './trace-columns.js';
import { Columnar, misplaced } from './unpickle-columnar.js';
import { badLength, malformedAt, underflow, wrongTarget } from './unpickle-errors.js';
import { isDict, Special, type PickleDict, type PickleValue, type UnpickleLimits } from './unpickle-types.js';
import { concat, copyOf } from './unpickle-read.js';
import { Strings } from './unpickle-strings.js';
import { MiB } from '../units.js';
// Estimated V8 sizes as Node ships it (no pointer compression), calibrated on floods of each kind so that the
// estimate is not below the resident memory: a tagged slot, a dict (56 bytes plus slack), an array, a string header.
export const SLOT = 8;
export const OBJECT = 64;
export const ARRAY = 48;
const STRING = 24;
/** Bytes of the next chunk joined to a cut opcode beyond what it needs, so the join also runs a little ahead. */
const JOIN_SLACK = 64 * 1024;

export interface UnpicklerOptions extends UnpickleLimits {
  /** Read device traces into columns instead of values (the value returned then holds a placeholder; see SnapshotReader). */
  columnar?: boolean;
}

/** Everything of the unpickler but its opcode loop (unpickle.ts): input handling, limits, memo, helpers. */
export abstract class UnpicklerState {
  protected stack: Array<PickleValue | Special> = [];
  protected marks: number[] = [];
  protected readonly memo = new Memo();
  protected readonly strings = new Strings(this.memo);
  /** Present when reading traces into columns. */
  readonly columnar: Columnar | null;
  protected pending: Uint8Array[] = [];
  protected pendingBytes = 0;
  protected need = 0;
  /** Absolute offset of the first byte not yet consumed. */
  protected offset = 0;
  protected heapBytes = 0;
  protected result: { value: PickleValue } | undefined;
  protected readonly totalBytes: number;
  protected readonly maxHeapBytes: number;
  protected readonly maxMarkDepth: number;
  protected readonly maxItems: number;

  constructor(limits: UnpicklerOptions = {}) {
    this.totalBytes = limits.totalBytes ?? Infinity;
    this.columnar = limits.columnar ? new Columnar(this.memo, this.strings, this.totalBytes) : null;
    const [perByte, base] = this.columnar ? [1.5, 64 * MiB] : [8, 256 * MiB];
    this.maxHeapBytes = limits.maxHeapBytes ?? (limits.totalBytes !== undefined ? base + perByte * limits.totalBytes : 8192 * MiB);
    this.maxMarkDepth = limits.maxMarkDepth ?? 1000;
    this.maxItems = limits.maxContainerItems ?? 50_000_000;
  }

  /** True once STOP was read; later bytes are ignored, as Python's pickle.load ignores them. */
  get done(): boolean {
    return this.result !== undefined;
  }

  /** Feeds the next chunk. The chunk may be reused by the caller afterwards: any tail kept is copied. */
  push(chunk: Uint8Array): void {
    // A plain view, so the opcode loops only ever see one kind of array (Node's Buffer is a subclass).
    let rest = chunk.constructor === Uint8Array ? chunk : new Uint8Array(chunk.buffer, chunk.byteOffset, chunk.byteLength);
    while (this.pendingBytes > 0 && !this.result && rest.length > 0) {
      // Join the kept tail with just enough of the new chunk to finish the opcode it cut, not the whole chunk.
      const take = Math.min(rest.length, Math.max(this.need - this.pendingBytes, 0) + JOIN_SLACK);
      this.pending.push(copyOf(rest, 0, take));
      this.pendingBytes += take;
      rest = rest.subarray(take);
      if (this.pendingBytes < this.need) return;
      const joined = concat(this.pending, this.pendingBytes);
      const stoppedAt = this.run(joined);
      this.offset += stoppedAt;
      this.pending = stoppedAt < joined.length ? [joined.subarray(stoppedAt)] : [];
      this.pendingBytes = joined.length - stoppedAt;
    }
    if (this.result || rest.length === 0 || this.pendingBytes > 0) return;
    const stoppedAt = this.run(rest);
    this.offset += stoppedAt;
    if (!this.result && stoppedAt < rest.length) {
      this.pending = [copyOf(rest, stoppedAt, rest.length)];
      this.pendingBytes = rest.length - stoppedAt;
    }
  }

  /** Ends the input: returns the unpickled value, or fails if the pickle stopped short of STOP. */
  finish(): PickleValue {
    if (this.result) return this.result.value;
    throw new GpumemError('INPUT_MALFORMED', `the pickle is truncated: it ends at byte ${this.offset + this.pendingBytes} before its STOP opcode`, {
      hint: 'the file was cut short (a crashed or still-running dump?); write the snapshot again',
      details: { offset: this.offset + this.pendingBytes },
    });
  }


  /** Runs opcodes from b[0]; returns how many bytes were consumed (complete opcodes only). */
  protected abstract run(b: Uint8Array): number;

  protected wait(at: number, need: number): number {
    this.need = need;
    return at;
  }

  protected text(op: number, b: Uint8Array, p: number, n: number): string | Uint8Array {
    if (op === OP.SHORT_BINBYTES || op === OP.BINBYTES || op === OP.BINBYTES8 || op === OP.BYTEARRAY8) {
      this.heapBytes += ARRAY + n;
      return copyOf(b, p, p + n);
    }
    const s = op === OP.SHORT_BINSTRING || op === OP.BINSTRING ? this.strings.latin1(b, p, n) : this.strings.utf8(b, p, n);
    // An interned string already seen costs nothing more; any other is a new string.
    if (!this.strings.shared) this.heapBytes += STRING + 2 * n;
    return s;
  }

  /** The memo code for a value: placeholders get ENTRY_CODE (never readable), strings share their code. */
  protected memoCode(value: PickleValue | Special): number {
    if (value instanceof Special) return ENTRY_CODE;
    return typeof value === 'string' ? this.strings.code(value) : this.memo.add(value);
  }

  /** Refuses an opcode that would consume a placeholder at stack[from…] (columnar reading only). */
  protected guard(from: number, op: number, at: number): void {
    if (this.columnar !== null && this.columnar.hasSpecialFrom(from)) throw misplaced(op, this.offset + at);
  }

  /** SETITEM(S): stack[from…] as key/value pairs into `target`. */
  protected setItems(target: PickleValue | Special | undefined, from: number, op: number, at: number): void {
    const stack = this.stack;
    const col = this.columnar;
    if (col !== null && target instanceof TraceEntryRef) {
      col.setItems(target, stack, from, op, this.offset + at, (key) => this.keyName(key, at));
      return;
    }
    if (from === 0 || !isDict(target)) throw wrongTarget(op, this.offset + at, 'a dict');
    if (col !== null && col.hasSpecialFrom(from)) col.checkDictItems(target, stack, from, op, this.offset + at);
    for (let i = from; i < stack.length; i += 2) this.setItem(target, stack[i] as PickleValue, stack[i + 1] as PickleValue, at);
    stack.length = from;
    col?.cut(from);
  }

  protected keyName(key: PickleValue, at: number): string {
    if (typeof key === 'string') return key;
    if (typeof key === 'number' || typeof key === 'bigint' || typeof key === 'boolean') return String(key);
    if (key === null) return 'None';
    throw malformedAt(`a dict key at byte ${this.offset + at} is a container; snapshot keys are strings or numbers`, this.offset + at);
  }

  protected setItem(dict: PickleDict, key: PickleValue, value: PickleValue, at: number): void {
    const name = this.keyName(key, at);
    this.heapBytes += 2 * SLOT;
    // Assigning "__proto__" would replace the object's prototype; define it as a plain own property instead.
    if (name === '__proto__') Object.defineProperty(dict, name, { value, enumerable: true, writable: true, configurable: true });
    else dict[name] = value;
  }

  protected popMark(op: number, at: number): number {
    const mark = this.marks.pop();
    if (mark === undefined) throw malformedAt(`${opcodeName(op)} at byte ${this.offset + at} has no MARK before it`, this.offset + at);
    if (mark > this.stack.length) throw underflow(op, this.offset + at);
    return mark;
  }

  protected checkLength(op: number, n: number, at: number, header: number): void {
    const left = this.totalBytes - (this.offset + at + header);
    if (n > left) throw badLength(opcodeName(op), n, this.offset + at, `more than the ${Math.max(0, left)} bytes left in the file`);
    if (n > 0x1fffffe8) throw badLength(opcodeName(op), n, this.offset + at, 'larger than the longest string JavaScript can hold');
  }
}
