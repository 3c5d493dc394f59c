/**
 * Bytes `gpumem record` writes. First at 8 GPUs × 64 processes from the fake driver (real sleeping pids, host
 * facts from /proc), in the current format against versions 1 (every sample whole, whole host facts) and 2
 * (every sample whole, host facts by reference) measured on the same samples in the same run. The fleet's
 * numbers do not move, so the current format's deltas say almost nothing there; the second part measures the
 * models of change of test/sources/replay/synthetic-session.ts (record's read schedule; every GPU's numbers and
 * 10 % of the rows moving each second) at 8 × 64 and 8 × 512, per hour at 1 Hz. Bytes, not timings: the same every run.
 */
import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Sample } from '../src/core/types.js';
import { openNvmlSource } from '../src/sources/nvml/index.js';
import { createHostEnricher } from '../src/sources/procfs/index.js';
import { DEFAULT_KEYFRAMES, HOST_FACTS_KEY, RECORDING_VERSION, createHostFactsEncoder } from '../src/sources/replay/index.js';
import { createRecordingWriter } from '../src/store/recording/index.js';
import { fakeNvmlLib } from '../test/fake-nvml/scenario.js';
import { syntheticSession, type SessionShape } from '../test/sources/replay/synthetic-session.js';
import { startFleet } from './fleet.js';

const GPUS = 8;
const PROCS_PER_GPU = 64;
const SAMPLES = 60;

const kb = (b: number): string => `${(b / 1000).toFixed(1)} KB`;
const mbPerHour = (bytesPerSample: number): string => `${((bytesPerSample * 3600) / 1e6).toFixed(1)} MB per hour at 1 Hz`;

/**
 * An hour at 1 Hz from a shorter recording's lines, as docs/recording.md counts it: the host facts once, a
 * keyframe every DEFAULT_KEYFRAMES.everySamples samples (six an hour), the mean delta for the rest.
 */
function hourOf(path: string): string {
  const all = readFileSync(path, 'utf8').split('\n').slice(1, -1);
  const bytes = (prefix: string): number[] => all.filter((l) => l.startsWith(prefix)).map((l) => Buffer.byteLength(l) + 1);
  const sum = (list: number[]): number => list.reduce((a, b) => a + b, 0);
  const deltas = bytes('{"delta":');
  const keyframes = bytes('{"timeMs":');
  const perHour = 3600 / DEFAULT_KEYFRAMES.everySamples;
  const mb = (sum(bytes(`{"${HOST_FACTS_KEY}":`)) + perHour * (sum(keyframes) / keyframes.length) + (3600 - perHour) * (sum(deltas) / Math.max(1, deltas.length))) / 1e6;
  return `keyframe ${kb(sum(keyframes) / keyframes.length)}, delta ${kb(sum(deltas) / Math.max(1, deltas.length))}: ${mb.toFixed(1)} MB per hour at 1 Hz (a keyframe every 10 min)`;
}

/** Writes `samples` in the current format and, on the side, counts the bytes versions 1 and 2 would have written. */
function writeAll(path: string, samples: Iterable<Sample>): { count: number; nowBytes: number; v1Bytes: number; v2Bytes: number } {
  const writer = createRecordingWriter(path, { intervalMs: 1000 });
  const headerBytes = statSync(path).size;
  const v2 = createHostFactsEncoder(2);
  let v1Bytes = 0;
  let v2Bytes = 0;
  let count = 0;
  for (const sample of samples) {
    writer.write(sample);
    v1Bytes += Buffer.byteLength(`${JSON.stringify(sample)}\n`);
    const { definitions, sample: line } = v2(sample);
    v2Bytes += Buffer.byteLength(`${definitions ? `${JSON.stringify({ [HOST_FACTS_KEY]: definitions })}\n` : ''}${JSON.stringify(line)}\n`);
    count++;
  }
  writer.close();
  return { count, nowBytes: statSync(path).size - headerBytes, v1Bytes, v2Bytes };
}

export async function run(): Promise<void> {
  const fleet = await startFleet('record', GPUS, PROCS_PER_GPU, (i) => i % 100);
  const lines: string[] = [];
  try {
    process.env.GPUMEM_FAKE_NVML_SCENARIO = fleet.scenario;
    const nvml = openNvmlSource({ libPath: fakeNvmlLib('590') });
    const enrich = createHostEnricher();
    const samples: Sample[] = [];
    for (let i = 0; i < SAMPLES; i++) samples.push(enrich(await nvml.readSample()));
    nvml.close();
    enrich.close();
    const r = writeAll(join(fleet.dir, 'rec.ndjson'), samples);
    lines.push(
      `fake driver: ${GPUS} GPUs × ${PROCS_PER_GPU} processes (real pids, numbers static), ${r.count} samples`,
      `format 1 (whole samples, whole host facts)      ${kb(r.v1Bytes / r.count)} per sample`,
      `format 2 (whole samples, host facts by ref)     ${kb(r.v2Bytes / r.count)} per sample`,
      `format ${RECORDING_VERSION} (keyframe + deltas)                  ${kb(r.nowBytes / r.count)} per sample (first sample with its definitions included in the mean)`,
    );
  } finally {
    fleet.stop();
  }
  // What record reads when (docs/nvml.md): memory each second, SM % of eight H100s every 40 s, a /proc round
  // every 30 s; 241 samples hold the shares of an hour (six SM reads and eight rounds in 240 deltas).
  const reads = { smEverySamples: 40, hostEverySamples: 30 };
  const models: [string, SessionShape, number][] = [
    ["8 × 64, record's reads", { gpus: 8, procsPerGpu: 64, changeShare: 0.1, seed: 17, reads }, 241],
    ["8 × 64, record's reads, no memory moving", { gpus: 8, procsPerGpu: 64, changeShare: 0, seed: 17, reads }, 241],
    ["8 × 512, record's reads", { gpus: 8, procsPerGpu: 512, changeShare: 0.1, seed: 19, reads }, 121],
    ['8 × 64, 10 % of rows change', { gpus: 8, procsPerGpu: 64, changeShare: 0.1, seed: 11 }, 600],
    ['8 × 64, every process busy on the CPU', { gpus: 8, procsPerGpu: 64, changeShare: 0.1, seed: 11, busyCpu: true }, 600],
    ['8 × 512, 10 % of rows change', { gpus: 8, procsPerGpu: 512, changeShare: 0.1, seed: 13 }, 120],
  ];
  const dir = mkdtempSync(join(tmpdir(), 'gpumem-bench-record-'));
  try {
    for (const [name, shape, count] of models) {
      const path = join(dir, 'model.ndjson');
      const r = writeAll(path, syntheticSession(shape, count));
      lines.push(`model ${name}, ${count} samples: format ${RECORDING_VERSION} ${kb(r.nowBytes / count)} per sample, ${hourOf(path)}; format 2 ${kb(r.v2Bytes / count)} (${mbPerHour(r.v2Bytes / count)}); ratio ${(r.nowBytes / r.v2Bytes).toFixed(4)}×`);
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  process.stdout.write(`${lines.join('\n')}\n`);
}
