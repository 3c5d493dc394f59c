/**
 * A data-only unpickler for PyTorch memory snapshots. It runs pickle's stack machine over byte chunks
 * (protocols 2–5, as Python's pickle and PyTorch's C++ pickler write them) and builds plain values: dicts
 * become objects, lists/tuples/sets arrays, ints numbers (BigInt beyond 2^53), bytes Uint8Array. Every
 * opcode that would import or call a Python object is refused with INPUT_UNSAFE naming it and its offset;
 * nothing is ever executed. Hostile input is bounded: declared lengths are checked against the bytes left,
 * the memo, the MARK nesting and each container have limits, and an estimate of the memory built so far is
 * held under a budget so that a crafted file ends in an error, not in a crash of the whole program.
 * With `columnar`, device traces are not built as values at all but read into columns (see
 * unpickle-columnar.ts); that is how `gpumem snapshot` reads a file of any size.
 */
import { OP, opcodeName } from './opcodes.js';
import { ROW_BYTES, TraceRun } from './trace-columns.js';
import { misplaced } from './unpickle-columnar.js';
import { badLength, malformedAt, nestedTooDeep, overBudget, refuseOpcode, tooMany, underflow, wrongTarget } from './unpickle-errors.js';
import { Special, type PickleDict, type PickleValue, type UnpickleLimits } from './unpickle-types.js';
import { readF64, readI32, readLong, readU32, readU64 } from './unpickle-read.js';
import { ARRAY, OBJECT, SLOT, UnpicklerState } from './unpickle-state.js';

export { isDict, type PickleDict, type PickleValue, type UnpickleLimits } from './unpickle-types.js';
export { type UnpicklerOptions } from './unpickle-state.js';

const MEMO_SLOT = 4;
const STACK_SLOT = 32;

