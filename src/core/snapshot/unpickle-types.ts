/** The values the data-only unpickler builds, and the limits it enforces. */

export type PickleValue = null | boolean | number | bigint | string | Uint8Array | PickleValue[] | PickleDict;
export interface PickleDict {
  [key: string]: PickleValue;
}

export interface UnpickleLimits {
  /** Size of the whole input when known: a declared length beyond the bytes left fails at once. */
  totalBytes?: number;
  /**
   * Budget for the estimated memory of what is built. Default for plain values: 8 × totalBytes + 256 MiB
   * (else 8 GiB), since plain JS objects cost 4–6× the bytes of a trace-heavy pickle. The columnar snapshot
   * reader defaults to 1.5 × totalBytes + 64 MiB: its traces take under one byte per file byte, and with
   * Node itself that keeps a hostile file near 2× its size in resident memory.
   */
  maxHeapBytes?: number;
  /** Deepest MARK nesting accepted (default 1000; real snapshots use under 10). */
  maxMarkDepth?: number;
  /** Most items in one list, dict, tuple or on the stack (default 50 million). */
  maxContainerItems?: number;
}

/**
 * Base of the placeholders the columnar reader keeps on its stack instead of values (a device's trace list,
 * trace entries already stored as columns). They never reach a value a caller sees.
 */
export abstract class Special {}

/** True for a value the unpickler built from a dict opcode. */
export function isDict(value: unknown): value is PickleDict {
  return typeof value === 'object' && value !== null && !Array.isArray(value) && !(value instanceof Uint8Array) && !(value instanceof Special);
}
