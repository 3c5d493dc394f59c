/**
 * Reading the companion channel: a line decoder for the byte stream and a validator that turns one line
 * into a typed message or one clear error. Nothing here trusts the other side: sizes are checked to be
 * non-negative integers, strings to be strings, and an over-long line is cut off and reported.
 */
import { GpumemError } from '../errors.js';
import {
  COMPANION_SCHEMA_VERSION,
  type AllocatorStats,
  type CompanionMessage,
  type CudaStatus,
  type DeviceIdentity,
} from './messages.js';
import { bad, count, countOrNull, flagOrNull, Invalid, list, numberOrNull, obj, text, textOrNull, type Obj } from './parse-fields.js';
import { stepsMessage } from './parse-steps.js';
import { memoryMessage, sitesMessage } from './parse-memory.js';

/**
 * Lines longer than this are refused: the largest message the companion writes (an exception with its
 * 8000-character text, or statistics of every device) is a few KiB.
 */
export const MAX_LINE_CHARS = 128 * 1024;

/** CUDA ordinals above this are refused: no process sees that many devices, and a huge one is a forgery. */
export const MAX_CUDA_ORDINAL = 1023;

/** Devices listed in one message, at most. */
const MAX_DEVICES = MAX_CUDA_ORDINAL + 1;

/** A CUDA device ordinal at `o[key]`: a count no larger than MAX_CUDA_ORDINAL. */
function ordinal(o: Obj, key: string, path: string): number {
  const v = count(o, key, path);
  if (v > MAX_CUDA_ORDINAL) bad(`${path}.${key}`, `CUDA device ordinal ${v} is above ${MAX_CUDA_ORDINAL}`);
  return v;
}

/** A list of devices at `o[key]`, no longer than MAX_DEVICES. */
function deviceList(o: Obj, key: string, path: string): unknown[] {
  const v = list(o, key, path);
  if (v.length > MAX_DEVICES) bad(`${path}.${key}`, `${v.length} devices listed, more than ${MAX_DEVICES}`);
  return v;
}

const STAT_FIELDS = [
  'allocatedBytes', 'reservedBytes', 'activeBytes', 'inactiveSplitBytes', 'requestedBytes',
  'peakAllocatedBytes', 'peakReservedBytes', 'peakActiveBytes', 'numAllocRetries', 'numOoms',
] as const;

function stats(value: unknown, path: string): AllocatorStats {
  const o = obj(value, path);
  const out = { device: ordinal(o, 'device', path) } as AllocatorStats;
  for (const f of STAT_FIELDS) out[f] = countOrNull(o, f, path);
  return out;
}

/** Ranks and world sizes above this are refused: no job has that many processes, and a huge one is a forgery. */
export const MAX_RANK = 1 << 20;

function rankNumber(o: Obj, key: string): number | null {
  const v = countOrNull(o, key, '');
  if (v !== null && v > MAX_RANK) bad(`.${key}`, `${v} is above ${MAX_RANK}`);
  return v;
}

function identity(value: unknown, path: string): DeviceIdentity {
  const o = obj(value, path);
  return {
    device: ordinal(o, 'device', path),
    uuid: textOrNull(o, 'uuid', path),
    name: textOrNull(o, 'name', path),
    totalBytes: countOrNull(o, 'totalBytes', path),
  };
}

function cudaStatus(o: Obj): CudaStatus {
  return {
    compiled: flagOrNull(o, 'compiled', 'cuda'),
    cudaVersion: textOrNull(o, 'cudaVersion', 'cuda'),
    visibleDevices: textOrNull(o, 'visibleDevices', 'cuda'),
    driverLoaded: flagOrNull(o, 'driverLoaded', 'cuda'),
    problem: textOrNull(o, 'problem', 'cuda'),
  };
}

