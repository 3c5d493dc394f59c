/**
 * Recording formats 3 and 4: keyframes and deltas (4 writes a value many items share once: shared-values.test.ts). A long synthetic session with every kind of change reads back
 * sample for sample; the bytes per sample at 8 GPUs × 64 and × 512 processes stay within the stated bounds;
 * a recording cut anywhere reads up to its last whole line; a delta that does not fit is refused by line.
 */
import { mkdtempSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { isDeepStrictEqual } from 'node:util';
import { describe, expect, it } from 'vitest';
import type { Sample } from '../../../src/core/index.js';
import { DEFAULT_KEYFRAMES, RECORDING_VERSION, readRecording } from '../../../src/sources/replay/index.js';
import { createRecordingWriter, type RecordingWriterOptions } from '../../../src/store/recording/index.js';
import { device, hostFacts, processRow, seeded, syntheticSession, type SessionShape } from './synthetic-session.js';

/** The tests that write and read back hundreds of thousands of rows: 9–12 s alone, twice that beside the whole suite. */
const HEAVY_MS = 60_000;

const dir = mkdtempSync(join(tmpdir(), 'gpumem-recording-v3-'));
const MiB = 1024 * 1024;

const withoutSource = (s: Sample): Omit<Sample, 'source'> => {
  const { source: _source, ...rest } = s;
  return rest;
};

function write(name: string, samples: Iterable<Sample>, options: RecordingWriterOptions = {}): { path: string; written: Sample[]; keyframes: number; headerBytes: number } {
  const path = join(dir, name);
  const w = createRecordingWriter(path, { createdMs: 1_700_000_000_000, intervalMs: 1000, ...options });
  const headerBytes = statSync(path).size;
  const written: Sample[] = [];
  for (const s of samples) {
    w.write(s);
    written.push(s);
  }
  w.close();
  return { path, written, keyframes: w.keyframes, headerBytes };
}

/** Every sample read back deep-equals the one written (the source aside: a replay names itself). */
function mismatches(path: string, written: Sample[]): number[] {
  const read = readRecording(path).samples;
  expect(read).toHaveLength(written.length);
  return written.flatMap((s, k) => (isDeepStrictEqual(withoutSource(read[k]!), withoutSource(s)) ? [] : [k]));
}

/** Everything that can happen between two samples, at fixed points of a 1500-sample session. */
function edits(k: number, s: Sample, random: () => number): void {
  const rows = s.processes;
  const pick = (): number => Math.floor(random() * rows.length);
  if (k % 37 === 0 && rows.length > 2) rows.splice(pick(), 1);
  if (k % 41 === 0) {
    const pid = 20_000 + k;
    const g = k % s.devices.length;
    rows.splice(pick(), 0, processRow(pid, g, hostFacts(pid, 99, 70_000 + k), 300 * MiB));
  }
  if (k % 53 === 0 && rows[0]?.host) rows[0].host = { ...rows[0].host, state: rows[0].host.state === 'S' ? 'R' : 'S', ppid: 4000 + (k % 3) };
  const at = (i: number) => rows[i % rows.length]!;
  switch (k) {
    case 300: at(2).host = hostFacts(at(2).pid, 7, 90_000); break; // the pid reused by a new process
    case 310: at(2).host = { ...at(2).host!, state: 'Z', cmdline: null, unavailable: { cmdline: 'zombie: command line released' } }; break;
    case 400: at(3).smUtilPct = null; at(3).usedBytes = null; at(3).unavailable = { ...at(3).unavailable, usedBytes: 'NVML_VALUE_NOT_AVAILABLE' }; break;
    case 410: at(3).smUtilPct = 12; at(3).usedBytes = 5 * MiB; at(3).unavailable = { name: 'not read from NVML (host facts carry the command line)' }; break;
    case 450: at(4).host = { ...at(4).host!, cpuPct: 99.5, rssBytes: 3 * 1024 * MiB }; break; // live-view facts appear
    case 500: [rows[1], rows[5]] = [rows[5]!, rows[1]!]; break; // two rows change places
    case 600: Object.assign(s.devices[1]!, { status: 'lost', temperatureC: null, powerDrawMw: null, memory: { totalBytes: null, reservedBytes: null, usedBytes: null, freeBytes: null }, unavailable: { 'memory.usedBytes': 'NVML_ERROR_GPU_IS_LOST', temperatureC: 'NVML_ERROR_GPU_IS_LOST' } }); break;
    case 650: Object.assign(s.devices[1]!, { ...device(1), status: 'ok' }); break;
    case 700: delete s.devices[0]!.clocks; break;
    case 800: s.source = { kind: 'smi', detail: 'nvidia-smi -q -x' }; break;
    case 810: s.unavailable = { processes: 'nvidia-smi listed no processes' }; break;
    case 820: s.unavailable = {}; break;
    case 900: s.devices.push(device(s.devices.length)); break; // a GPU appears: a keyframe
    case 1000: s.timeMs += 600_000; break; // ten minutes without samples: a keyframe
    case 1100: rows.push({ ...processRow(4_000_000, 0, null, 64 * MiB), unavailable: {} }); break; // a pid not visible here
    case 1150: rows.push({ ...processRow(21_000, 1, hostFacts(21_000, 5, 5), MiB), gpuInstanceId: 1, computeInstanceId: 0 }); break; // a MIG slice
    case 1200: rows.push({ ...rows[0]!, usedBytes: 2 * MiB }); break; // the same pid and GPU twice
    case 1300: rows.reverse(); break; // every row moves: a keyframe is smaller
    case 1400: s.processes = []; break;
    case 1401: s.processes = [processRow(30_000, 0, hostFacts(30_000, 1, 1), MiB)]; break;
    default:
  }
}

describe('recording formats 3 and 4: keyframes and deltas', () => {
  it('is the version written', () => {
    const { path } = write('version.ndjson', syntheticSession({ gpus: 1, procsPerGpu: 1, changeShare: 0.1, seed: 1 }, 2));
    expect(RECORDING_VERSION).toBe(4);
    expect(JSON.parse(readFileSync(path, 'utf8').split('\n')[0]!)).toMatchObject({ version: 4, keyframes: { everySamples: 600, everyMs: 600_000 } });
  });

  it('a long session with every kind of change reads back: each sample deep-equals the one written', () => {
    const shape: SessionShape = { gpus: 2, procsPerGpu: 12, changeShare: 0.1, seed: 7, edit: edits };
    const { path, written, keyframes } = write('long.ndjson', syntheticSession(shape, 1500), { keyframes: { everySamples: 100, everyMs: 120_000 } });
    expect(mismatches(path, written)).toEqual([]);
    // Mostly deltas: a keyframe every 100 samples plus the ones forced (a GPU added, the time gap, the reversal).
    expect(keyframes).toBeGreaterThanOrEqual(15);
    expect(keyframes).toBeLessThanOrEqual(25);
    const lines = readFileSync(path, 'utf8').trimEnd().split('\n');
    expect(lines.filter((l) => l.startsWith('{"delta":')).length).toBe(1500 - keyframes);
  });

  it('a field set to undefined reads as absent, and a field that goes away is still written', () => {
    const samples = [...syntheticSession({ gpus: 2, procsPerGpu: 3, changeShare: 0.5, seed: 4 }, 6)];
    samples[1]!.devices[0]!.clocks = undefined;
    samples[2]!.devices[0]!.clocks = undefined;
    samples[3]!.processes[1]!.host = { ...samples[3]!.processes[1]!.host!, cpuPct: undefined };
    samples[4]!.source = { ...samples[4]!.source, note: undefined };
    samples[5]!.source = { ...samples[5]!.source, note: 'now there is one' };
    const { path, written } = write('undefined.ndjson', samples);
    expect(mismatches(path, written.map((s) => JSON.parse(JSON.stringify(s)) as Sample))).toEqual([]);
  });

  it('a delta that removes and adds rows among 150,000 reads back (no call with one argument per row)', () => {
    const many = Array.from({ length: 150_000 }, (_, i) => ({ ...processRow(100_000 + i, 0, null, MiB), unavailable: {} }));
    const base = [...syntheticSession({ gpus: 1, procsPerGpu: 0, changeShare: 0, seed: 1 }, 3)];
    const samples = [
      { ...base[0]!, processes: many },
      { ...base[1]!, processes: [...many.slice(0, 10), ...many.slice(11), { ...processRow(7, 0, null, MiB), unavailable: {} }] },
      { ...base[2]!, processes: [{ ...processRow(8, 0, null, MiB), unavailable: {} }, ...many.slice(0, 10), ...many.slice(11)] },
    ];
    const { path, written, keyframes } = write('many-rows.ndjson', samples);
    expect(keyframes).toBe(1);
    expect(mismatches(path, written)).toEqual([]);
  }, HEAVY_MS);

  it('a source handing out the previous sample\'s very rows (a steady machine) writes deltas with no row in them, and reads back exactly', () => {
    const session = [...syntheticSession({ gpus: 2, procsPerGpu: 8, changeShare: 0.3, seed: 5 }, 6)];
    // Samples 2–4 share sample 1's row array, as the enricher hands it out while nothing moved; 5 moves again.
    const shared = session.map((s, k) => (k >= 2 && k <= 4 ? { ...s, timeMs: s.timeMs, processes: session[1]!.processes } : s));
    const { path, written } = write('steady-rows.ndjson', shared);
    expect(mismatches(path, written)).toEqual([]);
    const lines = readFileSync(path, 'utf8').trim().split('\n').map((l) => JSON.parse(l) as Record<string, unknown>);
    const deltas = lines.filter((l) => 'delta' in l).map((l) => l.delta as Record<string, unknown>);
    expect(deltas.length).toBeGreaterThanOrEqual(4);
    // The deltas of samples 2–4 (the second to fourth delta) say nothing about rows.
    for (const d of deltas.slice(1, 4)) expect(d.processes).toBeUndefined();
    expect(deltas[4]!.processes).toBeDefined();
  });

  it('a source handing back unchanged rows as the same objects beside new ones writes only the new ones, and reads back exactly', () => {
    const first = [...syntheticSession({ gpus: 2, procsPerGpu: 6, changeShare: 0, seed: 7 }, 1)][0]!;
    // The same pid on both GPUs (one process, two rows), so a new definition for one row leaves the other row's
    // reference to the earlier one, which still holds for that row.
    first.processes.push({ ...first.processes[0]!, gpuIndex: 1, gpuUuid: first.devices[1]!.uuid, usedBytes: 7 * MiB });
    const samples: Sample[] = [first];
    for (let k = 1; k < 8; k++) {
      const prev = samples[k - 1]!;
      // A new array each sample (something moved); every row but the moved ones is the previous object.
      const rows = [...prev.processes];
      const moved = k % rows.length;
      rows[moved] = { ...rows[moved]!, usedBytes: (rows[moved]!.usedBytes ?? 0) + MiB };
      if (k === 3) rows[0] = { ...rows[0]!, host: { ...rows[0]!.host!, cmdline: ['python', 'renamed.py'] } };
      if (k === 5) [rows[2], rows[3]] = [rows[3]!, rows[2]!];
      samples.push({ ...prev, timeMs: prev.timeMs + 1000, devices: structuredClone(prev.devices), processes: rows });
    }
    const { path, written } = write('reused-rows.ndjson', samples);
    expect(mismatches(path, written)).toEqual([]);
    const deltas = readFileSync(path, 'utf8').trim().split('\n').map((l) => JSON.parse(l) as Record<string, unknown>)
      .filter((l) => 'delta' in l).map((l) => (l.delta as { processes?: { changed?: Record<string, Record<string, unknown>>; replaced?: Record<string, unknown> } }).processes);
    expect(deltas).toHaveLength(7);
    // Sample 1 moved row 1's memory and nothing else: one changed path, at position 1.
    expect(deltas[0]).toEqual({ changed: { usedBytes: { 1: samples[1]!.processes[1]!.usedBytes } } });
  });

  it('a /proc round (every row a new object whose facts were only re-dated) writes the dates alone, and reads back exactly', () => {
    const first = [...syntheticSession({ gpus: 2, procsPerGpu: 6, changeShare: 0, seed: 11 }, 1)][0]!;
    first.processes = first.processes.map((p) => ({ ...p, host: { ...p.host!, cpuTicksAtMs: 1000 }, unavailable: { smUtilPct: 'no sample' } }));
    // Each sample is written as it is made (a source changing a map in place changes it before the next write).
    const path = join(dir, 'round.ndjson');
    const w = createRecordingWriter(path, { createdMs: 1_700_000_000_000 });
    const samples: Sample[] = [first];
    const written: Sample[] = [structuredClone(first)];
    w.write(first);
    for (let k = 1; k < 6; k++) {
      const prev = samples[k - 1]!;
      const rows = prev.processes.map((p, i) => {
        // A round: each row a new object with the same fields and its facts re-dated; row 2 also used CPU.
        const host = { ...p.host!, cpuTicksAtMs: 1000 + 5000 * k, ...(i === 2 ? { cpuTicks: (p.host!.cpuTicks ?? 0) + 7 } : {}) };
        return { ...p, host };
      });
      // A source that changed a row's reasons in place (it must not, but the writer does not count on it).
      if (k === 3) rows[4] = { ...rows[4]!, unavailable: Object.assign(rows[4]!.unavailable, { smUtilPct: 'not read' }) };
      if (k === 4) rows[5] = { ...rows[5]!, usedBytes: (rows[5]!.usedBytes ?? 0) + MiB };
      const sample = { ...prev, timeMs: prev.timeMs + 1000, processes: rows };
      samples.push(sample);
      written.push(structuredClone(sample));
      w.write(sample);
    }
    w.close();
    expect(mismatches(path, written)).toEqual([]);
    const lines = readFileSync(path, 'utf8').trim().split('\n').map((l) => JSON.parse(l) as Record<string, unknown>);
    // No definition after the first: the command lines, environments and cgroups are not written again.
    expect(lines.filter((l) => 'hostFacts' in l)).toHaveLength(1);
    const rowsOf = (d: Record<string, unknown>) => (d.delta as { processes: { changed: Record<string, unknown>; replaced?: unknown } }).processes;
    const deltas = lines.filter((l) => 'delta' in l).map(rowsOf);
    // The first round: every row's date, once, and row 2's ticks; nothing else about any row.
    expect(deltas[0]).toEqual({ changed: {
      'host.cpuTicksAtMs': { value: 6000 },
      'host.cpuTicks': { 2: samples[1]!.processes[2]!.host!.cpuTicks },
    } });
    // The map changed in place is seen (the written copy is compared, not the source's object), as is row 5's memory.
    const ticks = (k: number) => ({ 2: samples[k]!.processes[2]!.host!.cpuTicks });
    expect(deltas[2]!.changed).toEqual({ 'host.cpuTicksAtMs': { value: 16_000 }, 'host.cpuTicks': ticks(3), unavailable: { 4: { smUtilPct: 'not read' } } });
    expect(deltas[3]!.changed).toEqual({ 'host.cpuTicksAtMs': { value: 21_000 }, 'host.cpuTicks': ticks(4), usedBytes: { 5: samples[4]!.processes[5]!.usedBytes } });
  });

  it('a sample sharing the objects that did not change with the one before (as the NVML source hands them out) reads back exactly', () => {
    const samples = [...syntheticSession({ gpus: 2, procsPerGpu: 4, changeShare: 0.5, seed: 3 }, 12)];
    const path = join(dir, 'shared-objects.ndjson');
    const w = createRecordingWriter(path, { createdMs: 1_700_000_000_000 });
    const same = (a: unknown, b: unknown): boolean => JSON.stringify(a) === JSON.stringify(b);
    let before: Sample | null = null;
    let shared = 0;
    for (const s of samples) {
      // A device or row equal to the one at its place before is that very object; a moved one is new.
      const devices = s.devices.map((d, i) => (before && same(before.devices[i], d) ? before.devices[i]! : d));
      const processes = s.processes.map((p, i) => (before && same(before.processes[i], p) ? before.processes[i]! : p));
      shared += devices.filter((d, i) => before?.devices[i] === d).length + processes.filter((p, i) => before?.processes[i] === p).length;
      const out: Sample = { ...s, devices, processes };
      w.write(out);
      before = out;
    }
    w.close();
    // Both kinds occur: objects shared, and objects that moved (the session changes half the rows).
    expect(shared).toBeGreaterThan(0);
    expect(shared).toBeLessThan(samples.length * (2 + 8));
    expect(mismatches(path, samples)).toEqual([]);
  });
});

/**
 * Bytes per hour at 1 Hz by the model of change in synthetic-session.ts, from the lines a shorter session
 * writes: the host facts of every process defined once, a keyframe every 600 samples (DEFAULT_KEYFRAMES, six an
 * hour), deltas for the rest. The goal: 10 MB per hour at 8 GPUs × 64 processes with 10 % of the rows changing
 * each second.
 */
describe('recording size', () => {
  const perHour = (shape: SessionShape, samples: number): { mb: number; keyframeBytes: number; deltaBytes: number; path: string; written: Sample[] } => {
    const name = `size-${shape.gpus}x${shape.procsPerGpu}-${shape.busyCpu ? 'busy' : 'share'}.ndjson`;
    const { path, written } = write(name, syntheticSession(shape, samples));
    const lines = readFileSync(path, 'utf8').split('\n').slice(1, -1).map((l) => ({ l, bytes: Buffer.byteLength(l) + 1 }));
    const sum = (list: { bytes: number }[]): number => list.reduce((n, x) => n + x.bytes, 0);
    const definitions = sum(lines.filter(({ l }) => l.startsWith('{"hostFacts":')));
    const deltas = lines.filter(({ l }) => l.startsWith('{"delta":'));
    const keyframes = lines.filter(({ l }) => l.startsWith('{"timeMs":'));
    expect(keyframes).toHaveLength(1);
    expect(deltas).toHaveLength(samples - 1);
    const keyframeBytes = sum(keyframes);
    const deltaBytes = sum(deltas) / deltas.length;
    const perHourKeyframes = 3600 / DEFAULT_KEYFRAMES.everySamples;
    return { mb: (definitions + perHourKeyframes * keyframeBytes + (3600 - perHourKeyframes) * deltaBytes) / 1e6, keyframeBytes, deltaBytes, path, written };
  };
  const say = (r: { keyframeBytes: number; deltaBytes: number; mb: number }): string => `keyframe ${r.keyframeBytes} B, delta ${r.deltaBytes.toFixed(0)} B a sample, ${r.mb.toFixed(2)} MB an hour`;

  it('8 GPUs × 64 processes, 10 % of rows changing each second: at most 10 MB per hour, and exact', () => {
    const r = perHour({ gpus: 8, procsPerGpu: 64, changeShare: 0.1, seed: 11 }, 300);
    expect(r.mb, say(r)).toBeLessThanOrEqual(10);
    expect(mismatches(r.path, r.written)).toEqual([]);
  }, HEAVY_MS);

  it('8 GPUs × 64 processes with every process busy on the CPU: the CPU ticks of all 512 move each second', () => {
    const r = perHour({ gpus: 8, procsPerGpu: 64, changeShare: 0.1, seed: 11, busyCpu: true }, 120);
    expect(r.mb, say(r)).toBeLessThanOrEqual(30);
  });

  it('8 GPUs × 512 processes grows with the rows that change, not with the rows there are', () => {
    const r = perHour({ gpus: 8, procsPerGpu: 512, changeShare: 0.1, seed: 13 }, 60);
    expect(r.mb, say(r)).toBeLessThanOrEqual(55);
  }, HEAVY_MS);
});

describe('a recorder killed mid-write', () => {
  const cases: [string, SessionShape, number][] = [
    ['every kind of change', { gpus: 2, procsPerGpu: 6, changeShare: 0.3, seed: 5, edit: edits }, 120],
    // Rounds every 3 samples date every row alike: shared values (format 4) in many of the lines cut.
    ["record's reads (shared values)", { gpus: 2, procsPerGpu: 8, changeShare: 0.2, seed: 5, reads: { smEverySamples: 4, hostEverySamples: 3 } }, 60],
  ];
  it.each(cases)('a recording cut at any byte reads every sample whose line is whole: %s', (name, shape, count) => {
    const { path, written } = write(`cut-source-${count}.ndjson`, syntheticSession(shape, count), { keyframes: { everySamples: 25, everyMs: 600_000 } });
    const text = readFileSync(path, 'utf8');
    if (shape.reads) expect(text).toContain('"host.cpuTicksAtMs":{"value":');
    const random = seeded(9);
    const headerEnd = text.indexOf('\n') + 1;
    for (let t = 0; t < 40; t++) {
      const cutAt = headerEnd + 1 + Math.floor(random() * (text.length - headerEnd - 1));
      const kept = text.slice(0, cutAt);
      const wholeSamples = kept.slice(headerEnd).split('\n').slice(0, -1).filter((l) => !l.startsWith('{"hostFacts":')).length;
      const cut = join(dir, 'cut.ndjson');
      writeFileSync(cut, kept);
      const read = readRecording(cut).samples;
      expect(read.map(withoutSource), `${name}: cut at byte ${cutAt}`).toEqual(written.slice(0, wholeSamples).map(withoutSource));
    }
  });
});

describe('deltas that do not fit are refused with the line and the field', () => {
  const base = (): string[] => readFileSync(write('base.ndjson', syntheticSession({ gpus: 2, procsPerGpu: 3, changeShare: 1, seed: 2 }, 3)).path, 'utf8').trimEnd().split('\n');
  const tryLines = (lines: string[]): (() => unknown) => {
    const path = join(dir, 'bad-delta.ndjson');
    writeFileSync(path, `${lines.join('\n')}\n`);
    return () => readRecording(path);
  };
  // Lines: header, host facts, keyframe, delta, delta.
  const editDelta = (lines: string[], at: number, edit: (body: Record<string, any>) => void): string[] => {
    const value = JSON.parse(lines[at]!);
    edit(value.delta);
    return lines.map((l, i) => (i === at ? JSON.stringify(value) : l));
  };

  it('a delta before any full sample', () => {
    const lines = base();
    expect(tryLines([lines[0]!, lines[1]!, lines[3]!])).toThrow(/bad-delta\.ndjson:3: a delta line before the first full sample/);
  });

  it('a position past the rows, an unknown change, a value of the wrong type', () => {
    const lines = base();
    // Every row moved: one key for the paths that changed together, one array entry per row.
    expect(JSON.parse(lines[3]!).delta.processes.changed['usedBytes,smUtilPct,host.cpuTicks']).toHaveLength(6);
    expect(tryLines(editDelta(lines, 3, (d) => { d.processes.changed = { usedBytes: { 6: 1 } }; }))).toThrow(/:4: delta\.processes\.changed\.usedBytes names position "6", but there are 6/);
    expect(tryLines(editDelta(lines, 3, (d) => { d.processes.shuffled = [1]; }))).toThrow(/:4: delta\.processes\.shuffled is not a change this gpumem knows/);
    expect(tryLines(editDelta(lines, 3, (d) => { d.processes.changed = { usedBytes: { 0: 'lots' } }; }))).toThrow(/:4: sample field processes\[0\]\.usedBytes must be a whole byte count ≥ 0 or null/);
    expect(tryLines(editDelta(lines, 3, (d) => { d.processes.changed = { 'usedBytes,smUtilPct': { 0: [1] } }; }))).toThrow(/:4: delta\.processes\.changed\.usedBytes,smUtilPct\.0 must be an array of 2 values, one per path/);
    expect(tryLines(editDelta(lines, 3, (d) => { d.processes.changed = { usedBytes: [1, 2] }; }))).toThrow(/:4: delta\.processes\.changed\.usedBytes holds 2 values for 6 items/);
    expect(tryLines(editDelta(lines, 4, (d) => { d.devices.changed = { 'memory.usedBytes': { 1: -5 } }; }))).toThrow(/:5: sample field devices\[1\]\.memory\.usedBytes must be a whole byte count/);
    expect(tryLines(editDelta(lines, 3, (d) => { d.processes.removed = [2, 1]; }))).toThrow(/:4: delta\.processes\.removed\[1\] must be a position in the sample before/);
    expect(tryLines(editDelta(lines, 3, (d) => { d.devices.changed = { 'temperatureC.x': { 0: 1 } }; }))).toThrow(/:4: delta\.devices\.changed\.temperatureC\.x names a field of devices\[0\]\.temperatureC, which is not an object/);
    expect(tryLines(editDelta(lines, 3, (d) => { d.timeMs = 'soon'; }))).toThrow(/:4: delta has no numeric timeMs/);
    const proto = (text: string): string[] => lines.map((l, i) => (i === 3 ? text : l));
    expect(tryLines(proto('{"delta":{"timeMs":1700000001000,"processes":{"changed":{"__proto__":{"0":{"pid":1}}}}}}'))).toThrow(/:4: .*__proto__ is not a field/);
    expect(tryLines(proto('{"delta":{"timeMs":1700000001000,"__proto__":{"x":1}}}'))).toThrow(/:4: delta\.__proto__ is not a sample field/);
  });

  it('a bad last line that is whole is refused too: only a cut-off line is forgiven', () => {
    const lines = base();
    expect(tryLines(editDelta(lines, 4, (d) => { d.processes.changed = { usedBytes: { 9: 1 } }; }))).toThrow(/:5: delta\.processes/);
  });
});
