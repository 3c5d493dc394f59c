/**
 * Array helpers safe at any length. `target.push(...items)` and `Math.max(...values)` pass every element as
 * an argument on the stack, which overflows somewhere above ~100,000 elements: a recording with 200,000
 * processes or a log with that many OOM lines would end gpumem with a RangeError. These loop instead.
 */

/** Appends every item of `items` to `target` (in order) and returns `target`. */
export function appendAll<T>(target: T[], items: readonly T[]): T[] {
  for (let i = 0; i < items.length; i++) target.push(items[i] as T);
  return target;
}

/** The largest value, or -Infinity for an empty list (as Math.max() gives). */
export function maxOf(values: readonly number[]): number {
  let max = -Infinity;
  for (let i = 0; i < values.length; i++) if ((values[i] as number) > max) max = values[i] as number;
  return max;
}

/** The smallest value, or Infinity for an empty list (as Math.min() gives). */
export function minOf(values: readonly number[]): number {
  let min = Infinity;
  for (let i = 0; i < values.length; i++) if ((values[i] as number) < min) min = values[i] as number;
  return min;
}
