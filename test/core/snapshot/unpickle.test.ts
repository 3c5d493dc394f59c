/**
 * The unpickler against Python's own output: values, every refused opcode, chunk boundaries anywhere,
 * the hostile set, and fast-check fuzzing (random bytes and mutated real snapshots).
 */
import { readFileSync } from 'node:fs';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { GpumemError } from '../../../src/core/errors.js';
import { buildReport, readSnapshot, unpickle, Unpickler, UNSAFE_OPCODES } from '../../../src/core/snapshot/index.js';
import { DIR, fixtureNames } from './fixtures.js';
import { runs } from '../../helpers/fuzz.js';

const bytes = (...parts: Array<number[] | string>): Uint8Array =>
  Uint8Array.from(parts.flatMap((p) => (typeof p === 'string' ? [...Buffer.from(p, 'latin1')] : p)));

function errorOf(fn: () => unknown): GpumemError {
  try {
    fn();
  } catch (e) {
    expect(e).toBeInstanceOf(GpumemError);
    return e as GpumemError;
  }
  throw new Error('expected an error');
}

describe('values', () => {
  it('reads ints of every width, floats, strings, bytes, bools, None, tuples and sets', () => {
    // PROTO 2; EMPTY_LIST MARK … APPENDS STOP
    const v = unpickle(bytes([0x80, 2, 0x5d, 0x28],
      [0x4b, 255], [0x4d, 0x34, 0x12], [0x4a, 0xff, 0xff, 0xff, 0xff],
      [0x8a, 6, 0, 0, 0, 0, 0x80, 0x7f], // 0x7f8000000000
      [0x8a, 9, ...Array(8).fill(0xff), 0], // 2**64 - 1, the 9-byte int
      [0x8a, 1, 0xff], // -1
      [0x8b, 2, 0, 0, 0, 0x00, 0x01], // LONG4 256
      [0x47, 0x3f, 0xf8, 0, 0, 0, 0, 0, 0], // 1.5
      [0x8c, 3], 'abc', [0x58, 2, 0, 0, 0], 'é'.length === 1 ? [0xc3, 0xa9] : [],
      [0x43, 2, 1, 2], [0x88, 0x89, 0x4e],
      [0x4b, 1, 0x4b, 2, 0x86], [0x29],
      [0x8f, 0x28, 0x4b, 7, 0x90],
      [0x65, 0x2e]));
    expect(v).toEqual([255, 0x1234, -1, 0x7f8000000000, 2n ** 64n - 1n, -1, 256, 1.5, 'abc', 'é', Uint8Array.from([1, 2]), true, false, null, [1, 2], [], [7]]);
  });

  it('reads dicts, memo references and keys that would be prototype names', () => {
    const v = unpickle(bytes([0x80, 4, 0x7d, 0x94, 0x28], [0x8c, 1], 'a', [0x94, 0x4b, 1],
      [0x8c, 9], '__proto__', [0x68, 1], [0x8c, 1], 'b', [0x68, 0], [0x75, 0x2e])) as Record<string, unknown>;
    expect(Object.keys(v)).toEqual(['a', '__proto__', 'b']);
    expect(v.a).toBe(1);
    expect(v.__proto__).toBe('a');
    expect(v.b).toBe(v);
    expect(Object.getPrototypeOf(v)).toBe(Object.prototype);
  });

  it('matches Python for every generated snapshot, however the file is cut into chunks', () => {
    for (const name of fixtureNames()) {
      const data = readFileSync(`${DIR}/${name}.pickle`);
      const whole = unpickle(data);
      for (const size of [1, 7, 4096]) {
        const u = new Unpickler({ totalBytes: data.length });
        for (let at = 0; at < data.length; at += size) u.push(data.subarray(at, at + size));
        expect(u.finish()).toEqual(whole);
      }
    }
  });
});

