import { mkdtempSync, readFileSync, writeFileSync, appendFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { GpumemError, type Sample } from '../../../src/core/index.js';
import fc from 'fast-check';
import { renderStatus } from '../../../src/cli/render/status.js';
import { diagnose } from '../../../src/core/diagnose/index.js';
import { openReplaySource, readRecording, RECORDING_VERSION } from '../../../src/sources/replay/index.js';
import { parseRecordedSample } from '../../../src/sources/replay/format.js';
import { parseSmiXml } from '../../../src/sources/smi/index.js';
import { createRecordingWriter } from '../../../src/store/recording/index.js';
import { runSourceContract } from '../contract.js';
import { MiB } from '../smi/expected.js';
import { runs } from '../../helpers/fuzz.js';

const dir = mkdtempSync(join(tmpdir(), 'gpumem-replay-'));
const fixture = (name: string): string => readFileSync(fileURLToPath(new URL(`../../fixtures/nvidia-smi/${name}`, import.meta.url)), 'utf8');

function sampleFrom(file: string, timeMs: number): Sample {
  const r = parseSmiXml(fixture(file));
  return { timeMs, source: { kind: 'smi', detail: 'nvidia-smi -q -x' }, devices: r.devices, processes: r.processes, unavailable: r.unavailable };
}

const FILES = ['rtx-a5000-x2-procs-driver-590.44.01.xml', 'v100s-pcie-32gb-x8-procs-driver-460.73.01.xml', 'grid-p4-1q-vgpu-wddm-procs-driver-513.46.xml'];

function record(name: string, samples: Sample[], note = 'test recording'): string {
  const path = join(dir, name);
  const w = createRecordingWriter(path, { note, intervalMs: 1000, createdMs: 1_700_000_000_000 });
  for (const s of samples) w.write(s);
  w.close();
  w.close();
  return path;
}

const recorded = FILES.map((f, i) => sampleFrom(f, 1_700_000_000_000 + i * 1000));
const good = record('good.ndjson', recorded);

describe('recordings', () => {
  it('round-trip every sample exactly, in order, marked as replay', () => {
    const { header, samples } = readRecording(good);
    expect([header.format, header.version, header.note, header.intervalMs]).toEqual(['gpumem-recording', RECORDING_VERSION, 'test recording', 1000]);
    expect(samples.map((s) => ({ ...s, source: recorded[0]!.source }))).toEqual(recorded);
    expect(samples.every((s) => s.source.kind === 'replay' && s.source.detail.startsWith(good) && s.source.note?.includes('test recording'))).toBe(true);
    expect(samples[1]!.devices[7]!.memory.usedBytes).toBe(29501 * MiB);
  });

  it('the replay source returns samples in order, then says the recording ended', async () => {
    const source = openReplaySource(good);
    expect(source.sampleCount).toBe(3);
    const times = [];
    for (let i = 0; i < 3; i++) times.push((await source.readSample()).timeMs);
    expect(times).toEqual([1_700_000_000_000, 1_700_000_001_000, 1_700_000_002_000]);
    expect(source.remaining()).toBe(0);
    await expect(source.readSample()).rejects.toThrow(/end of recording after 3 samples/);
  });

  it('names the line of a bad sample', () => {
    const path = join(dir, 'bad-line.ndjson');
    const lines = readFileSync(good, 'utf8').split('\n');
    lines[2] = '{"timeMs": 5, "devices": [{"index": 0}], "processes": []}';
    writeFileSync(path, lines.join('\n'));
    expect(() => readRecording(path)).toThrow(/bad-line\.ndjson:3: device 0 lacks index or memory/);
    lines[2] = '{not json';
    writeFileSync(path, lines.join('\n'));
    expect(() => readRecording(path)).toThrow(/:3: not valid JSON/);
  });

  it('keeps every whole sample when the recorder died mid-line', () => {
    const path = join(dir, 'cut.ndjson');
    const text = readFileSync(good, 'utf8');
    writeFileSync(path, text.slice(0, text.length - 50));
    expect(readRecording(path).samples).toHaveLength(2);
  });

  it('refuses files that are not recordings, newer versions, missing files', () => {
    const other = join(dir, 'other.ndjson');
    writeFileSync(other, '{"format":"something-else","version":1}\n');
    expect(() => readRecording(other)).toThrow(/not a gpumem recording/);
    writeFileSync(other, `{"format":"gpumem-recording","version":${RECORDING_VERSION + 1},"createdMs":1}\n`);
    expect(() => readRecording(other)).toThrow(/newer than this gpumem reads/);
    writeFileSync(other, '');
    expect(() => readRecording(other)).toThrow(/empty file/);
    try {
      readRecording(join(dir, 'absent.ndjson'));
      expect.unreachable();
    } catch (error) {
      expect((error as GpumemError).code).toBe('INPUT_NOT_FOUND');
    }
    const empty = join(dir, 'header-only.ndjson');
    writeFileSync(empty, readFileSync(good, 'utf8').split('\n')[0] + '\n');
    expect(() => openReplaySource(empty)).toThrow(/holds no samples/);
  });

  it('a folder given as the recording: one error with a hint', () => {
    try {
      readRecording(dir);
      expect.unreachable();
    } catch (error) {
      expect((error as GpumemError).code).toBe('INPUT_UNREADABLE');
      expect((error as GpumemError).message).toMatch(/is a folder, not a recording/);
      expect((error as GpumemError).hint).toMatch(/--replay/);
    }
  });

  it('a writer cannot create a file in a missing folder: one clear error', () => {
    expect(() => createRecordingWriter(join(dir, 'no', 'such', 'x.ndjson'))).toThrow(/cannot create recording \(ENOENT\)/);
  });
});

// A long recording for the contract's repeated reads.
const long = record('long.ndjson', [...recorded, ...recorded.map((s) => ({ ...s, timeMs: s.timeMs + 10_000 }))]);
appendFileSync(long, '\n');
runSourceContract('replay', () => openReplaySource(long), { memoryToleranceBytes: 2 * MiB, reads: 6 });

describe('recorded samples are checked field by field', () => {
  const line = readFileSync(good, 'utf8').split('\n')[1]!;
  const withField = (edit: (s: Record<string, any>) => void): string => {
    const s = JSON.parse(line);
    edit(s);
    return JSON.stringify(s);
  };

  it('names the field a renderer would have crashed on', () => {
    const cases: [(s: Record<string, any>) => void, RegExp][] = [
      [(s) => (s.timeMs = 1e20), /:7: sample field timeMs must be a time/],
      [(s) => delete s.devices[0].utilization, /devices\[0\]\.utilization must be an object/],
      [(s) => (s.devices[0].memory.totalBytes = -5), /devices\[0\]\.memory\.totalBytes must be a whole byte count ≥ 0 or null/],
      [(s) => (s.processes[0].usedBytes = 0.5), /processes\[0\]\.usedBytes must be a whole byte count/],
      [(s) => (s.processes[0].host = { visible: true, cmdline: 'python train.py' }), /processes\[0\]\.host\.cmdline must be an array of strings or null/],
      [(s) => (s.processes[0].kind = 'cuda'), /processes\[0\]\.kind must be one of compute, graphics, compute\+graphics/],
      [(s) => (s.devices[0].status = 7), /devices\[0\]\.status must be one of ok/],
    ];
    for (const [edit, message] of cases) expect(() => parseRecordedSample(withField(edit), 'x.ndjson', 7)).toThrow(message);
  });

  it('absent nullable fields read as null, not as a crash later', () => {
    const s = parseRecordedSample(withField((v) => delete v.devices[0].temperatureC), 'x.ndjson', 2);
    expect(s.devices[0]!.temperatureC).toBeNull();
    expect(renderStatus(s, { columns: 120, color: false })).toContain('n/a');
  });

  it('a header whose createdMs cannot be a date is refused', () => {
    const path = join(dir, 'bad-created.ndjson');
    const lines = readFileSync(good, 'utf8').split('\n');
    writeFileSync(path, [withHeader(lines[0]!, { createdMs: 1e20 }), ...lines.slice(1)].join('\n'));
    expect(() => readRecording(path)).toThrow(/:1: header has no createdMs/);
    writeFileSync(path, [withHeader(lines[0]!, { note: 5 }), ...lines.slice(1)].join('\n'));
    expect(() => readRecording(path)).toThrow(/:1: header note must be a string or null/);
  });

  it('fuzz: any value put anywhere in a sample is accepted and renders, or is one GpumemError', () => {
    const paths: (string | number)[][] = [];
    const walk = (v: unknown, at: (string | number)[]): void => {
      paths.push(at);
      if (v !== null && typeof v === 'object') for (const [k, c] of Object.entries(v)) walk(c, [...at, Array.isArray(v) ? Number(k) : k]);
    };
    walk(JSON.parse(line), []);
    fc.assert(
      fc.property(fc.constantFrom(...paths.filter((p) => p.length > 0)), fc.jsonValue(), (at, value) => {
        const s = JSON.parse(line);
        let parent = s;
        for (const k of at.slice(0, -1)) parent = parent[k];
        parent[at[at.length - 1]!] = value;
        let sample: Sample;
        try {
          sample = parseRecordedSample(JSON.stringify(s), 'f.ndjson', 2);
        } catch (error) {
          expect(error).toBeInstanceOf(GpumemError);
          return;
        }
        renderStatus(asReplaySample(sample), { columns: 100, color: false });
        diagnose({ samples: [asReplaySample(sample)], viewer: null, pidNamespace: 'unknown', ancestors: {} });
      }),
      { numRuns: runs(400) },
    );
  });
});

function withHeader(text: string, fields: Record<string, unknown>): string {
  return JSON.stringify({ ...JSON.parse(text), ...fields });
}

/** What readRecording does to every sample: the source becomes the replay. */
function asReplaySample(sample: Sample): Sample {
  return { ...sample, source: { kind: 'replay', detail: 'f.ndjson' } };
}
