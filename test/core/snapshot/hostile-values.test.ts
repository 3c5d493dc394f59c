/**
 * Snapshots whose fields hold the wrong types: Python's own pickle (or json) writes any structure into any
 * field, and every path from the file to the outputs (text, JSON, HTML, --simulate) must answer with one
 * GpumemError naming the field, never a TypeError, a RangeError or a cycle reaching JSON.stringify.
 * Each structure is read both ways gpumem reads snapshots: as JSON (plain values) and as a pickle (the
 * columnar reader, fast path included).
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { renderSnapshotHtml } from '../../../src/cli/render/snapshot-html.js';
import { renderSnapshotText } from '../../../src/cli/render/snapshot-text.js';
import { GpumemError } from '../../../src/core/errors.js';
import { readSnapshot, readSnapshotPickle, type MemorySnapshot } from '../../../src/core/snapshot/index.js';
import { MAX_SETTINGS_DEPTH } from '../../../src/core/snapshot/fields.js';
import { analyseSnapshot, snapshotAnalysisJson, toJsonText } from '../../../src/orchestrate/snapshot-analysis.js';

type Value = null | boolean | number | bigint | string | Value[] | { [key: string]: Value };

/** A minimal pickle writer (protocol 2) for plain values: what Python's pickle.dumps writes for them. */
function pickle(root: Value): Uint8Array {
  const out: number[] = [0x80, 2];
  const u32 = (n: number): number[] => [n & 255, (n >>> 8) & 255, (n >>> 16) & 255, (n >>> 24) & 255];
  const put = (v: Value): void => {
    if (v === null) out.push(0x4e);
    else if (v === true || v === false) out.push(v ? 0x88 : 0x89);
    else if (typeof v === 'number' && Number.isInteger(v) && v >= -(2 ** 31) && v < 2 ** 31) {
      if (v >= 0 && v < 256) out.push(0x4b, v);
      else out.push(0x4a, ...u32(v));
    } else if (typeof v === 'number') {
      const b = Buffer.alloc(8);
      b.writeDoubleBE(v);
      out.push(0x47, ...b);
    } else if (typeof v === 'bigint') {
      const bytes: number[] = [];
      let x = v;
      for (let i = 0; i < 9; i++) {
        bytes.push(Number(BigInt.asUintN(8, x)));
        x >>= 8n;
      }
      out.push(0x8a, bytes.length, ...bytes);
    } else if (typeof v === 'string') {
      const b = Buffer.from(v, 'utf8');
      out.push(0x58, ...u32(b.length), ...b);
    } else if (Array.isArray(v)) {
      out.push(0x5d);
      if (v.length > 0) {
        out.push(0x28);
        v.forEach(put);
        out.push(0x65);
      }
    } else {
      out.push(0x7d);
      const entries = Object.entries(v);
      if (entries.length > 0) {
        out.push(0x28);
        for (const [k, x] of entries) {
          put(k);
          put(x);
        }
        out.push(0x75);
      }
    }
  };
  put(root);
  out.push(0x2e);
  return Uint8Array.from(out);
}

/** A snapshot PyTorch would write: one segment, one block, a trace with an alloc and an OOM. */
function template(): { [key: string]: Value } {
  const frames: Value = [{ filename: 'train.py', line: 7, name: 'step' }];
  return {
    segments: [{
      device: 0, address: 1 << 20, total_size: 2 << 20, stream: 0, segment_type: 'large', segment_pool_id: [0, 0], is_expandable: false,
      blocks: [{ address: 1 << 20, size: 1 << 20, requested_size: 1000, state: 'active_allocated', frames }, { address: 2 << 20, size: 1 << 20, state: 'inactive', frames: [] }],
    }],
    device_traces: [[
      { action: 'alloc', addr: 1 << 20, size: 1000, stream: 0, time_us: 5, frames },
      { action: 'oom', device_free: 4096, size: 8 << 20, stream: 0, time_us: 6, frames },
    ]],
    allocator_settings: { PYTORCH_CUDA_ALLOC_CONF: 'expandable_segments:True', max_split_size: 2 ** 60, roundup_power2_divisions: { '1': 4 } },
    external_annotations: [],
  };
}

