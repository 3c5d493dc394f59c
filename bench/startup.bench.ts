/**
 * What a person feels when typing `gpumem`: wall time of whole processes, from spawn to exit, for
 * `gpumem --version` and `gpumem status --json` (1 GPU × 4 processes on the fake libnvidia-ml.so.1, real
 * pids), beside the floors and peers measured in the same run: `node -e 0`, `python3 -c pass` and, when
 * installed, `gpustat --version` (set GPUSTAT to its path, e.g. a throwaway venv's bin/gpustat).
 * Runs the built dist/ (npm run bench builds it first). GPUMEM_BENCH_BASELINE=/path/to/other/dist/cli/bin.js
 * adds an older build's two commands to the same run, so a change is compared under the same load.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { buildFakeNvml, fakeH100, fakeNvmlLib, writeScenario } from '../test/fake-nvml/scenario.js';
import { MiB } from '../src/core/units.js';
import { median } from './timing.js';
import { requireRealCosts } from './fake-costs.js';

const RUNS = 21;
const BIN = fileURLToPath(new URL('../dist/cli/bin.js', import.meta.url));

interface Case {
  label: string;
  argv: string[];
  env?: NodeJS.ProcessEnv;
}

/** Wall milliseconds of one spawn to exit. */
function timeOnce(c: Case): number {
  const t = process.hrtime.bigint();
  const r = spawnSync(c.argv[0] as string, c.argv.slice(1), { env: c.env ?? process.env, stdio: ['ignore', 'pipe', 'pipe'] });
  const ms = Number(process.hrtime.bigint() - t) / 1e6;
  if (r.status !== 0) throw new Error(`${c.label}: exit ${r.status}: ${String(r.stderr)}`);
  return ms;
}

/**
 * Median wall milliseconds per case over `RUNS` rounds (after 2 warm-up rounds that fill the page cache).
 * Each round runs every case once, in turn, so a change in the machine's load falls on all cases alike.
 */
function timeInterleaved(cases: readonly Case[]): Map<string, number> {
  const times = new Map(cases.map((c) => [c.label, [] as number[]]));
  for (let round = 0; round < RUNS + 2; round++) {
    for (const c of cases) {
      const ms = timeOnce(c);
      if (round >= 2) times.get(c.label)?.push(ms);
    }
  }
  return new Map([...times].map(([label, list]) => [label, median(list)]));
}

function findGpustat(): string | null {
  const given = process.env.GPUSTAT;
  if (given && existsSync(given)) return given;
  const which = spawnSync('sh', ['-c', 'command -v gpustat'], { encoding: 'utf8' });
  return which.status === 0 ? which.stdout.trim() : null;
}

export async function run(): Promise<void> {
  requireRealCosts();
  await buildFakeNvml();
  const dir = mkdtempSync(join(tmpdir(), 'gpumem-bench-startup-'));
  const sleepers: ChildProcess[] = [];
  try {
    for (let i = 0; i < 4; i++) sleepers.push(spawn('sleep', ['300'], { stdio: 'ignore' }));
    const scenario = join(dir, 'scenario.txt');
    writeScenario(scenario, {
      driverVersion: '590.48.01',
      cudaVersion: 13010,
      devices: [fakeH100(0, {
        memory: { totalBytes: 81559 * MiB, reservedBytes: 479 * MiB, usedBytes: 4 * 1000 * MiB },
        processes: sleepers.map((s) => ({ pid: s.pid as number, usedBytes: 1000 * MiB, smUtilPct: 50 })),
      })],
    });
    const fakeEnv = { ...process.env, GPUMEM_NVML_LIB: fakeNvmlLib('590'), GPUMEM_FAKE_NVML_SCENARIO: scenario };
    const cases: Case[] = [
      { label: 'node -e 0', argv: [process.execPath, '-e', '0'] },
      { label: 'python3 -c pass', argv: ['python3', '-c', 'pass'] },
      { label: 'gpumem --version', argv: [process.execPath, BIN, '--version'] },
      { label: 'gpumem status --json (1 GPU × 4)', argv: [process.execPath, BIN, 'status', '--json', '--source', 'nvml'], env: fakeEnv },
    ];
    const baseline = process.env.GPUMEM_BENCH_BASELINE;
    if (baseline) {
      cases.push({ label: 'baseline --version', argv: [process.execPath, baseline, '--version'] });
      cases.push({ label: 'baseline status --json (1 GPU × 4)', argv: [process.execPath, baseline, 'status', '--json', '--source', 'nvml'], env: fakeEnv });
    }
    const gpustat = findGpustat();
    if (gpustat) cases.push({ label: 'gpustat --version', argv: [gpustat, '--version'] });
    const ms = timeInterleaved(cases);
    const node = ms.get('node -e 0') as number;
    const lines = [`median wall time of ${RUNS} interleaved rounds (spawn to exit); ratios against node -e 0 and, where measured, gpustat --version`];
    for (const [label, value] of ms) {
      const peer = ms.get('gpustat --version');
      const vsPeer = peer === undefined ? '' : `  ${(value / peer).toFixed(2)}× gpustat`;
      lines.push(`  ${label.padEnd(36)} ${value.toFixed(1).padStart(7)} ms  ${(value / node).toFixed(2)}× node${vsPeer}`);
    }
    const base = ms.get('baseline --version');
    if (base !== undefined) {
      lines.push(`  this build / baseline: --version ${((ms.get('gpumem --version') as number) / base).toFixed(2)}×, status --json ${((ms.get('gpumem status --json (1 GPU × 4)') as number) / (ms.get('baseline status --json (1 GPU × 4)') as number)).toFixed(2)}×`);
    }
    if (!gpustat) lines.push('  gpustat --version: not installed here (set GPUSTAT=/path/to/gpustat to add it)');
    process.stdout.write(`${lines.join('\n')}\n`);
  } finally {
    for (const s of sleepers) s.kill('SIGKILL');
    rmSync(dir, { recursive: true, force: true });
  }
}
