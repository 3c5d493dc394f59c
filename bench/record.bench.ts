/**
 * Bytes per sample `gpumem record` writes at 8 GPUs × 64 processes (fake driver, real sleeping pids, host
 * facts from /proc), in the current format against version 1 (every sample carrying every pid's whole host
 * facts) measured on the same samples in the same run.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openNvmlSource } from '../src/sources/nvml/index.js';
import { createHostEnricher } from '../src/sources/procfs/index.js';
import { RECORDING_VERSION } from '../src/sources/replay/index.js';
import { createRecordingWriter } from '../src/store/recording/index.js';
import { buildFakeNvml, fakeH100, fakeNvmlLib, writeScenario } from '../test/fake-nvml/scenario.js';

const GPUS = 8;
const PROCS_PER_GPU = 64;
const SAMPLES = 60;
const MiB = 1024 * 1024;

export async function run(): Promise<void> {
  await buildFakeNvml();
  const dir = mkdtempSync(join(tmpdir(), 'gpumem-bench-record-'));
  const sleepers: ChildProcess[] = [];
  try {
    for (let i = 0; i < GPUS * PROCS_PER_GPU; i++) sleepers.push(spawn('sleep', ['120'], { stdio: 'ignore' }));
    const pids = sleepers.map((c) => c.pid as number);
    const scenario = join(dir, 'scenario.txt');
    writeScenario(scenario, {
      driverVersion: '590.48.01', cudaVersion: 13010,
      devices: Array.from({ length: GPUS }, (_, g) => fakeH100(g, {
        memory: { totalBytes: 81559 * MiB, reservedBytes: 479 * MiB, usedBytes: PROCS_PER_GPU * 100 * MiB },
        processes: pids.slice(g * PROCS_PER_GPU, (g + 1) * PROCS_PER_GPU).map((pid, i) => ({ pid, usedBytes: 100 * MiB, smUtilPct: i % 100 })),
      })),
    });
    process.env.GPUMEM_FAKE_NVML_SCENARIO = scenario;
    const nvml = openNvmlSource({ libPath: fakeNvmlLib('590') });
    const enrich = createHostEnricher();
    const path = join(dir, 'rec.ndjson');
    const writer = createRecordingWriter(path, { intervalMs: 1000 });
    const headerBytes = statSync(path).size;
    let v1Bytes = 0;
    for (let i = 0; i < SAMPLES; i++) {
      const sample = enrich(await nvml.readSample());
      writer.write(sample);
      v1Bytes += Buffer.byteLength(`${JSON.stringify(sample)}\n`);
    }
    writer.close();
    nvml.close();
    const nowBytes = statSync(path).size - headerBytes;
    const kb = (b: number): string => `${(b / 1000).toFixed(1)} KB`;
    process.stdout.write([
      `fake driver: ${GPUS} GPUs × ${PROCS_PER_GPU} processes (real pids), ${SAMPLES} samples`,
      `format 1 (whole host facts every sample)   ${kb(v1Bytes / SAMPLES)} per sample`,
      `format ${RECORDING_VERSION} (host facts once per process)   ${kb(nowBytes / SAMPLES)} per sample (first sample with its definitions included in the mean)`,
      `ratio format ${RECORDING_VERSION} / format 1: ${(nowBytes / v1Bytes).toFixed(3)}×  (${((nowBytes / SAMPLES) * 3600 / 1e9).toFixed(2)} GB per hour at 1 Hz, was ${((v1Bytes / SAMPLES) * 3600 / 1e9).toFixed(2)})`,
      '',
    ].join('\n'));
  } finally {
    for (const s of sleepers) s.kill('SIGKILL');
    rmSync(dir, { recursive: true, force: true });
  }
}
