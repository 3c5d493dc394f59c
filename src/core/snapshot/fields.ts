/**
 * Typed reads of the fields a snapshot model uses. A snapshot is a pickle (or JSON) anyone can write, so
 * every field the model reads is checked for its type here: absent or None is null (the field did not exist
 * in that PyTorch version), the right type is the value, and anything else is one INPUT_MALFORMED error
 * that names the field's place in the file ("segment 3: segment_pool_id[0] is a dict, not an integer").
 * Values are never converted with String() or template literals, which throw on a dict from the file.
 */
import { GpumemError } from '../errors.js';
import { printable } from '../text.js';
import { isDict, type PickleDict, type PickleValue } from './unpickle-types.js';

const HINT = 'this file is damaged or was not written by PyTorch (torch.cuda.memory._dump_snapshot)';

/** Device indices above this are not GPUs of one machine; the report keeps one block per device. */
export const MAX_DEVICE_INDEX = 65_535;
/** allocator_settings is flat in PyTorch (roundup_power2_divisions adds one level); deeper is crafted. */
export const MAX_SETTINGS_DEPTH = 4;
/** Values visited in allocator_settings at most (shared lists count each time they are reached). */
export const MAX_SETTINGS_VALUES = 10_000;

/** What a value from the file is, in words, without converting it ("a list", "a dict", "-1", "a string"). */
export function kindOf(value: unknown): string {
  if (value === null || value === undefined) return 'None';
  if (typeof value === 'number' || typeof value === 'bigint') return String(value);
  if (typeof value === 'boolean') return value ? 'True' : 'False';
  if (typeof value === 'string') return 'a string';
  if (Array.isArray(value)) return 'a list';
  if (value instanceof Uint8Array) return 'bytes';
  if (isDict(value)) return 'a dict';
  return 'a structure PyTorch never writes';
}

/** The error for a field of the wrong type or value; `where` is "segment 0: device". */
export function fieldError(where: string, value: unknown, expected: string): GpumemError {
  return new GpumemError('INPUT_MALFORMED', `${where} is ${kindOf(value)}, not ${expected}`, { hint: HINT, details: { field: where } });
}

/** A number field (int, float or wide int); null when absent or None. */
export function numberAt(value: unknown, where: () => string): number | null {
  if (value === undefined || value === null) return null;
  if (typeof value === 'number') return value;
  if (typeof value === 'bigint') return Number(value);
  throw fieldError(where(), value, 'a number');
}

/** A string field; null when absent or None. */
export function textAt(value: unknown, where: () => string): string | null {
  if (value === undefined || value === null) return null;
  if (typeof value === 'string') return value;
  throw fieldError(where(), value, 'a string');
}

/** A True/False field; null when absent or None. */
export function boolAt(value: unknown, where: () => string): boolean | null {
  if (value === undefined || value === null) return null;
  if (typeof value === 'boolean') return value;
  throw fieldError(where(), value, 'True or False');
}

/** A list (or tuple) field; null when absent or None. */
export function listAt(value: unknown, where: () => string): PickleValue[] | null {
  if (value === undefined || value === null) return null;
  if (Array.isArray(value)) return value as PickleValue[];
  throw fieldError(where(), value, 'a list');
}

/** A dict field; null when absent or None. */
export function dictAt(value: unknown, where: () => string): PickleDict | null {
  if (value === undefined || value === null) return null;
  if (isDict(value)) return value;
  throw fieldError(where(), value, 'a dict');
}

/** A device index: a whole number from 0 to MAX_DEVICE_INDEX; null when absent or None. */
export function deviceAt(value: unknown, where: () => string): number | null {
  const n = numberAt(value, where);
  if (n === null) return null;
  if (!Number.isInteger(n) || n < 0 || n > MAX_DEVICE_INDEX) throw fieldError(where(), value, `a device index (0 to ${MAX_DEVICE_INDEX})`);
  return n;
}

/**
 * allocator_settings, checked so that it can be written as JSON: a dict of plain values nested at most
 * MAX_SETTINGS_DEPTH deep (a list that contains itself is infinitely deep, so cycles fail here too) and at
 * most MAX_SETTINGS_VALUES values in all. Walked with an explicit stack, so depth never meets the call stack.
 */
export function settingsAt(value: unknown, where = 'allocator_settings'): PickleDict | null {
  const root = dictAt(value, () => where);
  if (root === null) return null;
  const pending: Array<{ value: unknown; path: string; depth: number }> = [{ value: root, path: where, depth: 0 }];
  let visited = 0;
  while (pending.length > 0) {
    const { value: v, path, depth } = pending.pop() as { value: unknown; path: string; depth: number };
    if (++visited > MAX_SETTINGS_VALUES) {
      throw new GpumemError('INPUT_UNSAFE', `${where} holds more than ${MAX_SETTINGS_VALUES} values (PyTorch writes a few dozen)`, { hint: HINT });
    }
    const isList = Array.isArray(v);
    if (!isList && !isDict(v)) {
      if (v === null || ['number', 'bigint', 'string', 'boolean'].includes(typeof v) || v instanceof Uint8Array) continue;
      throw fieldError(path, v, 'a plain value');
    }
    if (depth >= MAX_SETTINGS_DEPTH) {
      throw new GpumemError('INPUT_MALFORMED', `${path} nests deeper than ${MAX_SETTINGS_DEPTH} levels (or contains itself); PyTorch writes flat settings`, { hint: HINT, details: { field: path } });
    }
    if (isList) (v as unknown[]).forEach((item, i) => pending.push({ value: item, path: `${path}[${i}]`, depth: depth + 1 }));
    else for (const [k, item] of Object.entries(v as PickleDict)) pending.push({ value: item, path: `${path}.${keyText(k)}`, depth: depth + 1 });
  }
  return root;
}

/** A dict key from the file as it may appear in a message: escaped, and cut short. */
function keyText(key: string): string {
  const text = printable(key);
  return text.length > 40 ? `${text.slice(0, 40)}…` : text;
}
