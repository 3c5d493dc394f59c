/**
 * The stat parser that reads the bytes a held /proc/PID/stat left in the shared buffer: the same fields as a
 * plain split of the line, whatever the comm holds, only within the bytes read, and the previous object back
 * when nothing changed.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { parseProcStatBytes, type ProcStat } from '../../../src/sources/procfs/index.js';

/** A stat line as the kernel writes it, the comm given as raw bytes (any byte but NUL). */
function statBytes(comm: Uint8Array, f: { pid: number; state: string; ppid: number; pgid: number; utime: number; stime: number; start: number }): Buffer {
  const after = `) ${f.state} ${f.ppid} ${f.pgid} ${f.pgid} 0 -1 4194560 100 0 0 0 ${f.utime} ${f.stime} 0 0 20 -5 1 0 ${f.start} 1000000 100 18446744073709551615 1 1 0 0 0 0 0 0 0 0 0 0 17 3 0 0 0 0 0\n`;
  return Buffer.concat([Buffer.from(`${f.pid} (`), comm, Buffer.from(after)]);
}

/** The reference: split the text after the last ")" on single spaces, as the kernel separates fields. */
function splitParse(line: Buffer): ProcStat {
  const close = line.lastIndexOf(')');
  const fields = line.toString('latin1', close + 2).trimEnd().split(' ');
  const n = (i: number): number => Number(fields[i - 3]);
  return { pid: Number(line.toString('latin1', 0, line.indexOf('(') - 1)), comm: line.toString('utf8', line.indexOf('(') + 1, close), state: fields[0] as ProcStat['state'], ppid: n(4), pgid: n(5), startTicks: n(22), cpuTicks: n(14) + n(15) };
}

const fieldsArb = fc.record({
  pid: fc.integer({ min: 1, max: 4_194_304 }), state: fc.constantFrom('R', 'S', 'D', 'Z', 'T', 'I'), ppid: fc.nat(4_194_304), pgid: fc.nat(4_194_304),
  utime: fc.nat(), stime: fc.nat(), start: fc.nat(),
});
const commArb = fc.uint8Array({ minLength: 0, maxLength: 64 }).map((a) => a.map((b) => (b === 0 ? 41 : b)));

describe('parseProcStatBytes', () => {
  it('reads a comm with spaces and parentheses, and UTF-8 in it', () => {
    const line = statBytes(Buffer.from('a) (b c) S 9 9 é'), { pid: 4242, state: 'S', ppid: 1, pgid: 4242, utime: 1, stime: 2, start: 12345 });
    expect(parseProcStatBytes(line, line.length)).toEqual({ pid: 4242, comm: 'a) (b c) S 9 9 é', state: 'S', ppid: 1, pgid: 4242, startTicks: 12345, cpuTicks: 3 });
  });

  it('agrees with splitting the line, for any comm bytes and field values, ignoring bytes past the length read (property)', () => {
    fc.assert(fc.property(commArb, fieldsArb, fc.uint8Array({ maxLength: 200 }), (comm, fields, stale) => {
      const line = statBytes(comm, fields);
      // The shared buffer still holds an earlier, longer line's bytes after this one.
      const buffer = Buffer.concat([line, Buffer.from(stale), Buffer.from(') R 7 7 7')]);
      const parsed = parseProcStatBytes(buffer, line.length);
      const expected = splitParse(line);
      expect(parsed).toEqual(Number.isSafeInteger(expected.cpuTicks) ? expected : { ...expected, cpuTicks: null });
    }));
  });

  it('returns the previous object when every field and an ASCII comm are the same, a new one when any changed (property)', () => {
    fc.assert(fc.property(commArb, fieldsArb, fc.constantFrom('comm', 'state', 'ppid', 'utime', 'start', 'none'), (comm, fields, change) => {
      const first = statBytes(comm, fields);
      const previous = parseProcStatBytes(first, first.length);
      const next = change === 'comm' ? statBytes(Buffer.concat([comm, Buffer.from('x')]), fields)
        : statBytes(comm, { ...fields, ...(change === 'state' ? { state: fields.state === 'R' ? 'S' : 'R' } : change === 'none' ? {} : { [change]: fields[change as 'ppid'] + 1 }) });
      const parsed = parseProcStatBytes(next, next.length, previous);
      expect(parsed).toEqual(parseProcStatBytes(next, next.length));
      // A comm with non-ASCII bytes is decoded at every read, so only an ASCII one can give the same object.
      if (change === 'none' && comm.every((b) => b < 128)) expect(parsed).toBe(previous);
      else if (change !== 'none') expect(parsed).not.toBe(previous);
    }));
  });

  it('a comm the same length as before but other non-ASCII bytes is decoded afresh', () => {
    const f = { pid: 9, state: 'S', ppid: 1, pgid: 9, utime: 0, stime: 0, start: 5 };
    const a = statBytes(Buffer.from('café'), f);
    const b = statBytes(Buffer.from('cafè'), f);
    const previous = parseProcStatBytes(a, a.length);
    expect(parseProcStatBytes(b, b.length, previous)?.comm).toBe('cafè');
  });

  it('what is not a stat line gives null', () => {
    for (const text of ['', '12 (x) S', '12 x) S 1 1', 'x (y) S 1 1 1 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 5', '12 (y) S 1 1 1 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0x5']) {
      const bytes = Buffer.from(text);
      expect(parseProcStatBytes(bytes, bytes.length), text).toBeNull();
    }
    // The line is only what was read: a ")" and fields beyond the length do not count.
    const line = Buffer.from('12 (y) S 1 1 1 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 5');
    expect(parseProcStatBytes(line, 8)).toBeNull();
  });
});
