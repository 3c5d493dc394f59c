/**
 * The snapshot model: what `torch.cuda.memory._snapshot()` holds, in every schema generation, read from the
 * plain values the unpickler built. Segments and blocks become small typed records; device traces become
 * columns of typed arrays (a 1 GB trace holds tens of millions of entries, and columns keep them to about
 * 40 bytes each). Fields a version did not write are null; keys this reader does not know are listed, not
 * fatal. Nothing here walks untrusted data recursively, and the work done is bounded by the file size so a
 * file that shares one list a million times (a memo bomb) ends in an error instead of a hang.
 */
import { GpumemError } from '../errors.js';
import { nameRecord } from '../records.js';
import { OTHER_ACTION, TRACE_ACTIONS, type MemorySnapshot, type SnapshotBlock, type SnapshotSegment, type TraceColumns } from './model-types.js';
import { boolAt, deviceAt, dictAt, fieldError, listAt, numberAt, settingsAt, textAt } from './fields.js';
import { isDict, type PickleDict, type PickleValue } from './unpickle-types.js';

export * from './model-types.js';

const KNOWN_KEYS = new Set(['segments', 'device_traces', 'allocator_settings', 'external_annotations']);
const NO_FRAMES: readonly unknown[] = Object.freeze([]);
const ACTION_CODES = new Map<string, number>(TRACE_ACTIONS.map((a, i) => [a, i]));

/** Reads a number field: ints, floats and wide ints (BigInt, converted) are numbers; absent or None is null, anything else an error. */
export function num(value: PickleValue | undefined, where: () => string = () => 'a number field'): number | null {
  return numberAt(value, where);
}

/**
 * Reads a size or address field: a whole number of bytes from 0 to 2^53 − 1, or null when absent. Anything
 * else (1.5, inf, −1, 1e300, a string, a list) is a damaged or crafted file, reported with the field's place.
 */
export function byteField(value: PickleValue | undefined, where: () => string): number | null {
  const n = numberAt(value, where);
  if (n === null) return null;
  if (!Number.isSafeInteger(n) || n < 0) throw fieldError(where(), value, 'a whole number of bytes');
  return n;
}

/**
 * Builds the model from an unpickled (or JSON-parsed) snapshot. `fileBytes` sizes the work budget: every
 * segment, block and trace entry visited costs one unit, and more units than 2 × fileBytes + 1 million
 * means the file references the same data over and over, which no real snapshot does. `columnTraces`,
 * from the columnar reader, replaces whatever `device_traces` holds in `root`.
 */
export function readSnapshot(root: PickleValue, fileBytes: number, columnTraces: TraceColumns[] | null = null): MemorySnapshot {
  let budget = 2 * fileBytes + 1_000_000;
  const spend = (units: number): void => {
    budget -= units;
    if (budget < 0) {
      throw new GpumemError('INPUT_UNSAFE', 'the snapshot references the same data far more often than its size allows (a memo bomb?)', {
        hint: 'real snapshots never repeat segments or blocks; this file was crafted or is corrupt',
      });
    }
  };
  const segmentList = Array.isArray(root) && root.every(isDict);
  const top: PickleDict | null = segmentList ? { segments: root } : isDict(root) ? root : null;
  const rawSegments = top?.segments;
  if (!top || !Array.isArray(rawSegments)) {
    throw new GpumemError('INPUT_MALFORMED', 'this pickle is not a PyTorch memory snapshot: it has no "segments" list', {
      hint: 'write one with torch.cuda.memory._dump_snapshot("snapshot.pickle")',
    });
  }
  spend(rawSegments.length);
  let legacy = false;
  const segments: SnapshotSegment[] = [];
  for (let si = 0; si < rawSegments.length; si++) {
    const raw = rawSegments[si];
    const at = (field: string) => (): string => `segment ${si}: ${field}`;
    if (!isDict(raw)) throw fieldError(`segment ${si}`, raw, 'a segment dict');
    const rawBlocks = listAt(raw.blocks, at('blocks')) ?? [];
    spend(rawBlocks.length);
    const address = byteField(raw.address, at('address')) ?? 0;
    let cursor = address;
    const blocks: SnapshotBlock[] = [];
    for (let bi = 0; bi < rawBlocks.length; bi++) {
      const b = rawBlocks[bi];
      const bat = (field: string) => (): string => `segment ${si}, block ${bi}: ${field}`;
      if (!isDict(b)) throw fieldError(`segment ${si}, block ${bi}`, b, 'a block dict');
      const sizeBytes = byteField(b.size, bat('size')) ?? 0;
      const history = listAt(b.history, bat('history'));
      if (history) legacy = true;
      const last = history && history.length > 0 ? dictAt(history[history.length - 1], bat(`history[${history.length - 1}]`)) : null;
      const frames = listAt(b.frames, bat('frames')) ?? (last ? listAt(last.frames, bat('history[-1].frames')) : null);
      blocks.push({
        address: byteField(b.address, bat('address')) ?? cursor,
        sizeBytes,
        requestedBytes: byteField(b.requested_size, bat('requested_size')) ?? (last ? byteField(last.real_size, bat('history[-1].real_size')) : null),
        state: textAt(b.state, bat('state')) ?? 'unknown',
        frames: frames ?? NO_FRAMES,
      });
      cursor += sizeBytes;
    }
    const pool = listAt(raw.segment_pool_id, at('segment_pool_id'));
    segments.push({
      device: deviceAt(raw.device, at('device')) ?? 0,
      address,
      totalBytes: byteField(raw.total_size, at('total_size')) ?? blocks.reduce((s, b) => s + b.sizeBytes, 0),
      stream: numberAt(raw.stream, at('stream')) ?? 0,
      segmentType: textAt(raw.segment_type, at('segment_type')) ?? 'unknown',
      poolId: pool ? pool.map((x, i) => String(poolPart(x, at(`segment_pool_id[${i}]`)))).join(',') : null,
      isExpandable: boolAt(raw.is_expandable, at('is_expandable')),
      blocks,
    });
  }
  const traces: TraceColumns[] = columnTraces ?? [];
  const rawTraces = columnTraces === null ? listAt(top.device_traces, () => 'device_traces') ?? [] : [];
  for (let d = 0; d < rawTraces.length; d++) {
    const entries = listAt(rawTraces[d], () => `device_traces[${d}]`) ?? [];
    spend(entries.length);
    traces.push(readTrace(entries, d));
    // Let the raw entries go as soon as they are in columns: the dicts are the bulk of a large file.
    rawTraces[d] = null;
  }
  const annotations = listAt(top.external_annotations, () => 'external_annotations');
  return {
    generation: Array.isArray(root) ? 'segments-list' : legacy ? 'history' : 'frames',
    segments,
    traces,
    allocatorSettings: settingsAt(top.allocator_settings),
    externalAnnotationCount: annotations ? annotations.length : 0,
    unknownKeys: Object.keys(top).filter((k) => !KNOWN_KEYS.has(k)),
  };
}

