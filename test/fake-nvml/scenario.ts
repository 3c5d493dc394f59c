/**
 * Drive the fake libnvidia-ml.so.1 from a test.
 *
 * Usage: `await buildFakeNvml()` (the test setup already did), `writeScenario(path, scenario)`, then point
 * gpumem at it: env GPUMEM_NVML_LIB = fakeNvmlLib(era) (or the libPath option) and
 * GPUMEM_FAKE_NVML_SCENARIO = path. `fakeNvmlEnv(era, path)` returns both for a child process.
 * The era is a property of the library (symbols really missing), not of the scenario file.
 *
 * The fake reads the file at nvmlInit and re-reads it whenever its inode, size or mtime changed, checked
 * on nvmlDeviceGetCount_v2, nvmlDeviceGetHandleByIndex_v2 and every memory-info call (each sample starts
 * with memory, so a rewrite is seen by the next sample). writeScenario replaces the file atomically.
 *
 * File format: one directive per line, `KEY VALUE…`; `#` starts a comment line. Top level:
 *   driver 535.54.03                   nvmlSystemGetDriverVersion
 *   cuda 12020                         nvmlSystemGetCudaDriverVersion_v2 (absent → LIBRARY_NOT_FOUND)
 *   error FUNCTION DEVICE|* CODE [N]   FUNCTION returns CODE for that device index (N times, default always);
 *                                      DEVICE * matches all, and is the one for device-less calls (nvmlInit_v2)
 *   device                             starts the next device (index = order); lines below describe it:
 *     uuid GPU-…   name NVIDIA H100 80GB HBM3   pci 00000000:17:00.0   minor 0
 *     memory TOTAL RESERVED USED       bytes; free = total − reserved − used (v1 `used` adds reserved)
 *     util GPU_PCT MEM_PCT   temp C   power DRAW_MW LIMIT_MW   computemode 0..3   migmode 0|1
 *     powerlimit LIMIT_MW (no draw)   powerinstant MW (field 186)   clocks SM_MHZ MEM_MHZ   energy MJ
 *     status ok|lost|noperm            lost: every call answers GPU_IS_LOST; noperm: the handle call NO_PERMISSION
 *     mig GI CI UUID PROFILE TOTAL RESERVED USED     a MIG device (migmode 1)
 *     process PID C|G|CG USED|na [gi=N] [ci=N] [sm=PCT] [late]
 *                                      `na` = NVML_VALUE_NOT_AVAILABLE; `late` rows appear only after the
 *                                      driver has once answered INSUFFICIENT_SIZE (a process list that
 *                                      grows between the count call and the fill call)
 *     utilsample PID TIMESTAMP_US SM_PCT  a per-process utilization sample the driver buffered; with any of
 *                                      these, nvmlDeviceGetProcessUtilization returns those newer than its
 *                                      lastSeenTimeStamp (NOT_FOUND when none) instead of one `sm=` sample per
 *                                      process stamped "now"
 * A device field left out makes its call answer NOT_SUPPORTED.
 *
 * Costs and counts (fake_costs.c): GPUMEM_FAKE_NVML_COSTS=h100 makes every call spend the CPU time the same
 * call took on a real H100 (off by default); every call is counted, and the counts are written as JSON to
 * GPUMEM_FAKE_NVML_CALLS_OUT when the session ends and at exit (test/fake-nvml/calls.ts reads them).
 */
import { renameSync, writeFileSync } from 'node:fs';
import { fakeNvmlLib, type FakeEra } from './build.js';
import { GiB } from '../../src/core/units.js';

export { buildFakeNvml, fakeNvmlLib, FAKE_ERAS, type FakeEra } from './build.js';

export interface FakeProcess {
  pid: number;
  /** Which lists the pid appears in; default compute. */
  kind?: 'compute' | 'graphics' | 'compute+graphics';
  /** Null = NVML_VALUE_NOT_AVAILABLE. */
  usedBytes: number | null;
  gpuInstanceId?: number;
  computeInstanceId?: number;
  smUtilPct?: number;
  /** Only visible after one INSUFFICIENT_SIZE answer (the list grew between calls). */
  late?: boolean;
}

export interface FakeMigDevice {
  gpuInstanceId: number;
  computeInstanceId: number;
  uuid: string;
  /** e.g. "1g.10gb"; the fake names the MIG device "<parent name> MIG <profile>". */
  profile: string;
  totalBytes: number;
  reservedBytes: number;
  usedBytes: number;
}

export interface FakeDevice {
  uuid?: string;
  name?: string;
  pciBusId?: string;
  minorNumber?: number;
  memory?: { totalBytes: number; reservedBytes: number; usedBytes: number };
  utilization?: { gpuPct: number; memoryPct: number };
  temperatureC?: number;
  /** drawMw null: nvmlDeviceGetPowerUsage answers NOT_SUPPORTED (pre-Ampere GPUs on new drivers). */
  power?: { drawMw: number | null; limitMw: number };
  /** NVML_FI_DEV_POWER_INSTANT through nvmlDeviceGetFieldValues. */
  powerInstantMw?: number;
  /** nvmlDeviceGetClockInfo for NVML_CLOCK_SM and NVML_CLOCK_MEM. */
  clocks?: { smMhz: number; memoryMhz: number };
  /** nvmlDeviceGetTotalEnergyConsumption. */
  energyMj?: number;
  /** nvmlComputeMode_t: 0 Default, 1 Exclusive_Thread, 2 Prohibited, 3 Exclusive_Process. */
  computeMode?: number;
  migMode?: 0 | 1;
  status?: 'ok' | 'lost' | 'noperm';
  mig?: FakeMigDevice[];
  processes?: FakeProcess[];
  /** Buffered per-process utilization samples with their timestamps (µs since the epoch); see `utilsample`. */
  utilSamples?: Array<{ pid: number; timeUs: number; smUtilPct: number }>;
}

