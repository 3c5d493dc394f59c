/** Field readers of the companion's messages: each checks one field's type and names it when it is wrong. */
/** A message, or a part of one, as parsed JSON. */
export type Obj = Record<string, unknown>;

/** A field that is not what it should be; turned into INPUT_MALFORMED by parseCompanionLine. */
export class Invalid extends Error {}

/** Throws the one error a malformed field raises, naming its path. */
export function bad(path: string, what: string): never {
  throw new Invalid(`${path}: ${what}`);
}

/** `value` as an object (not null, not a list). */
export function obj(value: unknown, path: string): Obj {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) bad(path, 'expected an object');
  return value as Obj;
}

/** A non-negative safe integer at `o[key]`. */
export function count(o: Obj, key: string, path: string): number {
  const v = o[key];
  if (typeof v !== 'number' || !Number.isSafeInteger(v) || v < 0) bad(`${path}.${key}`, 'expected a non-negative integer');
  return v;
}

/** A count, or null when absent or null. */
export function countOrNull(o: Obj, key: string, path: string): number | null {
  return o[key] === null || o[key] === undefined ? null : count(o, key, path);
}

/** A finite number, or null when absent or null. */
export function numberOrNull(o: Obj, key: string, path: string): number | null {
  const v = o[key];
  if (v === null || v === undefined) return null;
  if (typeof v !== 'number' || !Number.isFinite(v)) bad(`${path}.${key}`, 'expected a number');
  return v;
}

/** A non-negative number of milliseconds at the top level of a message. */
export function duration(o: Obj, key: string): number {
  const v = o[key];
  if (typeof v !== 'number' || !Number.isFinite(v) || v < 0) bad(`.${key}`, 'expected a non-negative number of milliseconds');
  return v;
}

/** A non-negative number of milliseconds at `o[key]`. */
export function ms(o: Obj, key: string, path: string): number {
  const v = o[key];
  if (typeof v !== 'number' || !Number.isFinite(v) || v < 0) bad(`${path}.${key}`, 'expected a non-negative number of milliseconds');
  return v;
}

/** A string at `o[key]`. */
export function text(o: Obj, key: string, path: string): string {
  const v = o[key];
  if (typeof v !== 'string') bad(`${path}.${key}`, 'expected a string');
  return v;
}

/** A string, or null when absent or null. */
export function textOrNull(o: Obj, key: string, path: string): string | null {
  return o[key] === null || o[key] === undefined ? null : text(o, key, path);
}

/** A list at `o[key]`. */
export function list(o: Obj, key: string, path: string): unknown[] {
  const v = o[key];
  if (!Array.isArray(v)) bad(`${path}.${key}`, 'expected a list');
  return v;
}

/** true or false, or null when absent or null (hello.cuda flags). */
export function flagOrNull(o: Obj, key: string, path: string): boolean | null {
  const v = o[key];
  if (v === null || v === undefined) return null;
  if (typeof v !== 'boolean') bad(`${path}.${key}`, 'expected true, false or null');
  return v;
}
