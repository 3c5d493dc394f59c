/**
 * The recording format (docs/recording.md): NDJSON, line 1 a header naming the format and its version, then
 * one sample per line in time order (versions 3 and 4: a full sample or a delta against the one before). Readers
 * refuse newer versions instead of misreading them.
 */
import { GpumemError } from '../../core/errors.js';
import type { Sample } from '../../core/types.js';
import { DeltaProblem, applyDelta, keyframeState, type DeltaState } from './delta-decode.js';
import { DELTA_KEY } from './delta-shape.js';
import { createHostFactsDecoder, type HostFactsDecoder } from './host-table.js';
import { isObject, isTimeMs, sampleProblem } from './validate.js';

import { RECORDING_FORMAT, RECORDING_VERSION } from '../../core/documents/recording.js';

export { RECORDING_FORMAT, RECORDING_VERSION };

/** Facts about the machine a recording was made on. */
export interface RecordingHostInfo {
  hostname: string | null;
  platform: string | null;
  kernel: string | null;
  /** Whether the recording process could see host pids (false inside most containers). */
  inContainer: boolean | null;
}

export interface RecordingHeader {
  format: typeof RECORDING_FORMAT;
  version: number;
  /** When recording started, ms since the epoch. */
  createdMs: number;
  /** gpumem version that wrote it. */
  writer: string;
  host: RecordingHostInfo;
  /** Free text: what was running, why it was recorded. */
  note: string | null;
  /** Sampling interval asked for, ms. */
  intervalMs: number | null;
  /** Version 3: how often the writer meant to write a full sample (informative; readers take any line as it comes). */
  keyframes?: { everySamples: number; everyMs: number };
}

function bad(path: string, line: number, what: string, hint = 'record it again with `gpumem record --out FILE`'): GpumemError {
  return new GpumemError('INPUT_MALFORMED', `${path}:${line}: ${what}`, { hint, details: { file: path, line } });
}

function parseJsonLine(text: string, path: string, line: number): Record<string, unknown> {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw bad(path, line, `not valid JSON (${(error as Error).message})`);
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value)) throw bad(path, line, 'expected a JSON object');
  return value as Record<string, unknown>;
}

/** Parses and checks line 1 of a recording; throws GpumemError('INPUT_MALFORMED') naming the file and line. */
export function parseRecordingHeader(text: string, path: string): RecordingHeader {
  const h = parseJsonLine(text, path, 1);
  if (h.format !== RECORDING_FORMAT) throw bad(path, 1, `not a gpumem recording (format is ${JSON.stringify(h.format ?? null)}, expected "${RECORDING_FORMAT}")`);
  if (typeof h.version !== 'number' || !Number.isInteger(h.version)) throw bad(path, 1, 'header has no integer version');
  if (h.version > RECORDING_VERSION) {
    throw bad(path, 1, `recording format version ${h.version} is newer than this gpumem reads (${RECORDING_VERSION})`, 'update gpumem to read it');
  }
  if (!isTimeMs(h.createdMs)) throw bad(path, 1, 'header has no createdMs (a time in ms since the epoch)');
  if (h.note !== undefined && h.note !== null && typeof h.note !== 'string') throw bad(path, 1, 'header note must be a string or null');
  if (h.host !== undefined && h.host !== null && !isObject(h.host)) throw bad(path, 1, 'header host must be an object or null');
  return h as unknown as RecordingHeader;
}

const isNum = (v: unknown): boolean => typeof v === 'number' && Number.isFinite(v);
const isNumOrNull = (v: unknown): boolean => v === null || isNum(v);

/**
 * Parses and checks one sample line: every field of the Sample model must have its type (absent nullable
 * fields read as null), so readers never meet a shape they do not expect. Throws
 * GpumemError('INPUT_MALFORMED') with the line and the field.
 */
export function parseRecordedSample(text: string, path: string, line: number, hosts?: HostFactsDecoder): Sample {
  return checkRecordedSample(parseJsonLine(text, path, line), path, line, hosts);
}