export interface FakeError {
  /** Exported NVML function name, e.g. "nvmlDeviceGetMemoryInfo_v2". */
  fn: string;
  device: number | '*';
  /** nvmlReturn_t value, e.g. 4 NO_PERMISSION, 15 GPU_IS_LOST. */
  code: number;
  /** How many calls fail; default every call. */
  times?: number;
}

export interface FakeScenario {
  driverVersion?: string;
  /** As nvmlSystemGetCudaDriverVersion_v2 returns it: 12080 = CUDA 12.8. */
  cudaVersion?: number;
  devices: FakeDevice[];
  errors?: FakeError[];
}

const KIND = { compute: 'C', graphics: 'G', 'compute+graphics': 'CG' } as const;

/** Renders a scenario in the fake's line format (see the top of this file). */
export function renderScenario(s: FakeScenario): string {
  const lines: string[] = [];
  if (s.driverVersion !== undefined) lines.push(`driver ${s.driverVersion}`);
  if (s.cudaVersion !== undefined) lines.push(`cuda ${s.cudaVersion}`);
  for (const e of s.errors ?? []) lines.push(`error ${e.fn} ${e.device} ${e.code}${e.times === undefined ? '' : ` ${e.times}`}`);
  for (const d of s.devices) {
    lines.push('device');
    if (d.uuid !== undefined) lines.push(`uuid ${d.uuid}`);
    if (d.name !== undefined) lines.push(`name ${d.name}`);
    if (d.pciBusId !== undefined) lines.push(`pci ${d.pciBusId}`);
    if (d.minorNumber !== undefined) lines.push(`minor ${d.minorNumber}`);
    if (d.memory) lines.push(`memory ${d.memory.totalBytes} ${d.memory.reservedBytes} ${d.memory.usedBytes}`);
    if (d.utilization) lines.push(`util ${d.utilization.gpuPct} ${d.utilization.memoryPct}`);
    if (d.temperatureC !== undefined) lines.push(`temp ${d.temperatureC}`);
    if (d.power) lines.push(d.power.drawMw === null ? `powerlimit ${d.power.limitMw}` : `power ${d.power.drawMw} ${d.power.limitMw}`);
    if (d.powerInstantMw !== undefined) lines.push(`powerinstant ${d.powerInstantMw}`);
    if (d.clocks) lines.push(`clocks ${d.clocks.smMhz} ${d.clocks.memoryMhz}`);
    if (d.energyMj !== undefined) lines.push(`energy ${d.energyMj}`);
    if (d.computeMode !== undefined) lines.push(`computemode ${d.computeMode}`);
    if (d.migMode !== undefined) lines.push(`migmode ${d.migMode}`);
    if (d.status !== undefined) lines.push(`status ${d.status}`);
    for (const m of d.mig ?? []) {
      lines.push(`mig ${m.gpuInstanceId} ${m.computeInstanceId} ${m.uuid} ${m.profile} ${m.totalBytes} ${m.reservedBytes} ${m.usedBytes}`);
    }
    for (const u of d.utilSamples ?? []) lines.push(`utilsample ${u.pid} ${u.timeUs} ${u.smUtilPct}`);
    for (const p of d.processes ?? []) {
      const extra = [
        p.gpuInstanceId === undefined ? '' : ` gi=${p.gpuInstanceId}`,
        p.computeInstanceId === undefined ? '' : ` ci=${p.computeInstanceId}`,
        p.smUtilPct === undefined ? '' : ` sm=${p.smUtilPct}`,
        p.late ? ' late' : '',
      ].join('');
      lines.push(`process ${p.pid} ${KIND[p.kind ?? 'compute']} ${p.usedBytes ?? 'na'}${extra}`);
    }
  }
  return `${lines.join('\n')}\n`;
}

let writes = 0;

/** Writes the scenario atomically (temp file + rename), so the fake sees either the old or the new one. */
export function writeScenario(path: string, scenario: FakeScenario): void {
  const tmp = `${path}.${process.pid}.${writes++}.tmp`;
  writeFileSync(tmp, renderScenario(scenario));
  renameSync(tmp, path);
}

/** The environment a child process needs to use the fake driver of `era` with the scenario at `path`. */
export function fakeNvmlEnv(era: FakeEra, scenarioPath: string): Record<string, string> {
  return { GPUMEM_NVML_LIB: fakeNvmlLib(era), GPUMEM_FAKE_NVML_SCENARIO: scenarioPath };
}

/**
 * A plausible H100 for scenarios: 81559 MiB total (as nvidia-smi shows an H100 80GB), 479 MiB reserved, idle.
 * Override any field; `index` fills uuid, pci bus and minor number so devices stay distinct.
 */
export function fakeH100(index: number, over: Partial<FakeDevice> = {}): FakeDevice {
  const hex = index.toString(16).padStart(2, '0').toUpperCase();
  return {
    uuid: `GPU-00000000-0000-4000-8000-0000000000${hex}`,
    name: 'NVIDIA H100 80GB HBM3',
    pciBusId: `00000000:${hex}:00.0`,
    minorNumber: index,
    memory: { totalBytes: 81559 * 1024 * 1024, reservedBytes: 479 * 1024 * 1024, usedBytes: 0 },
    utilization: { gpuPct: 0, memoryPct: 0 },
    temperatureC: 31,
    power: { drawMw: 69000, limitMw: 700000 },
    clocks: { smMhz: 1980, memoryMhz: 2619 },
    energyMj: 1_234_567_890,
    computeMode: 0,
    migMode: 0,
    processes: [],
    ...over,
  };
}

export { GiB };
