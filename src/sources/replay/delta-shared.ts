/**
 * Finding the values a delta can write once (format 4, delta-shape.ts SharedChange). A /proc round dates each
 * of 512 rows with the same time: 512 copies of a 13-digit number, 7 KB every 15 s, where one does. A path is
 * shared when enough of the items that changed it took one value; the items that took another keep theirs by
 * position, beside the shared value under the same key.
 */
import type { ChangedFields } from './delta-shape.js';

/** The changed paths of one item, each with its new value. */
export type Found = [path: string, value: unknown][];

/** The changes of the items of one array, by position, in ascending order. */
export interface Changes {
  positions: number[];
  found: Found[];
}

/** A path's most common new value and the positions that took it. */
export interface Shared {
  value: unknown;
  positions: number[];
}

/** JSON's length of a number, string, boolean or null (the values a path can share). */
const jsonLength = (value: unknown): number => (typeof value === 'string' ? JSON.stringify(value).length : String(value).length);

/**
 * The paths worth writing once: the value most of the items that changed a path took (a number, string,
 * boolean or null), when saying it once with its positions is shorter than saying it at each. Null when
 * there is none (most samples: a few rows moved, each its own way).
 */
export function sharedPaths(changes: Changes, count: number): Map<string, Shared> | null {
  if (changes.positions.length < 3) return null;
  const byPath = new Map<string, Map<unknown, number[]>>();
  for (let k = 0; k < changes.positions.length; k++) {
    for (const [path, value] of changes.found[k]!) {
      if (value !== null && typeof value === 'object') continue;
      let byValue = byPath.get(path);
      if (byValue === undefined) byPath.set(path, (byValue = new Map()));
      const positions = byValue.get(value);
      if (positions === undefined) byValue.set(value, [changes.positions[k]!]);
      else positions.push(changes.positions[k]!);
    }
  }
  let shared: Map<string, Shared> | null = null;
  for (const [path, byValue] of byPath) {
    let best: Shared | null = null;
    for (const [value, positions] of byValue) if (best === null || positions.length > best.positions.length) best = { value, positions };
    if (best === null || best.positions.length < 3) continue;
    // Each position saves the value and a comma; the shared form costs the value once with its key and braces,
    // and `at` each position's digits and a comma (nothing when every item took the value).
    const saved = best.positions.length * (jsonLength(best.value) + 1);
    const cost = jsonLength(best.value) + path.length + 20 + (best.positions.length === count ? 0 : best.positions.reduce((sum, p) => sum + String(p).length + 1, 0));
    if (saved > cost) (shared ??= new Map()).set(path, best);
  }
  return shared;
}

/** `found` without the paths whose value is the one shared (an item that took another value keeps its path). */
export function unshared(found: Found, shared: Map<string, Shared>): Found {
  return found.filter(([path, value]) => shared.get(path)?.value !== value);
}

/**
 * Adds each shared value under its path's key, beside the positions that took another value there. `at` is
 * left out when the key then names every item (the value goes to every item the key does not name).
 */
export function addShared(out: ChangedFields, shared: Map<string, Shared>, count: number): void {
  for (const [path, { value, positions }] of shared) {
    const others = (out[path] ?? {}) as Record<string, unknown>;
    const every = positions.length + Object.keys(others).length === count;
    out[path] = every ? { ...others, value } : { ...others, value, at: positions };
  }
}
