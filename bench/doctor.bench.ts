/**
 * How long `gpumem doctor` (the bare `gpumem`) leaves a person looking at an empty screen: the time from
 * start to its first byte on stdout, and to its exit, on the fake driver (8 GPUs × 64 sleeping processes)
 * with the default 3 s window. Peer in the same run: `gpumem status`, which prints one sample and exits.
 */
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { fakeNvmlEnv } from '../test/fake-nvml/scenario.js';
import { startFleet } from './fleet.js';
import { median } from './timing.js';

const BIN = fileURLToPath(new URL('../dist/cli/bin.js', import.meta.url));
const GPUS = 8;
const PROCS_PER_GPU = 64;
const RUNS = 3;

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
  const fleet = await startFleet('doctor', GPUS, PROCS_PER_GPU);
  try {
    const env = fakeNvmlEnv('590', fleet.scenario);
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
    fleet.stop();
  }
}
