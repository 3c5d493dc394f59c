/**
 * Bytes per sample `gpumem record` writes at 8 GPUs × 64 processes (fake driver, real sleeping pids, host
 * facts from /proc), in the current format against version 1 (every sample carrying every pid's whole host
 * facts) measured on the same samples in the same run.
 */
import { statSync } from 'node:fs';
import { join } from 'node:path';
import { openNvmlSource } from '../src/sources/nvml/index.js';
import { createHostEnricher } from '../src/sources/procfs/index.js';
import { RECORDING_VERSION } from '../src/sources/replay/index.js';
import { createRecordingWriter } from '../src/store/recording/index.js';
import { fakeNvmlLib } from '../test/fake-nvml/scenario.js';
import { startFleet } from './fleet.js';

const GPUS = 8;
const PROCS_PER_GPU = 64;
const SAMPLES = 60;

export async function run(): Promise<void> {
  const fleet = await startFleet('record', GPUS, PROCS_PER_GPU, (i) => i % 100);
  const dir = fleet.dir;
  try {
    process.env.GPUMEM_FAKE_NVML_SCENARIO = fleet.scenario;
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
    fleet.stop();
  }
}
