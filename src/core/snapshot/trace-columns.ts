/**
 * Columnar storage for device traces while a snapshot is being unpickled. Every trace entry becomes one row
 * of typed-array columns the moment it is read, so no per-entry object outlives its opcodes; a device's
 * trace is a run of consecutive rows. The placeholders the reader keeps on its stack for these structures
 * (the device_traces list, one device's list, an entry being filled, a run of finished entries) are defined
 * here too.
 */
import { GpumemError } from '../errors.js';
import { nameRecord } from '../records.js';
import { listAt, textAt } from './fields.js';
import { byteField, num } from './model.js';
import { OTHER_ACTION, TRACE_ACTIONS, type TraceColumns } from './model-types.js';
import { StackTable, EMPTY_STACK } from './stacks.js';
import { Special, type PickleValue } from './unpickle-types.js';

const ACTION_CODES = new Map<string, number>(TRACE_ACTIONS.map((a, i) => [a, i]));
export const OOM_ACTION = ACTION_CODES.get('oom') as number;
/** Bytes per row across the columns: action 1, addr/size/stream/time 8 each, stack id 4. */
export const ROW_BYTES = 37;

/** The `device_traces` list of the snapshot's top-level dict. */
export class DeviceTraceList extends Special {
  readonly lists: TraceList[] = [];
}

/** One device's trace list: rows first … first + count − 1. */
export class TraceList extends Special {
  first = 0;
  count = 0;
  /** Adds rows [first, first + count); false when they do not follow the rows already in the list. */
  add(first: number, count: number): boolean {
    if (this.count === 0) this.first = first;
    else if (first !== this.first + this.count) return false;
    this.count += count;
    return true;
  }
}

/** `count` finished trace entries standing on the stack as one item per entry, rows first …. */
export class TraceRun extends Special {
  constructor(
    readonly first: number,
    public count: number,
  ) {
    super();
  }
}

/** A trace entry dict being filled by SETITEM(S) on the slow path; it holds both address fields until the action is known. */
export class TraceEntryRef extends Special {
  addr = 0;
  deviceFree = 0;
  action = OTHER_ACTION;
  constructor(readonly row: number) {
    super();
  }
}

/** Code and name of an `action` value (checked to be a string or None): unknown names, and None as "unknown", are OTHER_ACTION. */
export function actionCode(value: PickleValue | undefined): { code: number; name: string } {
  const name = typeof value === 'string' ? value : 'unknown';
  return { code: ACTION_CODES.get(name) ?? OTHER_ACTION, name };
}

/** Most rows the columns can hold. */
export const MAX_ROWS = 2 ** 29;
/** File bytes per trace entry assumed when sizing the columns up front (real entries take 30 bytes or more). */
const BYTES_PER_ROW_GUESS = 24;

export class TraceBuilder {
  length = 0;
  private capacity: number;
  action: Uint8Array;
  addr: Float64Array;
  size: Float64Array;
  stream: Float64Array;
  time: Float64Array;
  stack: Int32Array;
  /** Names of OTHER_ACTION rows whose action was a string this reader does not know. */
  private readonly otherNames = new Map<number, string>();
  readonly stacks = new StackTable();

  /**
   * Columns are sized from the file up front: pages of a large typed array that are never written cost no
   * memory, and sizing once avoids copying every column as it grows (plain typed arrays, because V8 12 and
   * older read and write resizable ones several times slower).
   */
  constructor(totalBytes: number) {
    this.capacity = Math.max(4096, Math.min(MAX_ROWS, Number.isFinite(totalBytes) ? Math.ceil(totalBytes / BYTES_PER_ROW_GUESS) : 0));
    this.action = new Uint8Array(this.capacity);
    this.addr = new Float64Array(this.capacity);
    this.size = new Float64Array(this.capacity);
    this.stream = new Float64Array(this.capacity);
    this.time = new Float64Array(this.capacity);
    this.stack = new Int32Array(this.capacity);
  }

  /** Appends a row with every field at its default (unknown action, no time, no frames); returns its index. */
  newRow(): number {
    if (this.length === this.capacity) this.grow();
    const row = this.length++;
    this.action[row] = OTHER_ACTION;
    this.addr[row] = 0;
    this.size[row] = 0;
    this.stream[row] = 0;
    this.time[row] = NaN;
    this.stack[row] = EMPTY_STACK;
    return row;
  }

