/**
 * How long `gpumem doctor` (the bare `gpumem`) leaves a person looking at an empty screen: the time from
 * start to its first byte on stdout, and to its exit, on the fake driver (8 GPUs × 64 sleeping processes)
 * with the default 3 s window. Peer in the same run: `gpumem status`, which prints one sample and exits.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { buildFakeNvml, fakeH100, fakeNvmlEnv, writeScenario } from '../test/fake-nvml/scenario.js';
import { median } from './timing.js';

const BIN = fileURLToPath(new URL('../dist/cli/bin.js', import.meta.url));
const GPUS = 8;
const PROCS_PER_GPU = 64;
const RUNS = 3;
const MiB = 1024 * 1024;

/** Ms to the first stdout byte and to exit of one gpumem invocation. */
function timeRun(args: string[], env: Record<string, string>): Promise<{ firstMs: number; exitMs: number }> {
  return new Promise((resolve, reject) => {
    const t0 = process.hrtime.bigint();
    const ms = (): number => Number(process.hrtime.bigint() - t0) / 1e6;
    const child = spawn(process.execPath, [BIN, ...args], { env: { PATH: '/nonexistent', ...env }, stdio: ['ignore', 'pipe', 'ignore'] });
    let firstMs: number | null = null;
    child.stdout.on('data', () => (firstMs ??= ms()));
    child.on('error', reject);
    child.on('close', () => resolve({ firstMs: firstMs ?? Number.NaN, exitMs: ms() }));
  });
}

export async function run(): Promise<void> {
  await buildFakeNvml();
  const dir = mkdtempSync(join(tmpdir(), 'gpumem-bench-doctor-'));
  const sleepers: ChildProcess[] = [];
  try {
    for (let i = 0; i < GPUS * PROCS_PER_GPU; i++) sleepers.push(spawn('sleep', ['120'], { stdio: 'ignore' }));
    const pids = sleepers.map((c) => c.pid as number);
    const scenario = join(dir, 'scenario.txt');
    writeScenario(scenario, {
      driverVersion: '590.48.01', cudaVersion: 13010,
      devices: Array.from({ length: GPUS }, (_, g) => fakeH100(g, {
        memory: { totalBytes: 81559 * MiB, reservedBytes: 479 * MiB, usedBytes: PROCS_PER_GPU * 100 * MiB },
        processes: pids.slice(g * PROCS_PER_GPU, (g + 1) * PROCS_PER_GPU).map((pid) => ({ pid, usedBytes: 100 * MiB })),
      })),
    });
    const env = fakeNvmlEnv('590', scenario);
    const doctor = [];
    const status = [];
    for (let i = 0; i < RUNS; i++) {
      doctor.push(await timeRun(['doctor'], env));
      status.push(await timeRun(['status'], env));
    }
    const f = (xs: number[]): string => `${median(xs).toFixed(0)} ms`;
    process.stdout.write([
      `fake driver: ${GPUS} GPUs × ${PROCS_PER_GPU} processes; median of ${RUNS} runs each`,
      `gpumem doctor: first output ${f(doctor.map((d) => d.firstMs))}, exit ${f(doctor.map((d) => d.exitMs))}  (3 s window)`,
      `gpumem status: first output ${f(status.map((d) => d.firstMs))}, exit ${f(status.map((d) => d.exitMs))}`,
      `ratio doctor first output / status exit: ${(median(doctor.map((d) => d.firstMs)) / median(status.map((d) => d.exitMs))).toFixed(2)}×`,
      '',
    ].join('\n'));
  } finally {
    for (const s of sleepers) s.kill('SIGKILL');
    rmSync(dir, { recursive: true, force: true });
  }
}
