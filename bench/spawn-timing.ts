/**
 * Timing whole processes, as a person feels them: wall time from spawn to exit, CPU time (user + system, the
 * child's own as the kernel accounts it to its reaping parent) and the time to the first byte on stdout.
 * Cases are interleaved round by round, so a change in the machine's load falls on every case alike.
 */
import { spawn, spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { median } from './timing.js';

export interface Case {
  label: string;
  argv: string[];
  env?: NodeJS.ProcessEnv;
  /** Exit statuses that count as a run (default 0 only). */
  okStatus?: number[];
}

export interface Timed {
  /** Median wall ms. */
  wallMs: number;
  /** Mean CPU ms per run (user + system; the kernel counts it in 10 ms ticks, so a mean over rounds). */
  cpuMs: number;
}

const TICKS_PER_S = Number(spawnSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).stdout.trim()) || 100;

/** CPU ms of this process's waited-for children so far (cutime + cstime of /proc/self/stat). */
function childrenCpuMs(): number {
  const stat = readFileSync('/proc/self/stat', 'utf8');
  const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return ((Number(f[13]) + Number(f[14])) / TICKS_PER_S) * 1000;
}

function runOnce(c: Case): { wallMs: number; cpuMs: number } {
  const cpu0 = childrenCpuMs();
  const t = process.hrtime.bigint();
  const r = spawnSync(c.argv[0] as string, c.argv.slice(1), { env: c.env ?? process.env, stdio: ['ignore', 'pipe', 'pipe'], maxBuffer: 64 * 1024 * 1024 });
  const wallMs = Number(process.hrtime.bigint() - t) / 1e6;
  if (r.error || !(c.okStatus ?? [0]).includes(r.status ?? -1)) {
    throw new Error(`${c.label}: exit ${r.status}${r.error ? ` (${r.error.message})` : ''}: ${String(r.stderr).split('\n').slice(-3).join(' ')}`);
  }
  return { wallMs, cpuMs: childrenCpuMs() - cpu0 };
}

/** Wall (median) and CPU (mean) per case over `rounds` interleaved rounds, after 2 warm-up rounds (page cache). */
export function timeInterleaved(cases: readonly Case[], rounds: number): Map<string, Timed> {
  const wall = new Map(cases.map((c) => [c.label, [] as number[]]));
  const cpu = new Map(cases.map((c) => [c.label, 0]));
  for (let round = 0; round < rounds + 2; round++) {
    for (const c of cases) {
      const r = runOnce(c);
      if (round < 2) continue;
      wall.get(c.label)?.push(r.wallMs);
      cpu.set(c.label, (cpu.get(c.label) ?? 0) + r.cpuMs);
    }
  }
  return new Map(cases.map((c) => [c.label, { wallMs: median(wall.get(c.label) ?? []), cpuMs: (cpu.get(c.label) ?? 0) / rounds }]));
}

/** Ms from spawn to the first stdout byte (NaN when nothing was printed) and to exit. */
export function timeFirstOutput(c: Case): Promise<{ firstMs: number; exitMs: number }> {
  return new Promise((resolve, reject) => {
    const t0 = process.hrtime.bigint();
    const ms = (): number => Number(process.hrtime.bigint() - t0) / 1e6;
    const child = spawn(c.argv[0] as string, c.argv.slice(1), { env: c.env ?? process.env, stdio: ['ignore', 'pipe', 'ignore'] });
    let firstMs: number | null = null;
    child.stdout.on('data', () => (firstMs ??= ms()));
    child.on('error', reject);
    child.on('close', (code) => {
      if (!(c.okStatus ?? [0]).includes(code ?? -1)) reject(new Error(`${c.label}: exit ${code}`));
      else resolve({ firstMs: firstMs ?? Number.NaN, exitMs: ms() });
    });
  });
}
