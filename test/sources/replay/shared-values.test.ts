/**
 * Recording format 4: a path that many items changed to the same value is written once
 * (`{"value": V, "at": [positions]}`, no `at` when every item changed it). A /proc round dates each of 512
 * rows with one time; record's whole read schedule (memory each second, SM % every 40 s, a /proc round every
 * 15 s) reads back sample for sample and stays within the size goal (a cut recording: recording-v3.test.ts); a
 * shared value that does not fit is refused by line and field.
 */
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { isDeepStrictEqual } from 'node:util';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { GpumemError, type Sample } from '../../../src/core/index.js';
import { DEFAULT_KEYFRAMES, readRecording } from '../../../src/sources/replay/index.js';
import { createRecordingWriter } from '../../../src/store/recording/index.js';
import { runs } from '../../helpers/fuzz.js';
import { syntheticSession, type SessionShape } from './synthetic-session.js';

const dir = mkdtempSync(join(tmpdir(), 'gpumem-shared-values-'));

/** What record reads when (docs/nvml.md): SM % of 8 H100s every 40 s, a /proc round every 30 s. */
const RECORD_READS = { smEverySamples: 40, hostEverySamples: 30 };

const withoutSource = ({ source: _source, ...rest }: Sample): Omit<Sample, 'source'> => rest;

function write(name: string, samples: Iterable<Sample>): { path: string; written: Sample[] } {
  const path = join(dir, name);
  const w = createRecordingWriter(path, { createdMs: 1_700_000_000_000, intervalMs: 1000 });
  const written: Sample[] = [];
  for (const s of samples) {
    w.write(s);
    written.push(s);
  }
  w.close();
  return { path, written };
}

const lines = (path: string): Record<string, any>[] => readFileSync(path, 'utf8').trimEnd().split('\n').slice(1).map((l) => JSON.parse(l));
const rowChanges = (path: string): Record<string, unknown>[] => lines(path).filter((l) => 'delta' in l).map((l) => l.delta.processes?.changed ?? {});

/**
 * Samples of `rows` still processes; at the samples `roundAt` names, a round re-dates each row with what
 * `date` gives (the sample's time by default; undefined leaves the row as it was).
 */
function rounds(rows: number, roundAt: (k: number) => boolean, date: (i: number, timeMs: number) => number | undefined = (_, t) => t): Sample[] {
  const first = [...syntheticSession({ gpus: 1, procsPerGpu: rows, changeShare: 0, seed: 3 }, 1)][0]!;
  // Dated from the start, as a recorder's rows are (a date appearing later would reshape every row).
  const samples = [{ ...first, processes: first.processes.map((p) => ({ ...p, host: { ...p.host!, cpuTicksAtMs: first.timeMs } })) }];
  for (let k = 1; k < 6; k++) {
    const prev = samples[k - 1]!;
    const timeMs = prev.timeMs + 1000;
    const processes = !roundAt(k) ? prev.processes : prev.processes.map((p, i) => {
      const at = date(i, timeMs);
      return at === undefined ? p : { ...p, host: { ...p.host!, cpuTicksAtMs: at } };
    });
    samples.push({ ...prev, timeMs, devices: prev.devices, processes });
  }
  return samples;
}

