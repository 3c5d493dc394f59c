/**
 * Whether two JSON-shaped values (objects, arrays, strings, numbers, booleans, null; what a sample holds) are
 * equal in every field, without allocating: a live source compares each device with the previous sample's
 * this way many times a second, where util.isDeepStrictEqual builds key lists per object.
 */
export function sameData(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false;
  if (Array.isArray(a)) {
    if (!Array.isArray(b) || a.length !== b.length) return false;
    for (let i = 0; i < a.length; i++) if (!sameData(a[i], b[i])) return false;
    return true;
  }
  if (Array.isArray(b)) return false;
  const x = a as Record<string, unknown>;
  const y = b as Record<string, unknown>;
  let keys = 0;
  for (const k in x) {
    if (!Object.prototype.hasOwnProperty.call(x, k)) continue;
    if (!Object.prototype.hasOwnProperty.call(y, k) || !sameData(x[k], y[k])) return false;
    keys++;
  }
  for (const k in y) if (Object.prototype.hasOwnProperty.call(y, k)) keys--;
  return keys === 0;
}