/**
 * Reads one line after the header: a v2 host-facts definitions line (taken in by `hosts`, returns null) or
 * a sample (returned, host references resolved). Throws GpumemError('INPUT_MALFORMED') like parseRecordedSample.
 */
export function parseRecordingLine(text: string, path: string, line: number, hosts: HostFactsDecoder | null): Sample | null {
  const value = parseJsonLine(text, path, line);
  if (hosts) {
    const { isDefinitions, problem } = hosts.define(value);
    if (problem) throw bad(path, line, problem);
    if (isDefinitions) return null;
  }
  return checkRecordedSample(value, path, line, hosts ?? undefined);
}

function checkRecordedSample(s: Record<string, unknown>, path: string, line: number, hosts?: HostFactsDecoder): Sample {
  const refProblem = hosts?.resolve(s) ?? null;
  if (refProblem) throw bad(path, line, `sample field ${refProblem}`);
  if (!isNum(s.timeMs)) throw bad(path, line, 'sample has no numeric timeMs');
  if (!Array.isArray(s.devices)) throw bad(path, line, 'sample has no devices array');
  if (!Array.isArray(s.processes)) throw bad(path, line, 'sample has no processes array');
  s.devices.forEach((d: Record<string, unknown> | null, i: number) => {
    const m = d?.memory as Record<string, unknown> | undefined;
    if (!d || !isNum(d.index) || !m || !['totalBytes', 'reservedBytes', 'usedBytes', 'freeBytes'].every((k) => isNumOrNull(m[k]))) {
      throw bad(path, line, `device ${i} lacks index or memory {totalBytes, reservedBytes, usedBytes, freeBytes}`);
    }
  });
  s.processes.forEach((p: Record<string, unknown> | null, i: number) => {
    if (!p || !isNum(p.pid) || !isNumOrNull(p.usedBytes ?? null)) throw bad(path, line, `process ${i} lacks a numeric pid or usedBytes`);
  });
  const problem = sampleProblem(s);
  if (problem) throw bad(path, line, `sample field ${problem}`);
  return s as unknown as Sample;
}

/** Turns the lines after the header into samples: null for a line that only defines host facts. */
export type LineDecoder = (text: string, line: number) => Sample | null;

/**
 * Makes the decoder for one recording's version. Version 3 keeps the sample before (a delta applies to it):
 * a delta before any full sample, or one that does not fit the sample before it, is refused with the line
 * and the field (GpumemError('INPUT_MALFORMED')).
 */
export function createLineDecoder(header: RecordingHeader, path: string): LineDecoder {
  if (header.version < 2) return (text, line) => parseRecordedSample(text, path, line);
  const hosts = createHostFactsDecoder();
  if (header.version === 2) return (text, line) => parseRecordingLine(text, path, line, hosts);
  let state: DeltaState | null = null;
  return (text, line) => {
    const value = parseJsonLine(text, path, line);
    const { isDefinitions, problem } = hosts.define(value);
    if (problem) throw bad(path, line, problem);
    if (isDefinitions) return null;
    if (DELTA_KEY in value && !('timeMs' in value)) {
      if (state === null) throw bad(path, line, 'a delta line before the first full sample');
      const body = value[DELTA_KEY];
      if (!isObject(body)) throw bad(path, line, `${DELTA_KEY} must be an object`);
      try {
        state = applyDelta(state, body, hosts);
      } catch (error) {
        if (error instanceof DeltaProblem) throw bad(path, line, error.message);
        throw error;
      }
      return state.sample;
    }
    // A keyframe: its rows are kept as written (for the next delta), the sample gets copies with host facts in.
    const rows = Array.isArray(value.processes) ? value.processes.map((p: unknown) => (isObject(p) ? { ...p } : p)) : value.processes;
    const sample = checkRecordedSample({ ...value, processes: rows }, path, line, hosts);
    state = keyframeState(value, sample);
    return sample;
  };
}