describe('recording format 4: shared values', () => {
  it('a round over 512 still rows writes its date once, and reads back exactly', () => {
    const { path, written } = write('round-512.ndjson', rounds(512, (k) => k === 2 || k === 4));
    expect(readRecording(path).samples.map(withoutSource)).toEqual(written.map(withoutSource));
    const changes = rowChanges(path);
    expect(changes[1]).toEqual({ 'host.cpuTicksAtMs': { value: written[2]!.timeMs } });
    expect(changes[3]).toEqual({ 'host.cpuTicksAtMs': { value: written[4]!.timeMs } });
    // The round's line: the date once and the GPU's numbers, not 512 copies of a 13-digit time.
    const roundLine = readFileSync(path, 'utf8').split('\n').find((l) => l.includes('"host.cpuTicksAtMs":{"value"'))!;
    expect(roundLine.length).toBeLessThan(400);
  });

  it('rows dated apart keep their own values beside the shared one; rows not re-dated leave the value a list of positions', () => {
    // Rows 3 and 7 were read at another time: their own values, the shared one for every other row.
    const apart = 1_700_000_000_500;
    const { path, written } = write('round-apart.ndjson', rounds(12, (k) => k === 1, (i, t) => (i === 3 || i === 7 ? apart : t)));
    expect(readRecording(path).samples.map(withoutSource)).toEqual(written.map(withoutSource));
    expect(rowChanges(path)[0]).toEqual({ 'host.cpuTicksAtMs': { 3: apart, 7: apart, value: written[1]!.timeMs } });
    // Rows 9 to 11 not read in the round: the value goes to the positions listed.
    const { path: other, written: w2 } = write('round-some.ndjson', rounds(12, (k) => k === 1, (i, t) => (i < 9 ? t : undefined)));
    expect(readRecording(other).samples.map(withoutSource)).toEqual(w2.map(withoutSource));
    expect(rowChanges(other)[0]).toEqual({ 'host.cpuTicksAtMs': { value: w2[1]!.timeMs, at: [0, 1, 2, 3, 4, 5, 6, 7, 8] } });
  });

  it('a value shared by too few items to save bytes stays by position', () => {
    const samples = rounds(12, () => false);
    samples[1] = { ...samples[1]!, processes: samples[1]!.processes.map((p, i) => (i < 5 ? { ...p, host: { ...p.host!, state: i === 4 ? 'D' : 'S' } } : p)) };
    const { path, written } = write('few.ndjson', samples);
    expect(readRecording(path).samples.map(withoutSource)).toEqual(written.map(withoutSource));
    expect(rowChanges(path)[0]).toEqual({ 'host.state': { 0: 'S', 1: 'S', 2: 'S', 3: 'S', 4: 'D' } });
  });

  it("record's read schedule over 8 GPUs × 64 processes reads back sample for sample, within 10 MB an hour", () => {
    const shape: SessionShape = { gpus: 8, procsPerGpu: 64, changeShare: 0.1, seed: 17, reads: RECORD_READS };
    // 240 deltas: six SM % reads and eight rounds, the shares of an hour.
    const { path, written } = write('record-reads.ndjson', syntheticSession(shape, 241));
    const read = readRecording(path).samples;
    expect(written.flatMap((s, k) => (isDeepStrictEqual(withoutSource(read[k]!), withoutSource(s)) ? [] : [k]))).toEqual([]);
    const all = readFileSync(path, 'utf8').split('\n').slice(1, -1);
    const bytes = (f: (l: string) => boolean): number => all.filter(f).reduce((n, l) => n + Buffer.byteLength(l) + 1, 0);
    const deltas = all.filter((l) => l.startsWith('{"delta":'));
    expect(deltas).toHaveLength(240);
    const perHourKeyframes = 3600 / DEFAULT_KEYFRAMES.everySamples;
    const mb = (bytes((l) => l.startsWith('{"hostFacts":')) + perHourKeyframes * bytes((l) => l.startsWith('{"timeMs":'))
      + (3600 - perHourKeyframes) * (bytes((l) => l.startsWith('{"delta":')) / 240)) / 1e6;
    expect(mb, `${mb.toFixed(2)} MB an hour`).toBeLessThanOrEqual(10);
    // Each round's date is written once; its 512 ticks each at one position (some beside the row's memory).
    const roundDeltas = lines(path).filter((l) => l.delta?.processes?.changed?.['host.cpuTicksAtMs']);
    expect(roundDeltas).toHaveLength(240 / RECORD_READS.hostEverySamples);
    for (const l of roundDeltas) {
      const changed = l.delta.processes.changed as Record<string, Record<string, unknown>>;
      expect(changed['host.cpuTicksAtMs']).toEqual({ value: l.delta.timeMs });
      const ticks = Object.entries(changed).filter(([key]) => key.split(',').includes('host.cpuTicks')).flatMap(([, byPosition]) => Object.keys(byPosition));
      expect(new Set(ticks).size).toBe(512);
    }
  }, 60_000);
});