  /** Appends a finished row (the fast path). */
  commit(action: number, otherName: string | null, addr: number, size: number, stream: number, time: number, stack: number): number {
    if (this.length === this.capacity) this.grow();
    const row = this.length++;
    this.action[row] = action;
    this.addr[row] = addr;
    this.size[row] = size;
    this.stream[row] = stream;
    this.time[row] = time;
    this.stack[row] = stack;
    if (otherName !== null && otherName !== 'unknown') this.otherNames.set(row, otherName);
    return row;
  }

  /** SETITEM on an entry being filled: one key of a trace entry dict. Keys the model does not read are dropped. */
  setField(ref: TraceEntryRef, key: string, value: PickleValue): void {
    const row = ref.row;
    const at = (): string => `trace entry ${row}: ${key}`;
    switch (key) {
      case 'action': {
        const { code, name } = actionCode(textAt(value, at));
        ref.action = code;
        this.action[row] = code;
        if (code === OTHER_ACTION && name !== 'unknown') this.otherNames.set(row, name);
        else this.otherNames.delete(row);
        this.addr[row] = code === OOM_ACTION ? ref.deviceFree : ref.addr;
        break;
      }
      case 'addr':
        ref.addr = num(value, at) ?? 0;
        if (ref.action !== OOM_ACTION) this.addr[row] = ref.addr;
        break;
      case 'device_free':
        ref.deviceFree = num(value, at) ?? 0;
        if (ref.action === OOM_ACTION) this.addr[row] = ref.deviceFree;
        break;
      case 'size':
        this.size[row] = byteField(value, at) ?? 0;
        break;
      case 'stream':
        this.stream[row] = num(value, at) ?? 0;
        break;
      case 'time_us':
        this.time[row] = num(value, at) ?? NaN;
        break;
      case 'frames':
        this.stack[row] = this.stacks.stackIdOf(listAt(value, at) ?? []);
        break;
      default:
    }
  }

  /** One device's trace as columns: views on the shared columns, no copy. */
  columns(list: TraceList): TraceColumns {
    const from = list.first;
    const to = from + list.count;
    const otherActions = nameRecord<number>();
    for (let row = from; row < to; row++) {
      if (this.action[row] !== OTHER_ACTION) continue;
      const name = this.otherNames.get(row) ?? 'unknown';
      otherActions[name] = (otherActions[name] ?? 0) + 1;
    }
    return {
      length: list.count,
      action: this.action.subarray(from, to),
      addr: this.addr.subarray(from, to),
      sizeBytes: this.size.subarray(from, to),
      stream: this.stream.subarray(from, to),
      timeUs: this.time.subarray(from, to),
      stack: this.stack.subarray(from, to),
      stacks: this.stacks.stacks,
      otherActions,
    };
  }

  /** Estimated bytes: the columns' rows in use, the interned stacks and the unknown action names. */
  get bytes(): number {
    return this.length * ROW_BYTES + this.stacks.bytes + this.otherNames.size * 64;
  }

  // Only files with entries smaller than the guess get here; one column is copied at a time.
  private grow(): void {
    if (this.capacity >= MAX_ROWS) {
      throw new GpumemError('INPUT_TOO_LARGE', `the trace has more than ${MAX_ROWS} entries`, { hint: 'no real snapshot holds that many; the file was crafted or is corrupt' });
    }
    const capacity = Math.min(MAX_ROWS, this.capacity * 2);
    this.action = extend(this.action, new Uint8Array(capacity));
    this.addr = extend(this.addr, new Float64Array(capacity));
    this.size = extend(this.size, new Float64Array(capacity));
    this.stream = extend(this.stream, new Float64Array(capacity));
    this.time = extend(this.time, new Float64Array(capacity));
    this.stack = extend(this.stack, new Int32Array(capacity));
    this.capacity = capacity;
  }
}

function extend<T extends Uint8Array | Float64Array | Int32Array>(old: T, fresh: T): T {
  fresh.set(old as never);
  return fresh;
}