/** Every place a value can go: [the dict it goes in, given the template] and the keys the model reads there. */
const PLACES: Array<[(t: { [key: string]: Value }) => { [key: string]: Value }, string[]]> = [
  [(t) => t, ['segments', 'device_traces', 'allocator_settings', 'external_annotations', 'other']],
  [(t) => (t.segments as Value[])[0] as { [key: string]: Value }, ['device', 'address', 'total_size', 'stream', 'segment_type', 'segment_pool_id', 'is_expandable', 'blocks']],
  [(t) => ((t.segments as Value[])[0] as { blocks: Value[] }).blocks[0] as { [key: string]: Value }, ['address', 'size', 'requested_size', 'state', 'frames', 'history']],
  [(t) => ((t.device_traces as Value[][])[0] as Value[])[0] as { [key: string]: Value }, ['action', 'addr', 'size', 'stream', 'time_us', 'frames', 'device_free']],
  [(t) => ((t.device_traces as Value[][])[0] as Value[])[1] as { [key: string]: Value }, ['action', 'device_free', 'size', 'frames']],
  [(t) => t.allocator_settings as { [key: string]: Value }, ['PYTORCH_CUDA_ALLOC_CONF', 'max_split_size', 'roundup_power2_divisions', 'expandable_segments', 'garbage_collection_threshold']],
  [(t) => ((t.segments as Value[])[0] as { blocks: Array<{ frames: Value[] }> }).blocks[0]!.frames[0] as { [key: string]: Value }, ['filename', 'line', 'name']],
];

const { value: anyValue } = fc.letrec<{ value: Value }>((tie) => ({
  value: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    fc.constant(null),
    fc.boolean(),
    fc.integer({ min: -(2 ** 31), max: 2 ** 31 - 1 }),
    fc.constantFrom(-1, 0.5, 1e300, 2 ** 53, Number.MAX_SAFE_INTEGER),
    fc.bigInt({ min: -(2n ** 63n), max: 2n ** 64n - 1n }),
    fc.string({ maxLength: 8 }),
    fc.constantFrom('toString', 'valueOf', '__proto__', 'alloc', 'oom', 'active_allocated'),
    fc.array(tie('value'), { maxLength: 3 }),
    fc.dictionary(fc.constantFrom('toString', 'valueOf', 'filename', 'line', 'size', 'a', '__proto__'), tie('value'), { maxKeys: 3 }),
  ),
}));

/** Everything gpumem does with a snapshot, each output written in full. */
function everything(snapshot: MemorySnapshot): void {
  const analysis = analyseSnapshot(snapshot, { top: 5, requestBytes: 1 << 20, whatIfs: ['expandable_segments:True'], simulate: true, torchVersion: null });
  toJsonText(snapshotAnalysisJson(analysis), 2);
  renderSnapshotText(analysis.report, 100, false);
  renderSnapshotHtml(analysis.report, 'x.pickle');
}

/** Runs `fn`; any error but a GpumemError fails the test. Returns the GpumemError, or null on success. */
function onlyGpumemErrors(fn: () => void): GpumemError | null {
  try {
    fn();
    return null;
  } catch (e) {
    if (e instanceof GpumemError) return e;
    throw e;
  }
}

