/**
 * Soak: 100 supervised runs of a job that spawns DataLoader-like workers, ended by SIGINT, SIGTERM or a
 * crash (SIGSEGV), with workers that follow their parent, outlive it, or also ignore SIGTERM. After each
 * run, every worker pid is checked. Peer, in the same run: the same jobs started and signalled without
 * gpumem, counting the workers they leave behind. Target: 0 orphans under gpumem.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { GpuSource } from '../src/sources/index.js';
import { superviseRun } from '../src/supervise/index.js';
import { readProcStat as readProcEntry } from '../src/sources/index.js';

const RUNS = Number(process.env.GPUMEM_BENCH_SOAK_RUNS ?? 100);
const PROCS = new URL('../test/fixtures/procs/', import.meta.url).pathname;
const ENDINGS = ['SIGINT', 'SIGTERM', 'crash'] as const;
const WORKER_MODES = ['follow', 'orphan', 'stubborn'] as const;

/** No GPUs: the soak is about processes; the GPU side is covered by the tests. */
const noGpus: GpuSource = {
  kind: 'nvml',
  readSample: async () => ({ timeMs: Date.now(), source: { kind: 'nvml', detail: 'none' }, devices: [], processes: [], unavailable: {} }),
  close: () => {},
};

const alive = (pid: number): boolean => {
  const e = readProcEntry(pid);
  return e !== null && e.state !== 'Z';
};
const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

function workerPids(dir: string): number[] {
  return readdirSync(dir).filter((n) => /^\d+-0$/.test(n)).map((n) => Number(n.split('-')[0]));
}

function args(i: number): { ending: (typeof ENDINGS)[number]; argv: string[] } {
  const ending = ENDINGS[i % 3] as (typeof ENDINGS)[number];
  const mode = WORKER_MODES[Math.floor(i / 3) % 3] as string;
  const argv = [process.execPath, `${PROCS}worker-tree.mjs`, '--workers', '3', '--worker-mode', mode, '--worker-claim', '0:1', '--hold-ms', ending === 'crash' ? '50' : '30000'];
  if (ending === 'crash') argv.push('--crash', '1');
  return { ending, argv };
}

async function waitWorkers(dir: string, n: number): Promise<void> {
  const end = Date.now() + 5000;
  while (workerPids(dir).length < n && Date.now() < end) await sleep(5);
}

async function supervised(i: number): Promise<number> {
  const dir = mkdtempSync(join(tmpdir(), 'gpumem-soak-'));
  const { ending, argv } = args(i);
  const ac = new AbortController();
  const sinkStream = { write: () => true } as unknown as NodeJS.WritableStream;
  const running = superviseRun({
    argv, source: noGpus, env: { PATH: process.env.PATH, GPUMEM_TEST_CLAIMS: dir }, signal: ac.signal, stdout: sinkStream, stderr: sinkStream,
    log: () => {}, intervalMs: 100, graceMs: 200, settleMs: 200, cleanupTimeoutMs: 500,
  });
  await waitWorkers(dir, 3);
  if (ending !== 'crash') ac.abort(ending);
  await running;
  const left = workerPids(dir).filter(alive);
  for (const pid of left) process.kill(pid, 'SIGKILL');
  rmSync(dir, { recursive: true, force: true });
  return left.length;
}

async function plain(i: number): Promise<number> {
  const dir = mkdtempSync(join(tmpdir(), 'gpumem-soak-'));
  const { ending, argv } = args(i);
  const child = spawn(argv[0] as string, argv.slice(1), { env: { PATH: process.env.PATH, GPUMEM_TEST_CLAIMS: dir }, stdio: 'ignore' });
  const exited = new Promise((r) => child.once('exit', r));
  await waitWorkers(dir, 3);
  // What a shell script wrapper does: signal the job it started, not its group.
  if (ending !== 'crash') child.kill(ending);
  await exited;
  await sleep(200);
  const left = workerPids(dir).filter(alive);
  for (const pid of left) process.kill(pid, 'SIGKILL');
  rmSync(dir, { recursive: true, force: true });
  return left.length;
}

export async function run(): Promise<void> {
  let orphans = 0;
  let peerOrphans = 0;
  const t0 = Date.now();
  for (let i = 0; i < RUNS; i++) orphans += await supervised(i);
  const supervisedMs = Date.now() - t0;
  const t1 = Date.now();
  for (let i = 0; i < RUNS; i++) peerOrphans += await plain(i);
  const plainMs = Date.now() - t1;
  process.stdout.write(`soak: ${RUNS} runs × 3 workers, ended by SIGINT/SIGTERM/crash, workers follow/outlive/ignore TERM\n`);
  process.stdout.write(`  gpumem run:        ${orphans} orphans left (target 0), ${(supervisedMs / RUNS).toFixed(0)} ms per run\n`);
  process.stdout.write(`  plain spawn+kill:  ${peerOrphans} orphans left, ${(plainMs / RUNS).toFixed(0)} ms per run\n`);
  process.stdout.write(`  orphans prevented: ${peerOrphans - orphans} of ${peerOrphans}; time ratio gpumem/plain ${(supervisedMs / plainMs).toFixed(2)}×\n`);
}