export class Unpickler extends UnpicklerState {
  /** Runs opcodes from buf[0]; returns how many bytes were consumed (complete opcodes only). */
  protected run(b: Uint8Array): number {
    const stack = this.stack;
    const memo = this.memo;
    const col = this.columnar;
    const end = b.length;
    let p = 0;
    while (p < end) {
      const at = p;
      const op = b[p] as number;
      if (stack.length > this.maxItems) throw tooMany('the stack', this.maxItems, this.offset + at);
      if (this.offset + at === 0 && op !== OP.PROTO) {
        throw malformedAt('the file does not start with a pickle protocol header (byte 0x80); it is not a protocol 2–5 pickle', this.offset + at);
      }
      switch (op) {
        case OP.BININT1:
          if (end - p < 2) return this.wait(at, 2);
          stack.push(b[p + 1] as number);
          p += 2;
          break;
        case OP.BININT2:
          if (end - p < 3) return this.wait(at, 3);
          stack.push((b[p + 1] as number) | ((b[p + 2] as number) << 8));
          p += 3;
          break;
        case OP.BININT:
          if (end - p < 5) return this.wait(at, 5);
          stack.push(readI32(b, p + 1));
          p += 5;
          break;
        case OP.LONG1: {
          if (end - p < 2) return this.wait(at, 2);
          const n = b[p + 1] as number;
          if (end - p < 2 + n) return this.wait(at, 2 + n);
          stack.push(readLong(b, p + 2, n));
          this.heapBytes += 16;
          p += 2 + n;
          break;
        }
        case OP.LONG4: {
          if (end - p < 5) return this.wait(at, 5);
          const n = readI32(b, p + 1);
          if (n < 0 || n > 4096) throw badLength('LONG4', n, this.offset + at, 'longer than 4096 bytes');
          if (end - p < 5 + n) return this.wait(at, 5 + n);
          stack.push(readLong(b, p + 5, n));
          this.heapBytes += 16 + n;
          p += 5 + n;
          break;
        }
        case OP.BINFLOAT:
          if (end - p < 9) return this.wait(at, 9);
          stack.push(readF64(b, p + 1));
          this.heapBytes += 16;
          p += 9;
          break;
        case OP.NONE:
        case OP.NEWTRUE:
        case OP.NEWFALSE:
          stack.push(op === OP.NONE ? null : op === OP.NEWTRUE);
          p += 1;
          break;
        case OP.SHORT_BINUNICODE:
        case OP.SHORT_BINSTRING:
        case OP.SHORT_BINBYTES: {
          if (end - p < 2) return this.wait(at, 2);
          const n = b[p + 1] as number;
          if (end - p < 2 + n) return this.wait(at, 2 + n);
          stack.push(this.text(op, b, p + 2, n));
          p += 2 + n;
          break;
        }
        case OP.BINUNICODE:
        case OP.BINSTRING:
        case OP.BINBYTES:
        case OP.BINUNICODE8:
        case OP.BINBYTES8:
        case OP.BYTEARRAY8: {
          const head = op === OP.BINUNICODE8 || op === OP.BINBYTES8 || op === OP.BYTEARRAY8 ? 9 : 5;
          if (end - p < head) return this.wait(at, head);
          const n = head === 9 ? readU64(b, p + 1) : readU32(b, p + 1);
          this.checkLength(op, n, at, head);
          if (end - p < head + n) return this.wait(at, head + n);
          stack.push(this.text(op, b, p + head, n));
          p += head + n;
          break;
        }
        case OP.EMPTY_DICT: {
          if (col !== null && col.entryList(stack, this.marks) !== null) {
            const memoBefore = memo.length;
            const valuesBefore = memo.values.length;
            const builtBefore = col.fast.builtBytes + col.builder.stacks.bytes;
            const q = col.readEntries(b, p, end, stack, this.marks);
            if (q >= 0) {
              this.heapBytes += col.fast.count * ROW_BYTES + (memo.length - memoBefore) * MEMO_SLOT + (memo.values.length - valuesBefore) * SLOT + col.fast.builtBytes + col.builder.stacks.bytes - builtBefore;
              p = q;
            } else {
              col.startEntry(stack, this.marks);
              this.heapBytes += ROW_BYTES + OBJECT;
              p += 1;
            }
            break;
          }
          const dict: PickleDict = {};
          stack.push(dict);
          col?.noteDict(stack, dict);
          this.heapBytes += OBJECT;
          p += 1;
          break;
        }
        case OP.EMPTY_LIST:
          if (col === null || col.listFor(stack, this.marks) === null) stack.push([]);
          this.heapBytes += ARRAY;
          p += 1;
          break;
        case OP.EMPTY_SET:
        case OP.EMPTY_TUPLE:
          stack.push([]);
          this.heapBytes += ARRAY;
          p += 1;
          break;
        case OP.TUPLE1:
        case OP.TUPLE2:
        case OP.TUPLE3: {
          const n = op - OP.TUPLE1 + 1;
          if (stack.length < n) throw underflow(op, this.offset + at);
          this.guard(stack.length - n, op, at);
          stack.push(stack.splice(stack.length - n, n) as PickleValue[]);
          this.heapBytes += ARRAY + n * SLOT;
          p += 1;
          break;
        }
        case OP.MARK:
          if (this.marks.length >= this.maxMarkDepth) throw nestedTooDeep(this.maxMarkDepth, this.offset + at);
          this.marks.push(stack.length);
          p += 1;
          break;
        case OP.POP_MARK: {
          const mark = this.popMark(op, at);
          this.guard(mark, op, at);
          stack.length = mark;
          p += 1;
          break;
        }
        case OP.APPENDS:
        case OP.ADDITEMS: {
          const mark = this.popMark(op, at);
          const target = stack[mark - 1];
          if (col !== null && mark > 0 && target instanceof Special) {
            col.append(target, stack, mark, op, this.offset + at);
            p += 1;
            break;
          }
          this.guard(mark, op, at);
          if (mark === 0 || !Array.isArray(target)) throw wrongTarget(op, this.offset + at, 'a list');
          if (target.length + stack.length - mark > this.maxItems) throw tooMany('a list', this.maxItems, this.offset + at);
          if (target.length === 0) {
            // Size a fresh list exactly: push() would give a 3-frame stack list room for 16 or more.
            const count = stack.length - mark;
            target.length = count;
            for (let i = 0; i < count; i++) target[i] = stack[mark + i] as PickleValue;
          } else for (let i = mark; i < stack.length; i++) target.push(stack[i] as PickleValue);
          this.heapBytes += (stack.length - mark) * SLOT;
          stack.length = mark;
          p += 1;
          break;
        }
        case OP.APPEND: {
          const target = stack[stack.length - 2];
          if (col !== null && stack.length >= 2 && target instanceof Special) {
            const item = stack[stack.length - 1];
            if (item instanceof TraceRun && item.count !== 1) throw misplaced(op, this.offset + at);
            col.append(target, stack, stack.length - 1, op, this.offset + at);
            p += 1;
            break;
          }
          this.guard(stack.length - 1, op, at);
          if (stack.length < 2 || !Array.isArray(target)) throw wrongTarget(op, this.offset + at, 'a list');
          if (target.length >= this.maxItems) throw tooMany('a list', this.maxItems, this.offset + at);
          target.push(stack.pop() as PickleValue);
          this.heapBytes += SLOT;
          p += 1;
          break;
        }
        case OP.SETITEMS: {
          const mark = this.popMark(op, at);
          const target = stack[mark - 1];
          if ((stack.length - mark) % 2 !== 0) throw malformedAt(`SETITEMS at byte ${this.offset + at} has an odd number of items`, this.offset + at);
          this.setItems(target, mark, op, at);
          p += 1;
          break;
        }
        case OP.SETITEM:
          if (stack.length < 3) throw wrongTarget(op, this.offset + at, 'a dict');
          this.setItems(stack[stack.length - 3], stack.length - 2, op, at);
          p += 1;
          break;
        case OP.LIST:
        case OP.TUPLE:
        case OP.FROZENSET: {
          const mark = this.popMark(op, at);
          this.guard(mark, op, at);
          const items = stack.splice(mark) as PickleValue[];
          this.heapBytes += ARRAY + items.length * SLOT;
          stack.push(items);
          p += 1;
          break;
        }
        case OP.DICT: {
          const mark = this.popMark(op, at);
          if ((stack.length - mark) % 2 !== 0) throw malformedAt(`DICT at byte ${this.offset + at} has an odd number of items`, this.offset + at);
          this.guard(mark, op, at);
          const dict: PickleDict = {};
          this.heapBytes += OBJECT;
          for (let i = mark; i < stack.length; i += 2) this.setItem(dict, stack[i] as PickleValue, stack[i + 1] as PickleValue, at);
          stack.length = mark;
          stack.push(dict);
          p += 1;
          break;
        }
        case OP.MEMOIZE:
          if (stack.length === 0) throw underflow(op, this.offset + at);
          memo.push(this.memoCode(stack[stack.length - 1] as PickleValue | Special));
          this.heapBytes += MEMO_SLOT + 4 * SLOT;
          p += 1;
          break;
        case OP.BINPUT:
        case OP.LONG_BINPUT: {
          const width = op === OP.BINPUT ? 1 : 4;
          if (end - p < 1 + width) return this.wait(at, 1 + width);
          const index = width === 1 ? (b[p + 1] as number) : readU32(b, p + 1);
          if (stack.length === 0) throw underflow(op, this.offset + at);
          // Writers number memo slots in order; a jump ahead would make the memo a sparse table of any size.
          if (index > memo.length) throw malformedAt(`${opcodeName(op)} at byte ${this.offset + at} stores memo slot ${index} out of order (next is ${memo.length})`, this.offset + at);
          memo.put(index, this.memoCode(stack[stack.length - 1] as PickleValue | Special));
          this.heapBytes += MEMO_SLOT + 4 * SLOT;
          p += 1 + width;
          break;
        }
        case OP.BINGET:
        case OP.LONG_BINGET: {
          const width = op === OP.BINGET ? 1 : 4;
          if (end - p < 1 + width) return this.wait(at, 1 + width);
          const index = width === 1 ? (b[p + 1] as number) : readU32(b, p + 1);
          if (index >= memo.length) throw malformedAt(`${opcodeName(op)} at byte ${this.offset + at} reads memo slot ${index}, which was never stored`, this.offset + at);
          const code = memo.code(index);
          if (code < 0) throw misplaced(op, this.offset + at);
          stack.push(memo.values[code] as PickleValue);
          p += 1 + width;
          break;
        }
        case OP.POP:
        case OP.DUP:
          if (stack.length === 0) throw underflow(op, this.offset + at);
          this.guard(stack.length - 1, op, at);
          if (op === OP.POP) stack.pop();
          else stack.push(stack[stack.length - 1] as PickleValue);
          p += 1;
          break;
        case OP.PROTO: {
          if (end - p < 2) return this.wait(at, 2);
          const version = b[p + 1] as number;
          if (version < 2 || version > 5) {
            throw malformedAt(`pickle protocol ${version} at byte ${this.offset + at} is not supported (2–5 are)`, this.offset + at);
          }
          p += 2;
          break;
        }
        case OP.FRAME:
          // A framing hint for buffered readers; the data that follows is ordinary opcodes.
          if (end - p < 9) return this.wait(at, 9);
          p += 9;
          break;
        case OP.STOP:
          if (stack.length !== 1 || this.marks.length !== 0) {
            throw malformedAt(`STOP at byte ${this.offset + at} leaves ${stack.length} values and ${this.marks.length} marks instead of one value`, this.offset + at);
          }
          this.guard(0, op, at);
          this.result = { value: stack.pop() as PickleValue };
          memo.clear();
          this.strings.clear();
          return at + 1;
        default:
          throw refuseOpcode(op, this.offset + at);
      }
      // The stack itself counts too: a flood of small values costs a slot each (and room to grow).
      if (this.heapBytes + stack.length * STACK_SLOT > this.maxHeapBytes) throw overBudget(this.maxHeapBytes, this.offset + at);
    }
    return p;
  }

}

/** Unpickles a complete in-memory pickle (tests, small files). Large files go through Unpickler chunk by chunk. */
export function unpickle(bytes: Uint8Array, limits: UnpickleLimits = {}): PickleValue {
  const u = new Unpickler({ totalBytes: bytes.length, ...limits });
  u.push(bytes);
  return u.finish();
}
