/** Host facts once per process (formats 2 and 3), exact round trips, and version 1 and 2 files still read. */
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import type { Sample } from '../../../src/core/index.js';
import { RECORDING_VERSION, readRecording } from '../../../src/sources/replay/index.js';
import { createRecordingWriter } from '../../../src/store/recording/index.js';
import { MiB } from '../../../src/core/units.js';
import { facts, hostSamples, row, sample } from './host-samples.js';

const dir = mkdtempSync(join(tmpdir(), 'gpumem-recording-v2-'));
const EXAMPLE = fileURLToPath(new URL('../../../examples/doctor-example.ndjson', import.meta.url));
const SYNTHETIC = fileURLToPath(new URL('../../fixtures/recordings/synthetic-two-h100.ndjson', import.meta.url));
/** Written by the version 2 writer from `hostSamples` (host facts by reference, every sample whole). */
const V2_FIXTURE = fileURLToPath(new URL('../../fixtures/recordings/v2-host-facts.ndjson', import.meta.url));

const samples = hostSamples;

function write(name: string, list: Sample[]): string {
  const path = join(dir, name);
  const w = createRecordingWriter(path, { createdMs: 1_700_000_000_000, intervalMs: 1000 });
  for (const s of list) w.write(s);
  w.close();
  return path;
}

const withoutSource = (s: Sample): Omit<Sample, 'source'> => {
  const { source: _source, ...rest } = s;
  return rest;
};

describe('host facts by reference (current format)', () => {
  it('reads back every sample exactly: state and parent changes, a reused pid, a zombie, an invisible pid', () => {
    const path = write('v2.ndjson', samples);
    const { header, samples: read } = readRecording(path);
    expect(header.version).toBe(RECORDING_VERSION);
    expect(RECORDING_VERSION).toBe(4);
    expect(read.map(withoutSource)).toEqual(samples.map(withoutSource));
  });

  it('writes a process\'s unchanged facts once: later samples carry only a reference', () => {
    const steady = Array.from({ length: 4 }, (_, k) => sample(k, [row(100, 0, facts(100, 500), 10 * MiB), row(100, 1, facts(100, 500), 11 * MiB)]));
    const lines = readFileSync(write('steady.ndjson', steady), 'utf8').trimEnd().split('\n');
    // header, one definitions line, a keyframe, three deltas that say nothing changed
    expect(lines).toHaveLength(6);
    expect(JSON.parse(lines[1]!)).toEqual({ hostFacts: { 1: facts(100, 500) } });
    // The reference carries the facts re-read every sample, so a delta can name the one that moved.
    expect(JSON.parse(lines[2]!).processes.map((p: { host: unknown }) => p.host)).toEqual([{ ref: 1, state: 'R', ppid: 1 }, { ref: 1, state: 'R', ppid: 1 }]);
    for (const [k, line] of lines.slice(3).entries()) {
      expect(line).not.toContain('train.py');
      expect(JSON.parse(line)).toEqual({ delta: { timeMs: steady[k + 1]!.timeMs } });
    }
  });

  it('a reference to facts never defined is refused with the line', () => {
    const path = write('dangling.ndjson', samples.slice(0, 2));
    const lines = readFileSync(path, 'utf8').split('\n');
    // Drop the definitions line: the sample that used it now names nothing.
    writeFileSync(path, [lines[0], ...lines.slice(2)].join('\n'));
    expect(() => readRecording(path)).toThrow(/dangling\.ndjson:2: sample field processes\[0\]\.host\.ref 1 names no host facts defined on an earlier line/);
  });

  it('a recorder killed in the middle of a write loses only that sample', () => {
    const path = write('cut.ndjson', samples);
    const text = readFileSync(path, 'utf8');
    writeFileSync(path, text.slice(0, text.length - 40));
    expect(readRecording(path).samples.map(withoutSource)).toEqual(samples.slice(0, 4).map(withoutSource));
  });
});

describe('recording formats 1 and 2 are still read', () => {
  it('a version 2 file (host facts by reference, every sample whole) reads as the samples it was written from', () => {
    const { header, samples: read } = readRecording(V2_FIXTURE);
    expect(header.version).toBe(2);
    expect(read.map(withoutSource)).toEqual(samples.map(withoutSource));
  });

  it('a version 2 file cut in its last line reads up to the line before', () => {
    const path = join(dir, 'v2-cut.ndjson');
    const text = readFileSync(V2_FIXTURE, 'utf8');
    writeFileSync(path, text.slice(0, text.length - 40));
    expect(readRecording(path).samples.map(withoutSource)).toEqual(samples.slice(0, 4).map(withoutSource));
  });

  it('a version 1 file (full host facts in every sample) reads as the same samples', () => {
    const path = join(dir, 'v1.ndjson');
    const header = { format: 'gpumem-recording', version: 1, createdMs: 1_700_000_000_000, writer: 'gpumem', host: { hostname: 'n', platform: 'linux', kernel: null, inContainer: false }, note: null, intervalMs: 1000 };
    writeFileSync(path, [header, ...samples].map((x) => JSON.stringify(x)).join('\n') + '\n');
    const { header: h, samples: read } = readRecording(path);
    expect(h.version).toBe(1);
    expect(read.map(withoutSource)).toEqual(samples.map(withoutSource));
  });

  it('the synthetic two-H100 recording is a version 1 recording and reads whole', () => {
    const { header, samples: read } = readRecording(SYNTHETIC);
    expect(header.version).toBe(1);
    expect(read.length).toBeGreaterThan(1);
    expect(read.every((s) => s.processes.every((p) => p.host === null || Array.isArray(p.host.cmdline) || p.host.cmdline === null))).toBe(true);
  });

  it('the bundled example is a real version 2 recording: every reference resolves to the host facts it was read with', () => {
    const { header, samples: read } = readRecording(EXAMPLE);
    expect(header.version).toBe(2);
    expect(read).toHaveLength(40);
    // Every process of every sample has its host facts back (none was left a dangling reference).
    expect(read.every((s) => s.processes.every((p) => p.host !== null && Array.isArray(p.host.cmdline)))).toBe(true);
    const latest = read.at(-1)!;
    const host = (pid: number) => latest.processes.find((p) => p.pid === pid)?.host;
    expect(host(2122)?.cmdline?.slice(0, 2)).toEqual(['python3', '/home/user/gpumem-work/bench/gpu/trainer_with_workers.py']);
    // The DataLoader workers: spawned children of the trainer (multiprocessing's spawn_main).
    for (const worker of [2305, 2306]) {
      expect(host(worker)?.ppid).toBe(2122);
      expect(host(worker)?.cmdline?.join(' ')).toMatch(/from multiprocessing\.spawn import spawn_main/);
    }
  });
});
