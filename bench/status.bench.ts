/**
 * One full `gpumem status` sample — all devices, their processes, /proc host facts — through the NVML
 * source and through spawning `nvidia-smi -q -x`, side by side. Both run against stand-ins: the fake
 * libnvidia-ml.so.1 (8 GPUs × 64 processes, real pids of sleeping children), charging each call the CPU time
 * it took on a real H100 (GPUMEM_FAKE_NVML_COSTS=h100), and a fake nvidia-smi that prints a recorded 8-GPU
 * XML (spawn + parse, without the real tool's driver time). It also prints the NVML calls each command makes
 * per sample.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { openNvmlSource } from '../src/sources/nvml/index.js';
import { createHostEnricher } from '../src/sources/procfs/index.js';
import { openSmiSource } from '../src/sources/smi/index.js';
import { fakeCallCounter } from '../test/fake-nvml/calls.js';
import { buildFakeNvml, fakeH100, fakeNvmlLib, writeScenario, type FakeDevice } from '../test/fake-nvml/scenario.js';
import { MiB } from '../src/core/units.js';
import { median, timeEach } from './timing.js';
import { describeCallsPerSample, requireRealCosts } from './fake-costs.js';
import { startSleepers, type Sleepers } from './sleepers.js';

const GPUS = 8;
const PROCS_PER_GPU = 64;
const NVML_SAMPLES = 500;
const SMI_SAMPLES = 40;



const fmt = (ms: number): string => (ms < 1 ? `${(ms * 1000).toFixed(0)} µs` : `${ms.toFixed(2)} ms`);

export async function run(): Promise<void> {
  requireRealCosts();
  await buildFakeNvml();
  const dir = mkdtempSync(join(tmpdir(), 'gpumem-bench-status-'));
  let sleepers: Sleepers | null = null;
  try {
    sleepers = await startSleepers(GPUS * PROCS_PER_GPU);
    const pids = sleepers.pids;
    const devices: FakeDevice[] = Array.from({ length: GPUS }, (_, g) =>
      fakeH100(g, {
        memory: { totalBytes: 81559 * MiB, reservedBytes: 479 * MiB, usedBytes: PROCS_PER_GPU * 100 * MiB },
        processes: pids.slice(g * PROCS_PER_GPU, (g + 1) * PROCS_PER_GPU).map((pid, i) => ({ pid, usedBytes: 100 * MiB, smUtilPct: i % 100 })),
      }),
    );
    const scenario = join(dir, 'scenario.txt');
    writeScenario(scenario, { driverVersion: '590.48.01', cudaVersion: 13010, devices });
    process.env.GPUMEM_FAKE_NVML_SCENARIO = scenario;

    process.stdout.write(`${describeCallsPerSample(GPUS)}\n`);
    const nvml = openNvmlSource({ libPath: fakeNvmlLib('590') });
    const enrich = createHostEnricher();
    const check = await nvml.readSample();
    if (check.processes.length !== GPUS * PROCS_PER_GPU) throw new Error(`expected ${GPUS * PROCS_PER_GPU} processes, got ${check.processes.length}`);
    const nvmlOnly = await timeEach(NVML_SAMPLES, () => nvml.readSample());
    // What the table charges the driver for one such sample (each makes the same calls): the rest is gpumem's.
    const counter = fakeCallCounter(fakeNvmlLib('590'));
    counter.reset();
    await nvml.readSample();
    const charged = Object.values(counter.read().calls).reduce((sum, c) => sum + c.count * c.costNs, 0) / 1e6;
    const nvmlFull = await timeEach(NVML_SAMPLES, async () => enrich(await nvml.readSample()));
    // The /proc part alone: one sample read once, enriched again and again as a watch loop would. CPU time
    // (user + system of this process) is steadier than wall time on a machine shared with other work.
    const procOnly = await timeEach(NVML_SAMPLES, async () => enrich(check));
    const cpuBefore = process.cpuUsage();
    for (let i = 0; i < NVML_SAMPLES; i++) enrich(check);
    const cpu = process.cpuUsage(cpuBefore);
    const procCpuMs = (cpu.user + cpu.system) / NVML_SAMPLES / 1000;
    nvml.close();

    const smiPath = fileURLToPath(new URL('../test/fake-smi/nvidia-smi', import.meta.url));
    const smi = await openSmiSource({ smiPath, env: { ...process.env, GPUMEM_FAKE_SMI_XML: 'v100s-pcie-32gb-x8-procs-driver-460.73.01.xml' } });
    const smiOnly = await timeEach(SMI_SAMPLES, () => smi.readSample());
    const smiFull = await timeEach(SMI_SAMPLES, async () => enrich(await smi.readSample()));
    smi.close();

    const [a, b, c, d] = [median(nvmlOnly), median(nvmlFull), median(smiOnly), median(smiFull)];
    process.stdout.write(
      [
        `fake driver: ${GPUS} GPUs × ${PROCS_PER_GPU} processes (real pids), each call charged its H100 CPU time`,
        `NVML: devices + ${GPUS * PROCS_PER_GPU} process rows      median ${fmt(a)}  (${NVML_SAMPLES} samples, every field as status --json reads them); of it the driver by the table ${fmt(charged)}, gpumem ${fmt(a - charged)} (target ≤ 1 ms: ${a - charged <= 1 ? 'met' : 'MISSED'})`,
        `NVML + /proc host facts for ${GPUS * PROCS_PER_GPU} pids  median ${fmt(b)}  (the /proc reads add ${fmt(b - a)})`,
        `/proc host facts alone, ${GPUS * PROCS_PER_GPU} pids      median ${fmt(median(procOnly))}, CPU ${fmt(procCpuMs)} per sample (${(procCpuMs / 10).toFixed(2)} % of a core at 1 Hz)`,
        `nvidia-smi -q -x: spawn + parse    median ${fmt(c)}  (${SMI_SAMPLES} samples; fake nvidia-smi printing an 8-GPU, 8-process XML)`,
        `nvidia-smi -q -x + /proc facts     median ${fmt(d)}`,
        `ratio smi / NVML, GPU read only    ${(c / a).toFixed(2)}×  (smi had 64× fewer rows; a real nvidia-smi adds its driver time)`,
        `ratio smi / NVML, with /proc       ${(d / b).toFixed(1)}×  (not like for like: ${GPUS * PROCS_PER_GPU} vs 8 pids enriched)`,
        '',
      ].join('\n'),
    );
  } finally {
    sleepers?.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}
