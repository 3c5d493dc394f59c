/**
 * The shape of a delta line (format versions 3 and 4), shared by the encoder (delta-encode.ts) and the decoder
 * (delta-decode.ts). A delta says what changed since the sample before it:
 *
 * ```json
 * {"delta": {"timeMs": 1700000001000,
 *   "devices": {"changed": {"memory.usedBytes": {"0": 1234, "3": 5678}, "temperatureC": [61, 60, 63, 59]}},
 *   "processes": {"removed": [4], "added": {"9": {…row…}},
 *     "changed": {"usedBytes": {"3": 2097152}, "usedBytes,smUtilPct,host.cpuTicks": {"17": [1048576, 40, 90211]}}}}}
 * ```
 *
 * Devices and process rows are named by their position in the sample's arrays: `removed` by positions in
 * the sample before, everything else by positions in the new sample. A changed field is named by its path:
 * `field`, or `field.sub` inside a nested object (`memory`, `utilization`, `clocks`, a row's `host`
 * reference); `unavailable` maps change as a whole, since their keys are free text. Paths that changed
 * together share one key (ChangedFields). Version 4 adds one form: a value shared by many items written once
 * (SharedChange); a version 3 reader would refuse it, hence the new version.
 */
import { isObject } from './validate.js';

/** The key of a delta line. */
export const DELTA_KEY = 'delta';

/**
 * One path set to the same value in many items (version 4): `{"value": 1700000015000, "at": [0, 1, 3]}`, or
 * without `at` in every item. A /proc round dates each of 512 rows with the same time; this says it once.
 */
export interface SharedChange {
  value: unknown;
  at?: number[];
}

/**
 * New values by path, then by position: `{"memory.usedBytes": {"0": 1234}}`; paths that changed together in
 * the same items share a key joined by commas, each position holding their values in that order:
 * `{"usedBytes,smUtilPct": {"17": [1048576, 40]}}`. When every item changed, the positions give way to an
 * array in item order: `{"temperatureC": [61, 60, 63]}`. A single path's key may hold a SharedChange instead.
 */
export type ChangedFields = Record<string, Record<string, unknown> | unknown[] | SharedChange>;

/** The key that tells a SharedChange from positions (which are decimal integers). */
export const SHARED_VALUE_KEY = 'value';

/** Changes to an array whose length stays (devices). */
export interface ItemChanges {
  /** Whole new items by position: their set of fields changed, so a path list could not say it. */
  replaced?: Record<string, Record<string, unknown>>;
  changed?: ChangedFields;
}

/** Changes to the process rows. */
export interface RowChanges extends ItemChanges {
  /** Positions in the sample before, ascending. */
  removed?: number[];
  /** New rows by their position in the new sample. */
  added?: Record<string, Record<string, unknown>>;
}

/** The body of a delta line: the time, changed sample fields (`source`, `unavailable`) whole, and item changes. */
export interface DeltaBody {
  timeMs: number;
  devices?: ItemChanges;
  processes?: RowChanges;
  [field: string]: unknown;
}

export interface DeltaLine {
  [DELTA_KEY]: DeltaBody;
}

/** Fields that change as a whole even though they are objects: their keys are free text, dots included. */
const WHOLE_FIELDS: ReadonlySet<string> = new Set(['unavailable']);

/** True for a field whose object value is compared (and written) field by field. */
export function isNestedField(name: string, value: unknown): value is Record<string, unknown> {
  return isObject(value) && !WHOLE_FIELDS.has(name);
}

/** Equality of two JSON values as a reader would see them (objects compared by their JSON text). */
export function sameValue(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (a === null || b === null || typeof a !== 'object' || typeof b !== 'object') return false;
  return JSON.stringify(a) === JSON.stringify(b);
}