describe('refusals', () => {
  it.each([...UNSAFE_OPCODES])('refuses opcode 0x%s (%s) naming it and its offset', (code, name) => {
    const e = errorOf(() => unpickle(bytes([0x80, 2, 0x4e, 0x4e, code, 0, 0, 0, 0, 0, 0, 0, 0, 0x2e])));
    expect(e.code).toBe('INPUT_UNSAFE');
    expect(e.message).toContain(`${name} at byte 4`);
  });

  it.each([
    ['exploit-global.pkl', 'INPUT_UNSAFE', /GLOBAL at byte 2/],
    ['exploit-stack-global.pkl', 'INPUT_UNSAFE', /STACK_GLOBAL/],
    ['exploit-ext.pkl', 'INPUT_UNSAFE', /EXT1 at byte 2/],
    ['exploit-persid.pkl', 'INPUT_UNSAFE', /BINPERSID/],
    ['huge-length8.pkl', 'INPUT_MALFORMED', /BINUNICODE8 at byte 2 declares more than 2\^53 bytes/],
    ['huge-length4.pkl', 'INPUT_MALFORMED', /declares 4294967280 bytes, more than the 4 bytes left/],
    ['deep-mark.pkl', 'INPUT_UNSAFE', /nests deeper than 1000/],
    ['truncated.pkl', 'INPUT_MALFORMED', /truncated/],
    ['empty.pkl', 'INPUT_MALFORMED', /truncated/],
    ['not-a-pickle.pkl', 'INPUT_MALFORMED', /protocol header/],
  ])('hostile %s → %s', (file, code, message) => {
    const e = errorOf(() => unpickle(readFileSync(`${DIR}/hostile/${file}`)));
    expect(e.code).toBe(code);
    expect(e.message).toMatch(message);
  });

  it('a memo bomb parses in linear memory and the model refuses to expand it', () => {
    const data = readFileSync(`${DIR}/hostile/bomb.pkl`);
    const value = unpickle(data);
    const e = errorOf(() => readSnapshot(value, data.length));
    expect(e.code).toBe('INPUT_UNSAFE');
    expect(e.message).toMatch(/memo bomb/);
  });

  it('a million nested tuples parse without recursion and are not taken for a snapshot', () => {
    const data = readFileSync(`${DIR}/hostile/deep-tuple.pkl`);
    expect(errorOf(() => readSnapshot(unpickle(data), data.length)).code).toBe('INPUT_MALFORMED');
  });

  it('holds the memory estimate under its budget (a flood of None)', () => {
    const flood = bytes([0x80, 2, 0x5d, 0x28], Array(200_000).fill(0x4e), [0x65, 0x2e]);
    expect(errorOf(() => unpickle(flood, { maxHeapBytes: 400_000 })).code).toBe('INPUT_TOO_LARGE');
    expect((unpickle(flood) as unknown[]).length).toBe(200_000);
  });

  it('refuses memo slots out of order, reads of unset slots and protocol 0', () => {
    expect(errorOf(() => unpickle(bytes([0x80, 2, 0x4e, 0x71, 5, 0x2e]))).message).toMatch(/out of order/);
    expect(errorOf(() => unpickle(bytes([0x80, 2, 0x68, 3, 0x2e]))).message).toMatch(/never stored/);
    expect(errorOf(() => unpickle(bytes([0x80, 2, 0x49], '1\n.'))).message).toMatch(/protocols 0–1/);
  });
});

describe('fuzzing', () => {
  const current = readFileSync(`${DIR}/current-p4.pickle`);
  const cpp = readFileSync(`${DIR}/current-pcpp.pickle`);

  /** The whole pipeline either succeeds or fails with one GpumemError: never another error, never a hang. */
  function pipeline(data: Uint8Array): void {
    try {
      buildReport(readSnapshot(unpickle(data), data.length), { top: 5, requestBytes: 1 << 20 });
    } catch (e) {
      if (!(e instanceof GpumemError)) throw e;
    }
  }

  it('random bytes after a protocol header', () => {
    fc.assert(fc.property(fc.uint8Array({ maxLength: 300 }), (tail) => pipeline(Uint8Array.from([0x80, 4, ...tail]))), { numRuns: runs(3000) });
  });

  it('mutated and truncated real snapshots', () => {
    fc.assert(
      fc.property(
        fc.constantFrom(current, cpp),
        fc.array(fc.tuple(fc.nat(), fc.integer({ min: 0, max: 255 })), { minLength: 1, maxLength: 8 }),
        fc.option(fc.nat()),
        (base, flips, cut) => {
          const data = Uint8Array.from(base);
          for (const [at, value] of flips) data[at % data.length] = value;
          pipeline(cut === null ? data : data.subarray(0, cut % data.length));
        },
      ),
      { numRuns: runs(150) },
    );
  });
});
