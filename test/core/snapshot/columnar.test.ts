/**
 * The columnar reader (what `gpumem snapshot` uses) against the plain-value reader: the same model and the
 * same report for every generated snapshot however it is chunked, the same refusals for the hostile set,
 * clean errors for trace structures no writer produces, and fuzzing that holds both readers to agreement.
 */
import { readFileSync } from 'node:fs';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { GpumemError } from '../../../src/core/errors.js';
import {
  buildReport, readSnapshot, readSnapshotPickle, siteOf, SnapshotReader, unpickle, type MemorySnapshot, type TraceColumns,
} from '../../../src/core/snapshot/index.js';
import { DIR, fixtureNames } from './fixtures.js';
import { runs } from '../../helpers/fuzz.js';

const bytes = (...parts: Array<number[] | string>): Uint8Array =>
  Uint8Array.from(parts.flatMap((p) => (typeof p === 'string' ? [...Buffer.from(p, 'latin1')] : p)));

/** Every entry of a trace as plain numbers and its site, so two readers' columns can be compared. */
function entries(t: TraceColumns): Array<[number, number, number, number, number, string]> {
  return Array.from({ length: t.length }, (_, i) => [
    t.action[i]!, t.addr[i]!, t.sizeBytes[i]!, t.stream[i]!, t.timeUs[i]!, siteOf(t.stacks[t.stack[i]!]!),
  ]);
}

function comparable(s: MemorySnapshot): unknown {
  return { ...s, traces: s.traces.map((t) => ({ length: t.length, otherActions: t.otherActions, entries: entries(t) })) };
}

function chunked(data: Uint8Array, size: number): MemorySnapshot {
  const reader = new SnapshotReader(data.length);
  for (let at = 0; at < data.length && !reader.done; at += size) reader.push(data.subarray(at, at + size));
  return reader.finish();
}

function errorOf(fn: () => unknown): GpumemError {
  try {
    fn();
  } catch (e) {
    expect(e).toBeInstanceOf(GpumemError);
    return e as GpumemError;
  }
  throw new Error('expected an error');
}

