/**
 * Objects keyed by names that come from files (tensor and module names, snapshot actions, metadata keys).
 * A plain `{}` inherits from Object.prototype, so a name such as `constructor` or `toString` would find an
 * inherited function and `__proto__` would replace the prototype; these records have no prototype at all.
 */

/** An empty record with no prototype: every key, whatever its name, is only what was stored under it. */
export function nameRecord<T>(): Record<string, T> {
  return Object.create(null) as Record<string, T>;
}