/** One part of a segment_pool_id tuple: a whole number (PyTorch writes two, e.g. (0, 0)). */
function poolPart(value: PickleValue, where: () => string): number | bigint {
  if (typeof value === 'bigint' || (typeof value === 'number' && Number.isInteger(value))) return value;
  throw fieldError(where(), value, 'an integer');
}

function readTrace(entries: readonly PickleValue[], device: number): TraceColumns {
  const n = entries.length;
  const stacks: Array<readonly unknown[]> = [NO_FRAMES];
  const stackIds = new Map<readonly unknown[], number>();
  const t: TraceColumns = {
    length: 0,
    action: new Uint8Array(n),
    addr: new Float64Array(n),
    sizeBytes: new Float64Array(n),
    stream: new Float64Array(n),
    timeUs: new Float64Array(n),
    stack: new Int32Array(n),
    stacks,
    otherActions: nameRecord<number>(),
  };
  let i = 0;
  for (const e of entries) {
    const at = (field: string) => (): string => `trace entry ${i}: ${field}`;
    if (!isDict(e)) throw fieldError(`device_traces[${device}][${i}]`, e, 'a trace entry dict');
    const name = textAt(e.action, at('action')) ?? 'unknown';
    let code = ACTION_CODES.get(name);
    if (code === undefined) {
      code = OTHER_ACTION;
      t.otherActions[name] = (t.otherActions[name] ?? 0) + 1;
    }
    t.action[i] = code;
    // Both address fields are checked whatever the action, as the columnar reader does.
    const addr = numberAt(e.addr, at('addr')) ?? 0;
    const deviceFree = numberAt(e.device_free, at('device_free')) ?? 0;
    t.addr[i] = name === 'oom' ? deviceFree : addr;
    t.sizeBytes[i] = byteField(e.size, at('size')) ?? 0;
    t.stream[i] = numberAt(e.stream, at('stream')) ?? 0;
    t.timeUs[i] = numberAt(e.time_us, at('time_us')) ?? NaN;
    // Entries share frame lists by identity (PyTorch reuses one list per recorded stack); keep each once.
    const frames = listAt(e.frames, at('frames'));
    if (frames && frames.length > 0) {
      let id = stackIds.get(frames);
      if (id === undefined) {
        id = stacks.push(frames) - 1;
        stackIds.set(frames, id);
      }
      t.stack[i] = id;
    }
    i++;
  }
  if (i === n) {
    t.length = n;
    return t;
  }
  return { ...t, length: i, action: t.action.subarray(0, i), addr: t.addr.subarray(0, i), sizeBytes: t.sizeBytes.subarray(0, i), stream: t.stream.subarray(0, i), timeUs: t.timeUs.subarray(0, i), stack: t.stack.subarray(0, i) };
}
