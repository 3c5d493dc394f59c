/**
 * What the unpickler does differently when it reads a snapshot into columns. It recognises where it is in
 * the snapshot's structure from the stack itself: the list under the top-level key "device_traces", each
 * device's list inside it, and each dict inside one of those (a trace entry). Those get placeholders
 * instead of values; entries go straight into the TraceBuilder. The placeholders may only be used the way
 * PyTorch's writers use them (appended to their parent, the device_traces list set on the top-level dict);
 * any other use — a trace entry read back from the memo, put in a tuple, popped — is refused as malformed,
 * so a crafted file can never make the columns disagree with what the pickle says.
 */
import { malformedAt } from './unpickle-errors.js';
import { opcodeName } from './opcodes.js';
import { FastEntryReader } from './trace-fast.js';
import { DeviceTraceList, TraceBuilder, TraceEntryRef, TraceList, TraceRun } from './trace-columns.js';
import type { Memo } from './memo.js';
import { isDict, Special, type PickleDict, type PickleValue } from './unpickle-types.js';
import type { Strings } from './unpickle-strings.js';

type Stack = Array<PickleValue | Special>;

export class Columnar {
  readonly builder: TraceBuilder;
  readonly fast: FastEntryReader;
  /** The snapshot's top-level dict: the first dict built on an empty stack. */
  root: PickleDict | null = null;
  /** Stack positions holding placeholders, ascending. */
  private readonly specialAt: number[] = [];

  /** `totalBytes` (the file size, or Infinity when unknown) sizes the trace columns. */
  constructor(memo: Memo, strings: Strings, totalBytes: number) {
    this.builder = new TraceBuilder(totalBytes);
    this.fast = new FastEntryReader(memo, strings, this.builder);
  }

  /** True when a placeholder stands at `from` or above. */
  hasSpecialFrom(from: number): boolean {
    const n = this.specialAt.length;
    return n > 0 && (this.specialAt[n - 1] as number) >= from;
  }

  /** Forgets placeholders at or above `length` after the stack was cut there. */
  cut(length: number): void {
    while (this.specialAt.length > 0 && (this.specialAt[this.specialAt.length - 1] as number) >= length) this.specialAt.pop();
  }

  /** The trace list a dict pushed now would be an entry of, or null. */
  entryList(stack: Stack, marks: readonly number[]): TraceList | null {
    if (this.specialAt.length === 0) return null;
    const top = stack[stack.length - 1];
    if (top instanceof TraceList) return top;
    if (!(top instanceof TraceRun || top instanceof TraceEntryRef)) return null;
    const parent = stack[(marks[marks.length - 1] ?? 0) - 1];
    return parent instanceof TraceList ? parent : null;
  }

  /** The placeholder for a list pushed now (device_traces, or one device's trace), or null for a plain list. */
  listFor(stack: Stack, marks: readonly number[]): Special | null {
    const n = stack.length;
    const top = stack[n - 1];
    const mark = marks[marks.length - 1] ?? -1;
    if (top === 'device_traces' && this.root !== null) {
      if (stack[n - 2] === this.root || (stack[mark - 1] === this.root && (n - mark) % 2 === 1)) return this.push(stack, new DeviceTraceList());
      return null;
    }
    if (top instanceof DeviceTraceList || (top instanceof TraceList && stack[mark - 1] instanceof DeviceTraceList)) return this.push(stack, new TraceList());
    return null;
  }

  /** Reads trace entries with the fast path; on success they stand on the stack and the new position is returned, else -1. */
  readEntries(b: Uint8Array, p: number, end: number, stack: Stack, marks: readonly number[]): number {
    const q = this.fast.read(b, p, end);
    if (q < 0) return q;
    const count = this.fast.count;
    const first = this.builder.length - count;
    this.settle(stack, marks);
    const top = stack[stack.length - 1];
    if (top instanceof TraceRun && top.first + top.count === first && !markAbove(marks, stack.length - 1)) top.count += count;
    else this.push(stack, new TraceRun(first, count));
    return q;
  }