describe('columnar reader', () => {
  it.each(fixtureNames())('%s: the same model and report as the plain reader, in chunks of any size', (name) => {
    const data = readFileSync(`${DIR}/${name}.pickle`);
    const plain = readSnapshot(unpickle(data), data.length);
    const expected = comparable(plain);
    for (const size of [data.length, 4096, 7, 1]) expect(comparable(chunked(data, size))).toEqual(expected);
    const options = { top: 50, requestBytes: 24 << 20 };
    expect(buildReport(readSnapshotPickle(data), options)).toEqual(buildReport(plain, options));
  });

  it('keeps one canonical frame list per distinct stack', () => {
    const data = readFileSync(`${DIR}/current-pcpp.pickle`);
    const t = readSnapshotPickle(data).traces[0]!;
    const lists = new Set(Array.from(t.stack, (id) => t.stacks[id]));
    const texts = new Set([...lists].map((l) => JSON.stringify(l)));
    expect(lists.size).toBe(texts.size);
    expect(t.length).toBeGreaterThan(lists.size);
  });

  it.each([
    ['exploit-global.pkl', 'INPUT_UNSAFE', /GLOBAL at byte 2/],
    ['huge-length4.pkl', 'INPUT_MALFORMED', /more than the 4 bytes left/],
    ['deep-mark.pkl', 'INPUT_UNSAFE', /nests deeper than 1000/],
    ['truncated.pkl', 'INPUT_MALFORMED', /truncated/],
    ['bomb.pkl', 'INPUT_UNSAFE', /memo bomb/],
    ['deep-tuple.pkl', 'INPUT_MALFORMED', /not a PyTorch memory snapshot/],
  ])('hostile %s → %s', (file, code, message) => {
    const e = errorOf(() => readSnapshotPickle(readFileSync(`${DIR}/hostile/${file}`)));
    expect(e.code).toBe(code);
    expect(e.message).toMatch(message);
  });

  // {"segments": [], "device_traces": [[{"action": "alloc", "size": 512}]]}, written key by key; memo 4 is the entry.
  const shared = bytes([0x80, 4, 0x7d, 0x94, 0x8c, 8], 'segments', [0x5d, 0x73, 0x8c, 13], 'device_traces', [0x94, 0x5d, 0x94, 0x5d, 0x94, 0x28, 0x7d, 0x94, 0x28],
    [0x8c, 6], 'action', [0x8c, 5], 'alloc', [0x8c, 4], 'size', [0x4d, 0, 2, 0x75]);

  it('reads entries written the general way, one by one or in one long APPENDS', () => {
    const ok = bytes([...shared], [0x65, 0x61, 0x73, 0x2e]); // APPENDS, APPEND to device_traces, SETITEM
    const t = readSnapshotPickle(ok).traces[0]!;
    expect(entries(t)).toEqual([[0, 0, 512, 0, NaN, '(no stack recorded)']]);
    expect(comparable(readSnapshot(unpickle(ok), ok.length))).toEqual(comparable(readSnapshotPickle(ok)));
  });

  it('refuses a trace entry read back from the memo, popped, or put in a tuple', () => {
    const again = bytes([...shared], [0x68, 4, 0x65, 0x61, 0x73, 0x2e]); // BINGET of the entry dict
    expect(errorOf(() => readSnapshotPickle(again)).message).toMatch(/BINGET at byte \d+ uses a trace entry or trace list in a way PyTorch never writes/);
    expect(readSnapshot(unpickle(again), again.length).traces[0]!.length).toBe(2);
    const popped = bytes([...shared], [0x30, 0x65, 0x61, 0x73, 0x2e]);
    expect(errorOf(() => readSnapshotPickle(popped)).code).toBe('INPUT_MALFORMED');
    const tupled = bytes([...shared], [0x85, 0x65, 0x61, 0x73, 0x2e]);
    expect(errorOf(() => readSnapshotPickle(tupled)).code).toBe('INPUT_MALFORMED');
  });

  it('holds its memory estimate under a given budget (floods of dicts and of trace entries)', () => {
    const data = readFileSync(`${DIR}/current-p4.pickle`);
    expect(errorOf(() => readSnapshotPickle(data, { maxHeapBytes: 50_000 })).code).toBe('INPUT_TOO_LARGE');
    const flood = bytes([0x80, 2, 0x5d, 0x28], Array(300_000).fill(0x7d), [0x65, 0x2e]);
    expect(errorOf(() => readSnapshotPickle(flood, { maxHeapBytes: 2 * flood.length + (1 << 20) })).code).toBe('INPUT_TOO_LARGE');
  });
});

describe('columnar fuzzing', () => {
  const bases = ['current-p4', 'current-pcpp', 'v21-p4', 'legacy-p2'].map((n) => readFileSync(`${DIR}/${n}.pickle`));

  /** Both readers fail with a GpumemError or agree; the columnar one may refuse what the plain one accepts. */
  function agree(data: Uint8Array): void {
    let plain: MemorySnapshot | GpumemError;
    let columnar: MemorySnapshot | GpumemError;
    try {
      plain = readSnapshot(unpickle(data), data.length);
    } catch (e) {
      if (!(e instanceof GpumemError)) throw e;
      plain = e;
    }
    try {
      columnar = readSnapshotPickle(data);
    } catch (e) {
      if (!(e instanceof GpumemError)) throw e;
      columnar = e;
    }
    if (columnar instanceof GpumemError) return;
    expect(plain).not.toBeInstanceOf(GpumemError);
    expect(comparable(columnar)).toEqual(comparable(plain as MemorySnapshot));
    buildReport(columnar, { top: 5, requestBytes: 1 << 20 });
  }

  it('mutated and truncated real snapshots', () => {
    fc.assert(
      fc.property(
        fc.constantFrom(...bases),
        fc.array(fc.tuple(fc.nat(), fc.integer({ min: 0, max: 255 })), { minLength: 1, maxLength: 6 }),
        fc.option(fc.nat()),
        (base, flips, cut) => {
          const data = Uint8Array.from(base);
          for (const [at, value] of flips) data[at % data.length] = value;
          agree(cut === null ? data : data.subarray(0, cut % data.length));
        },
      ),
      { numRuns: runs(300) },
    );
  });

  it('random bytes after a protocol header', () => {
    fc.assert(fc.property(fc.uint8Array({ maxLength: 300 }), (tail) => agree(Uint8Array.from([0x80, 4, ...tail]))), { numRuns: runs(2000) });
  });
});