function body(o: Obj, type: string): CompanionMessage | null {
  const base = { schemaVersion: COMPANION_SCHEMA_VERSION, pid: count(o, 'pid', ''), timeMs: count(o, 'timeMs', '') };
  switch (type) {
    case 'hello': {
      const config = obj(o.config ?? {}, 'config');
      return {
        ...base, type,
        ppid: countOrNull(o, 'ppid', ''),
        companionVersion: text(o, 'companionVersion', ''),
        torchVersion: text(o, 'torchVersion', ''),
        pythonVersion: text(o, 'pythonVersion', ''),
        capabilities: obj(o.capabilities ?? {}, 'capabilities'),
        config: {
          rateHz: numberOrNull(config, 'rateHz', 'config'),
          snapshotDir: textOrNull(config, 'snapshotDir', 'config'),
          snapshotMaxEntries: countOrNull(config, 'snapshotMaxEntries', 'config'),
          memoryFraction: numberOrNull(config, 'memoryFraction', 'config'),
        },
        cuda: o.cuda === null || o.cuda === undefined ? null : cudaStatus(obj(o.cuda, 'cuda')),
      };
    }
    case 'devices':
      return { ...base, type, devices: deviceList(o, 'devices', '').map((d, i) => identity(d, `devices[${i}]`)) };
    case 'stats':
      return { ...base, type, seq: count(o, 'seq', ''), devices: deviceList(o, 'devices', '').map((d, i) => stats(d, `devices[${i}]`)) };
    case 'oom': {
      const source = text(o, 'source', '');
      if (source !== 'observer' && source !== 'counter') bad('.source', 'expected "observer" or "counter"');
      return {
        ...base, type, source,
        device: ordinal(o, 'device', ''),
        requestedBytes: countOrNull(o, 'requestedBytes', ''),
        deviceLimitBytes: countOrNull(o, 'deviceLimitBytes', ''),
        deviceFreeBytes: countOrNull(o, 'deviceFreeBytes', ''),
        stats: o.stats === null || o.stats === undefined ? null : stats(o.stats, 'stats'),
        snapshotPath: textOrNull(o, 'snapshotPath', ''),
        snapshotError: textOrNull(o, 'snapshotError', ''),
      };
    }
    case 'exception':
      return { ...base, type, oom: o.oom === true, exceptionType: text(o, 'exceptionType', ''), message: text(o, 'message', '') };
    case 'error':
      return { ...base, type, what: text(o, 'what', ''), message: text(o, 'message', '') };
    case 'cuda':
      return { ...base, type, problem: text(o, 'problem', '') };
    case 'steps':
      return stepsMessage(base, o);
    case 'memory':
      return memoryMessage(base, o, ordinal(o, 'device', ''));
    case 'sites':
      return sitesMessage(base, o, ordinal(o, 'device', ''));
    case 'rank': {
      const source = text(o, 'source', '');
      if (source !== 'env' && source !== 'torch.distributed') bad('.source', 'expected "env" or "torch.distributed"');
      return {
        ...base, type, source,
        rank: rankNumber(o, 'rank'), localRank: rankNumber(o, 'localRank'), worldSize: rankNumber(o, 'worldSize'),
        backend: textOrNull(o, 'backend', ''),
      };
    }
    case 'bye':
      return { ...base, type, dropped: count(o, 'dropped', '') };
    default:
      // A newer companion of the same schema version may add message types; older readers skip them.
      return null;
  }
}

/**
 * Parses one line of the channel. Returns the message, or null for a blank line or a message type this
 * gpumem does not know (same schema version, newer companion). Throws INPUT_MALFORMED naming `where`
 * (e.g. "companion channel, pid 123, line 7") and the offending field for anything else.
 */
export function parseCompanionLine(line: string, where = 'companion channel'): CompanionMessage | null {
  if (line.trim() === '') return null;
  const fail = (what: string, cause?: unknown): never => {
    throw new GpumemError('INPUT_MALFORMED', `${where}: ${what}`, {
      hint: 'the Python companion and gpumem come from the same package; run the gpumem_torch that `gpumem python-path` prints',
      cause,
    });
  };
  if (line.length > MAX_LINE_CHARS) fail(`line of ${line.length} characters is longer than the ${MAX_LINE_CHARS} allowed`);
  let value: unknown;
  try {
    value = JSON.parse(line);
  } catch (error) {
    return fail('not a JSON object', error);
  }
  try {
    const o = obj(value, 'message');
    const version = count(o, 'schemaVersion', '');
    if (version !== COMPANION_SCHEMA_VERSION) fail(`schemaVersion ${version}, this gpumem reads ${COMPANION_SCHEMA_VERSION}`);
    return body(o, text(o, 'type', ''));
  } catch (error) {
    if (error instanceof Invalid) return fail(`bad message: ${error.message.replace(/^\./, '')}`);
    throw error;
  }
}

/**
 * Splits a byte stream (already decoded to text) into lines across chunk boundaries. `push` returns the
 * complete lines so far; `end` returns a final unterminated line, if any. A line growing past
 * MAX_LINE_CHARS without a newline is returned as is once it is too long, so the parser reports it
 * instead of the buffer growing without bound.
 */
export function createLineSplitter(): { push(chunk: string): string[]; end(): string[] } {
  let pending = '';
  // After an over-long line was handed out, the rest of it (up to the next newline) is dropped.
  let skipping = false;
  return {
    push(chunk: string): string[] {
      pending += chunk;
      const parts = pending.split('\n');
      pending = parts.pop() ?? '';
      if (skipping && parts.length > 0) {
        parts.shift();
        skipping = false;
      }
      if (skipping) {
        pending = '';
      } else if (pending.length > MAX_LINE_CHARS) {
        parts.push(pending);
        pending = '';
        skipping = true;
      }
      return parts;
    },
    end(): string[] {
      const rest = skipping ? '' : pending;
      pending = '';
      skipping = false;
      return rest === '' ? [] : [rest];
    },
  };
}