  /** Starts a trace entry the general way: a placeholder that SETITEM(S) fills. */
  startEntry(stack: Stack, marks: readonly number[]): void {
    this.settle(stack, marks);
    this.push(stack, new TraceEntryRef(this.builder.newRow()));
  }

  /** APPEND(S) of stack[from…] to a placeholder list. */
  append(target: Special, stack: Stack, from: number, op: number, offset: number): void {
    for (let i = from; i < stack.length; i++) {
      const item = stack[i];
      let ok = false;
      if (target instanceof TraceList) {
        if (item instanceof TraceRun) ok = target.add(item.first, item.count);
        else if (item instanceof TraceEntryRef) ok = target.add(item.row, 1);
      } else if (target instanceof DeviceTraceList && item instanceof TraceList) {
        target.lists.push(item);
        ok = true;
      }
      if (!ok) throw misplaced(op, offset);
    }
    stack.length = from;
    this.cut(from);
  }

  /** SETITEM(S) of stack[from…] (key, value pairs) into a trace entry being filled. */
  setItems(target: TraceEntryRef, stack: Stack, from: number, op: number, offset: number, keyName: (key: PickleValue) => string): void {
    if (this.hasSpecialFrom(from)) throw misplaced(op, offset);
    for (let i = from; i < stack.length; i += 2) this.builder.setField(target, keyName(stack[i] as PickleValue), stack[i + 1] as PickleValue);
    stack.length = from;
  }

  /** Checks a SETITEM(S) into a plain dict: the only placeholder a dict may receive is device_traces on the top-level dict. */
  checkDictItems(target: PickleDict, stack: Stack, from: number, op: number, offset: number): void {
    for (let i = from; i < stack.length; i += 2) {
      if (stack[i] instanceof Special) throw misplaced(op, offset);
      const value = stack[i + 1];
      if (value instanceof Special && !(value instanceof DeviceTraceList && target === this.root && stack[i] === 'device_traces')) throw misplaced(op, offset);
    }
  }

  /** Notes a dict pushed on an empty stack as the top-level dict. */
  noteDict(stack: Stack, dict: PickleDict): void {
    if (this.root === null && stack.length === 1) this.root = dict;
  }

  /** The top-level value after STOP, with device_traces replaced by the list of per-device columns' owners. */
  static isRootWithTraces(value: unknown): value is PickleDict & { device_traces: DeviceTraceList } {
    return isDict(value) && value.device_traces instanceof DeviceTraceList;
  }

  // A finished entry left on top by the general path joins the run below it (or becomes a run), so that a
  // list written as one long APPENDS holds one stack item per run of entries, not one object per entry.
  private settle(stack: Stack, marks: readonly number[]): void {
    const top = stack[stack.length - 1];
    if (!(top instanceof TraceEntryRef)) return;
    const below = stack[stack.length - 2];
    if (below instanceof TraceRun && below.first + below.count === top.row && !markAbove(marks, stack.length - 2)) {
      below.count++;
      stack.pop();
      this.specialAt.pop();
    } else stack[stack.length - 1] = new TraceRun(top.row, 1);
  }

  private push<T extends Special>(stack: Stack, special: T): T {
    stack.push(special);
    this.specialAt.push(stack.length - 1);
    return special;
  }
}

/** True when a MARK sits above stack position `index` (merging into that item would move the mark). */
function markAbove(marks: readonly number[], index: number): boolean {
  return (marks[marks.length - 1] ?? -1) > index;
}

/** A placeholder used in a way no snapshot writer uses it. */
export function misplaced(op: number, offset: number): Error {
  return malformedAt(`${opcodeName(op)} at byte ${offset} uses a trace entry or trace list in a way PyTorch never writes (shared, nested or discarded)`, offset);
}