describe('shared values that do not fit are refused with the line and the field', () => {
  const { path } = write('base-shared.ndjson', rounds(6, (k) => k === 1));
  const base = readFileSync(path, 'utf8').trimEnd().split('\n');
  // Lines: header, host facts, keyframe, then the round's delta (line 4).
  const at = base.findIndex((l) => l.includes('"value"'));
  const tryShared = (edit: (changed: Record<string, any>) => void): (() => unknown) => {
    const value = JSON.parse(base[at]!);
    edit(value.delta.processes.changed);
    const bad = join(dir, 'bad-shared.ndjson');
    writeFileSync(bad, `${base.map((l, i) => (i === at ? JSON.stringify(value) : l)).join('\n')}\n`);
    return () => readRecording(bad);
  };

  it('names the field: positions out of order or past the rows, several paths, a stranger key, a bad value', () => {
    expect(at).toBe(3);
    expect(tryShared(() => {})).not.toThrow();
    const line = `bad-shared\\.ndjson:${at + 1}: delta\\.processes\\.changed`;
    expect(tryShared((c) => { c['host.cpuTicksAtMs'].at = [2, 1]; })).toThrow(new RegExp(`${line}\\.host\\.cpuTicksAtMs\\.at\\[1\\] must be a position \\(ascending, below 6\\)`));
    expect(tryShared((c) => { c['host.cpuTicksAtMs'].at = [0, 6]; })).toThrow(new RegExp(`${line}\\.host\\.cpuTicksAtMs\\.at\\[1\\] must be a position`));
    expect(tryShared((c) => { c['host.cpuTicksAtMs'].at = '0-5'; })).toThrow(new RegExp(`${line}\\.host\\.cpuTicksAtMs\\.at must be an array of positions`));
    expect(tryShared((c) => { c['host.cpuTicksAtMs'].every = true; })).toThrow(new RegExp(`${line}\\.host\\.cpuTicksAtMs\\.every is not part of a shared value`));
    expect(tryShared((c) => { Object.assign(c['host.cpuTicksAtMs'], { 1: 5, at: [0, 1] }); })).toThrow(new RegExp(`${line}\\.host\\.cpuTicksAtMs\\.at\\[1\\] names position 1, which the key also gives a value of its own`));
    expect(tryShared((c) => { c['host.cpuTicksAtMs'][9] = 5; })).toThrow(new RegExp(`${line}\\.host\\.cpuTicksAtMs names position "9", but there are 6`));
    expect(tryShared((c) => { c['usedBytes,host.cpuTicksAtMs'] = { value: 1 }; })).toThrow(new RegExp(`${line}\\.usedBytes,host\\.cpuTicksAtMs holds one value for 2 paths`));
    expect(tryShared((c) => { c.usedBytes = { value: -1, at: [0] }; })).toThrow(new RegExp(`bad-shared\\.ndjson:${at + 1}: sample field processes\\[0\\]\\.usedBytes must be a whole byte count`));
  });
});

describe('fuzz: delta lines', () => {
  it('any value put anywhere in a delta (shared values included) reads, or is one GpumemError naming the line', () => {
    // Rounds that date most rows alike, one row apart and some not at all: shared values with and without `at`.
    const samples = rounds(12, (k) => k % 2 === 1, (i, t) => (i % 3 === 0 && i > 0 ? undefined : i === 5 ? t - 500 : t));
    const text = readFileSync(write('fuzz-base.ndjson', samples).path, 'utf8').trimEnd().split('\n');
    const deltaAt = text.flatMap((l, i) => (l.startsWith('{"delta":') ? [i] : []));
    expect(text.some((l) => l.includes('"at":['))).toBe(true);
    // Every path into every delta line (a position, a shared value's `at`, a changed key, the time), and a new
    // key in every object (`at` or `value` where there was none, a position, a stranger).
    const targets: { line: number; at: (string | number)[] }[] = [];
    const walk = (line: number, v: unknown, at: (string | number)[]): void => {
      targets.push({ line, at });
      if (v === null || typeof v !== 'object') return;
      for (const [k, c] of Object.entries(v)) walk(line, c, [...at, Array.isArray(v) ? Number(k) : k]);
      if (!Array.isArray(v)) for (const k of ['at', 'value', '11', 'x']) if (!(k in v)) targets.push({ line, at: [...at, k] });
    };
    for (const i of deltaAt) walk(i, JSON.parse(text[i]!), []);
    const path = join(dir, 'fuzz.ndjson');
    fc.assert(
      fc.property(fc.constantFrom(...targets.filter((t) => t.at.length > 1)), fc.jsonValue(), ({ line, at }, value) => {
        const doc = JSON.parse(text[line]!);
        let parent = doc;
        for (const k of at.slice(0, -1)) parent = parent[k];
        parent[at[at.length - 1]!] = value;
        writeFileSync(path, `${text.map((l, i) => (i === line ? JSON.stringify(doc) : l)).join('\n')}\n`);
        try {
          readRecording(path);
        } catch (error) {
          expect(error).toBeInstanceOf(GpumemError);
          // The line changed, or a later one it no longer fits (a row it removed that a later delta names).
          const named = /fuzz\.ndjson:(\d+): /.exec((error as Error).message);
          expect(Number(named?.[1])).toBeGreaterThanOrEqual(line + 1);
        }
      }),
      { numRuns: runs(300) },
    );
  });
});
