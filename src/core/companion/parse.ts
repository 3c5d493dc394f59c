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
  type StepsMessage,
} from './messages.js';

/** Lines longer than this are refused (an OOM message with its text is a few KiB). */
export const MAX_LINE_CHARS = 1 << 20;

type Obj = Record<string, unknown>;

class Invalid extends Error {}

function bad(path: string, what: string): never {
  throw new Invalid(`${path}: ${what}`);
}

function obj(value: unknown, path: string): Obj {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) bad(path, 'expected an object');
  return value as Obj;
}

function count(o: Obj, key: string, path: string): number {
  const v = o[key];
  if (typeof v !== 'number' || !Number.isSafeInteger(v) || v < 0) bad(`${path}.${key}`, 'expected a non-negative integer');
  return v;
}

function countOrNull(o: Obj, key: string, path: string): number | null {
  return o[key] === null || o[key] === undefined ? null : count(o, key, path);
}

function numberOrNull(o: Obj, key: string, path: string): number | null {
  const v = o[key];
  if (v === null || v === undefined) return null;
  if (typeof v !== 'number' || !Number.isFinite(v)) bad(`${path}.${key}`, 'expected a number');
  return v;
}

function duration(o: Obj, key: string): number {
  const v = o[key];
  if (typeof v !== 'number' || !Number.isFinite(v) || v < 0) bad(`.${key}`, 'expected a non-negative number of milliseconds');
  return v;
}

function boolOrNull(o: Obj, key: string, path: string): boolean | null {
  const v = o[key];
  if (v === null || v === undefined) return null;
  if (typeof v !== 'boolean') bad(`${path}.${key}`, 'expected true or false');
  return v;
}

/** A `steps` message's DataLoader settings; null when absent. */
function loader(value: unknown): StepsMessage['loader'] {
  if (value === null || value === undefined) return null;
  const o = obj(value, '.loader');
  return {
    numWorkers: countOrNull(o, 'numWorkers', '.loader'), pinMemory: boolOrNull(o, 'pinMemory', '.loader'),
    persistentWorkers: boolOrNull(o, 'persistentWorkers', '.loader'), prefetchFactor: countOrNull(o, 'prefetchFactor', '.loader'),
  };
}

function ms(o: Obj, key: string, path: string): number {
  const v = o[key];
  if (typeof v !== 'number' || !Number.isFinite(v) || v < 0) bad(`${path}.${key}`, 'expected a non-negative number of milliseconds');
  return v;
}

/** A `steps` message's copy totals; null when absent. */
function copies(value: unknown): StepsMessage['copies'] {
  if (value === null || value === undefined) return null;
  const o = obj(value, '.copies');
  const c = {
    count: count(o, 'count', '.copies'), bytes: count(o, 'bytes', '.copies'), ms: ms(o, 'ms', '.copies'),
    blockingCount: count(o, 'blockingCount', '.copies'), blockingBytes: count(o, 'blockingBytes', '.copies'),
    blockingMs: ms(o, 'blockingMs', '.copies'), pageableBytes: count(o, 'pageableBytes', '.copies'),
  };
  if (c.blockingCount > c.count || c.blockingBytes > c.bytes || c.pageableBytes > c.bytes) bad('.copies', 'blocking or pageable figures exceed the totals');
  return c;
}

/** A `steps` message's synchronising calls; null when absent. */
function syncs(value: unknown): StepsMessage['syncs'] {
  if (value === null || value === undefined) return null;
  const o = obj(value, '.syncs');
  const kinds = obj(o.byKind, '.syncs.byKind');
  const byKind: Record<string, { count: number; ms: number }> = {};
  for (const [kind, v] of Object.entries(kinds)) {
    if (!/^[a-z][a-z_]{0,31}$/.test(kind)) bad('.syncs.byKind', `unexpected kind ${JSON.stringify(kind.slice(0, 40))}`);
    const k = obj(v, `.syncs.byKind.${kind}`);
    byKind[kind] = { count: count(k, 'count', `.syncs.byKind.${kind}`), ms: ms(k, 'ms', `.syncs.byKind.${kind}`) };
  }
  return { steps: count(o, 'steps', '.syncs'), byKind };
}

function text(o: Obj, key: string, path: string): string {
  const v = o[key];
  if (typeof v !== 'string') bad(`${path}.${key}`, 'expected a string');
  return v;
}

function textOrNull(o: Obj, key: string, path: string): string | null {
  return o[key] === null || o[key] === undefined ? null : text(o, key, path);
}

function list(o: Obj, key: string, path: string): unknown[] {
  const v = o[key];
  if (!Array.isArray(v)) bad(`${path}.${key}`, 'expected a list');
  return v;
}

const STAT_FIELDS = [
  'allocatedBytes', 'reservedBytes', 'activeBytes', 'inactiveSplitBytes', 'requestedBytes',
  'peakAllocatedBytes', 'peakReservedBytes', 'peakActiveBytes', 'numAllocRetries', 'numOoms',
] as const;

function stats(value: unknown, path: string): AllocatorStats {
  const o = obj(value, path);
  const out = { device: count(o, 'device', path) } as AllocatorStats;
  for (const f of STAT_FIELDS) out[f] = countOrNull(o, f, path);
  return out;
}

function identity(value: unknown, path: string): DeviceIdentity {
  const o = obj(value, path);
  return {
    device: count(o, 'device', path),
    uuid: textOrNull(o, 'uuid', path),
    name: textOrNull(o, 'name', path),
    totalBytes: countOrNull(o, 'totalBytes', path),
  };
}

function flagOrNull(o: Obj, key: string, path: string): boolean | null {
  const v = o[key];
  if (v === null || v === undefined) return null;
  if (typeof v !== 'boolean') bad(`${path}.${key}`, 'expected true, false or null');
  return v;
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
      return { ...base, type, devices: list(o, 'devices', '').map((d, i) => identity(d, `devices[${i}]`)) };
    case 'stats':
      return { ...base, type, seq: count(o, 'seq', ''), devices: list(o, 'devices', '').map((d, i) => stats(d, `devices[${i}]`)) };
    case 'oom': {
      const source = text(o, 'source', '');
      if (source !== 'observer' && source !== 'counter') bad('.source', 'expected "observer" or "counter"');
      return {
        ...base, type, source,
        device: count(o, 'device', ''),
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
    case 'steps': {
      const dataWaitMs = duration(o, 'dataWaitMs');
      const stepMs = duration(o, 'stepMs');
      if (dataWaitMs > stepMs) bad('.dataWaitMs', 'is longer than stepMs');
      return {
        ...base, type, steps: count(o, 'steps', ''), dataWaitMs, stepMs, samples: count(o, 'samples', ''),
        batchSeen: countOrNull(o, 'batchSeen', ''), batchMin: countOrNull(o, 'batchMin', ''), batchMax: countOrNull(o, 'batchMax', ''),
        batchAsked: countOrNull(o, 'batchAsked', ''),
        // Fields newer companions add are kept only when sent, so a message reads back exactly as it was written.
        ...('loader' in o ? { loader: loader(o.loader) } : {}),
        ...('cpuCount' in o ? { cpuCount: countOrNull(o, 'cpuCount', '') } : {}),
        ...('tokens' in o ? { tokens: countOrNull(o, 'tokens', '') } : {}),
        ...('copies' in o ? { copies: copies(o.copies) } : {}),
        ...('syncs' in o ? { syncs: syncs(o.syncs) } : {}),
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