describe('snapshot fields of any type', () => {
  it('the template itself reads and renders (so the property below tests the fields, not a broken base)', () => {
    expect(onlyGpumemErrors(() => everything(readSnapshot(template() as never, 10_000)))).toBeNull();
    expect(onlyGpumemErrors(() => everything(readSnapshotPickle(pickle(template()))))).toBeNull();
  });

  it('any structure in any field: a result or one GpumemError, from JSON and from a pickle alike', () => {
    fc.assert(
      fc.property(fc.nat(PLACES.length - 1), fc.nat(), anyValue, (place, keyIndex, value) => {
        const [pick, keys] = PLACES[place]!;
        const snapshot = template();
        pick(snapshot)[keys[keyIndex % keys.length]!] = value;
        const json = JSON.stringify(snapshot, (_k, v: unknown) => (typeof v === 'bigint' ? Number(v) : v));
        onlyGpumemErrors(() => everything(readSnapshot(JSON.parse(json) as never, json.length)));
        onlyGpumemErrors(() => everything(readSnapshotPickle(pickle(snapshot))));
      }),
      { numRuns: 400 },
    );
  });

  it('names the field: a dict in segment_pool_id (Python pickle of {"toString": "x"})', () => {
    const snapshot = template();
    ((snapshot.segments as Value[])[0] as { segment_pool_id: Value }).segment_pool_id = [{ toString: 'x' }];
    const e = onlyGpumemErrors(() => everything(readSnapshotPickle(pickle(snapshot))));
    expect(e?.code).toBe('INPUT_MALFORMED');
    expect(e?.message).toBe('segment 0: segment_pool_id[0] is a dict, not an integer');
  });

  it('names the field in a trace entry, on the fast path and from JSON', () => {
    const snapshot = template();
    ((snapshot.device_traces as Value[][])[0]![1] as { [key: string]: Value }).action = 7;
    expect(onlyGpumemErrors(() => everything(readSnapshotPickle(pickle(snapshot))))?.message).toBe('trace entry 1: action is 7, not a string');
    expect(onlyGpumemErrors(() => everything(readSnapshot(snapshot as never, 1000)))?.message).toBe('trace entry 1: action is 7, not a string');
  });

  it('allocator_settings that contains itself, or nests 100,000 deep, is refused before any output is written', () => {
    const loop: Value[] = [];
    loop.push(loop);
    const cyclic = { ...template(), allocator_settings: { a: loop } };
    expect(onlyGpumemErrors(() => everything(readSnapshot(cyclic as never, 1000)))?.message).toMatch(/^allocator_settings\.a\[0\]\[0\]\[0\] nests deeper than 4 levels \(or contains itself\)/);
    let deep: Value = [];
    for (let i = 0; i < 100_000; i++) deep = [deep];
    expect(onlyGpumemErrors(() => everything(readSnapshot({ ...template(), allocator_settings: { a: deep } } as never, 1e6)))?.message).toMatch(/nests deeper than/);
    // The same as a pickle: 100,000 EMPTY_LISTs, each APPENDed to the one before.
    const text = (s: string): number[] => [0x58, s.length, 0, 0, 0, ...Buffer.from(s)];
    const n = 100_000;
    const deepPickle = Uint8Array.from([
      0x80, 2, 0x7d, 0x28, ...text('segments'), 0x5d, ...text('allocator_settings'), 0x7d, ...text('a'),
      ...Array<number>(n).fill(0x5d), ...Array<number>(n - 1).fill(0x61), 0x73, 0x75, 0x2e,
    ]);
    expect(onlyGpumemErrors(() => everything(readSnapshotPickle(deepPickle)))?.message).toMatch(/nests deeper than/);
    // What PyTorch writes (one level of roundup_power2_divisions) stays within the limit.
    expect(MAX_SETTINGS_DEPTH).toBeGreaterThanOrEqual(2);
  });

  it('a list shared a million times in allocator_settings is refused, not walked a million times over', () => {
    const shared: Value[] = Array.from({ length: 1000 }, () => 1);
    const wide = { ...template(), allocator_settings: { a: Array.from({ length: 1000 }, () => shared) } };
    expect(onlyGpumemErrors(() => everything(readSnapshot(wide as never, 1000)))?.code).toBe('INPUT_UNSAFE');
  });
});
