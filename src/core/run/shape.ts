/**
 * Small structural checks for JSON read back from storage: each check returns null when a value has the
 * expected shape, else one line naming the first place that does not ("attempts[0].exit.code is a string,
 * not a whole number"). Keys a check does not name are allowed (newer writers add fields). The checks
 * recurse only as deep as the shape they describe, so hostile nesting in the data cannot exhaust the stack.
 */

export type Check = (value: unknown, path: string) => string | null;

/** "a list", "a string", "null"… for messages; never converts the value itself. */
export function kindOfJson(value: unknown): string {
  if (value === null) return 'null';
  if (value === undefined) return 'missing';
  if (Array.isArray(value)) return 'a list';
  if (typeof value === 'object') return 'an object';
  if (typeof value === 'string') return 'a string';
  if (typeof value === 'number') return Number.isFinite(value) ? String(value) : 'not finite';
  return typeof value === 'boolean' ? String(value) : typeof value;
}

const expect = (ok: (v: unknown) => boolean, what: string): Check => (v, p) => (ok(v) ? null : `${p} is ${kindOfJson(v)}, not ${what}`);

export const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
export const text = expect((v) => typeof v === 'string', 'a string');
export const flag = expect((v) => typeof v === 'boolean', 'true or false');
export const figure = expect((v) => typeof v === 'number' && Number.isFinite(v), 'a number');
export const whole = expect((v) => typeof v === 'number' && Number.isSafeInteger(v), 'a whole number');
export const count = expect((v) => typeof v === 'number' && Number.isSafeInteger(v) && v >= 0, 'a count');
export const anything: Check = () => null;

export const nullable = (check: Check): Check => (v, p) => (v === null ? null : check(v, p));
/** Absent (a field older writers did not write) or the check. */
export const optional = (check: Check): Check => (v, p) => (v === undefined ? null : check(v, p));
export const oneOf = (...values: readonly unknown[]): Check => expect((v) => values.includes(v), values.map((x) => JSON.stringify(x)).join(' or '));

export function list(item: Check): Check {
  return (v, p) => {
    if (!Array.isArray(v)) return `${p} is ${kindOfJson(v)}, not a list`;
    for (let i = 0; i < v.length; i++) {
      const problem = item(v[i], `${p}[${i}]`);
      if (problem !== null) return problem;
    }
    return null;
  };
}

/** An object whose named fields pass their checks; other fields are allowed. */
export function shape(fields: Record<string, Check>): Check {
  return (v, p) => {
    if (!isObject(v)) return `${p} is ${kindOfJson(v)}, not an object`;
    for (const [key, check] of Object.entries(fields)) {
      const problem = check(Object.hasOwn(v, key) ? v[key] : undefined, `${p}.${key}`);
      if (problem !== null) return problem;
    }
    return null;
  };
}

/** An object used as a map: every value passes `value`. */
export function record(value: Check): Check {
  return (v, p) => {
    if (!isObject(v)) return `${p} is ${kindOfJson(v)}, not an object`;
    for (const [key, item] of Object.entries(v)) {
      const problem = value(item, `${p}.${key.length > 40 ? `${key.slice(0, 40)}…` : key}`);
      if (problem !== null) return problem;
    }
    return null;
  };
}

/** True when `value` nests no deeper than `maxDepth` containers (walked with an explicit stack). */
export function withinDepth(value: unknown, maxDepth: number): boolean {
  const pending: Array<[unknown, number]> = [[value, 0]];
  while (pending.length > 0) {
    const [v, depth] = pending.pop() as [unknown, number];
    if (typeof v !== 'object' || v === null) continue;
    if (depth >= maxDepth) return false;
    for (const item of Array.isArray(v) ? v : Object.values(v)) if (typeof item === 'object' && item !== null) pending.push([item, depth + 1]);
  }
  return true;
}
