/**
 * gpumem's per-sample /proc reading against a C floor, at 512 and 4096 real processes (`sleep 600`).
 *
 * Call pattern measured: `createHostEnricher()` with default options, as `status --json` / `status --watch
 * --json` make it (src/sources/open.ts), called again and again on the same sample after a warm-up. For every
 * pid it already knows, each such sample pread()s /proc/PID/stat through a descriptor held open and parses
 * pid, comm, state, ppid, pgid, utime + stime and starttime (the start time proves the process is the one whose
 * stable facts are cached); nothing else is read. The live views that re-read in rounds (watch, record,
 * serve, the `status --watch` table) make this read only every few seconds, so this is the costliest steady
 * pattern. The floor (bench/procfs_floor.c, built here with gcc -O2) holds the same files open and parses the
 * same fields in C. Both are CPU time (user + system) per sample, measured in alternating blocks in the same
 * run; the ratio is the median of the per-pair ratios. A third row reads the same files from Node with no
 * parsing at all, to show how much of the gap is Node's own cost per read.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { closeSync, mkdtempSync, openSync, readFileSync, readSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Sample } from '../src/core/types.js';
import { createHostEnricher, heldFilesBudget } from '../src/sources/procfs/index.js';
import { median } from './timing.js';

const GOAL = 1.2;
/** Sizes, with the samples per measured block (about half a second of the floor's CPU each). */
const SIZES: Array<[pids: number, samples: number]> = [[512, 300], [4096, 40]];
/** gpumem and the floor are measured alternately this many times, each block of ours paired with the floor's next one. */
const REPS = 7;
const WARMUP = 10;

interface FloorResult { held: number; parsed: number; cpuNsPerRound: number; sumStartTicks: number; sumPpid: number }

/** Builds the floor: its path, or the one line to print when gcc is missing or fails. */
function buildFloor(dir: string): string | { missing: string } {
  const bin = join(dir, 'procfs_floor');
  const src = fileURLToPath(new URL('procfs_floor.c', import.meta.url));
  const cc = spawnSync('gcc', ['-O2', '-o', bin, src], { encoding: 'utf8' });
  if (cc.error) return { missing: `gcc not found (${(cc.error as NodeJS.ErrnoException).code}): the C floor bench/procfs_floor.c cannot be built; install gcc` };
  if (cc.status !== 0) return { missing: `gcc -O2 bench/procfs_floor.c failed: ${cc.stderr.trim().split('\n')[0]}` };
  return bin;
}

/** Starts `n` sleeping processes under one shell in a process group of its own; resolves with their pids. */
function startSleepers(n: number): Promise<{ group: ChildProcess; pids: number[] }> {
  const group = spawn('sh', ['-c', `i=0; while [ $i -lt ${n} ]; do sleep 600 & echo $!; i=$((i+1)); done; wait`], { detached: true, stdio: ['ignore', 'pipe', 'inherit'] });
  return new Promise((resolve, reject) => {
    let text = '';
    group.on('error', reject);
    group.on('exit', () => reject(new Error(`the shell starting ${n} sleepers exited early`)));
    group.stdout?.on('data', (chunk: Buffer) => {
      text += chunk.toString();
      const pids = text.split('\n').filter((l) => l !== '').map(Number);
      if (pids.length >= n && text.endsWith('\n')) resolve({ group, pids });
    });
  });
}

/** A sample listing each pid once, spread over 8 GPUs, with no host facts yet (what a GPU source returns). */
function sampleOf(pids: number[]): Sample {
  return {
    timeMs: 1, source: { kind: 'nvml', detail: 'bench' }, devices: [], unavailable: {},
    processes: pids.map((pid, i) => ({ pid, gpuUuid: `GPU-${i % 8}`, gpuIndex: i % 8, gpuInstanceId: null, computeInstanceId: null, usedBytes: 1 << 20, kind: 'compute', name: null, smUtilPct: null, host: null, unavailable: {} })),
  };
}

function runFloor(bin: string, pids: number[], rounds: number): FloorResult {
  const out = spawnSync(bin, [String(rounds), String(WARMUP)], { input: pids.join('\n'), encoding: 'utf8' });
  if (out.status !== 0) throw new Error(`procfs_floor failed: ${out.stderr.trim()}`);
  return JSON.parse(out.stdout) as FloorResult;
}

/**
 * CPU ms per round of Node reading the same files held open with fs.readSync and parsing nothing: how much of
 * gpumem's ratio is the cost of one read through Node rather than gpumem's own work.
 */
function bareReads(pids: number[], rounds: number): number {
  const fds = pids.map((pid) => openSync(`/proc/${pid}/stat`, 'r'));
  const buffer = Buffer.allocUnsafe(4096);
  try {
    for (let r = 0; r < WARMUP; r++) for (const fd of fds) readSync(fd, buffer, 0, buffer.length, 0);
    const before = process.cpuUsage();
    for (let r = 0; r < rounds; r++) for (const fd of fds) readSync(fd, buffer, 0, buffer.length, 0);
    const used = process.cpuUsage(before);
    return (used.user + used.system) / 1000 / rounds;
  } finally {
    for (const fd of fds) closeSync(fd);
  }
}

const softOpenFiles = (): string => /^Max open files\s+(\S+)\s+(\S+)/m.exec(readFileSync('/proc/self/limits', 'utf8'))?.slice(1).join(' / hard ') ?? 'unknown';
const loadAverage = (): string => readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ');
const fmt = (ms: number): string => (ms < 1 ? `${(ms * 1000).toFixed(0)} µs` : `${ms.toFixed(2)} ms`);

async function measureSize(bin: string, n: number, samples: number): Promise<string[]> {
  const { group, pids } = await startSleepers(n);
  const enrich = createHostEnricher();
  try {
    const sample = sampleOf(pids);
    let last = enrich(sample);
    const held = enrich.counts.heldFiles;
    for (let i = 0; i < WARMUP; i++) last = enrich(sample);
    const ours: number[] = [];
    const floor: FloorResult[] = [];
    const bare: number[] = [];
    for (let r = 0; r < REPS; r++) {
      const before = process.cpuUsage();
      for (let i = 0; i < samples; i++) last = enrich(sample);
      const used = process.cpuUsage(before);
      ours.push((used.user + used.system) / 1000 / samples);
      floor.push(runFloor(bin, pids, samples));
      bare.push(bareReads(pids, samples));
    }
    // Same processes, same values: every row visible, and the start ticks and parents both sides parsed agree.
    const rows = last.processes;
    const sumStart = rows.reduce((s, p) => s + (p.host?.startTicks ?? Number.NaN), 0);
    const sumPpid = rows.reduce((s, p) => s + (p.host?.ppid ?? Number.NaN), 0);
    const f = floor[floor.length - 1] as FloorResult;
    if (f.parsed !== n || sumStart !== f.sumStartTicks || sumPpid !== f.sumPpid) {
      throw new Error(`gpumem and the floor disagree at ${n} pids: parsed ${f.parsed}, start ticks ${sumStart} vs ${f.sumStartTicks}, ppid ${sumPpid} vs ${f.sumPpid}`);
    }
    const a = median(ours);
    const b = median(floor.map((x) => x.cpuNsPerRound / 1e6));
    // Each block of gpumem's is paired with the floor's block right after it: the median of those ratios
    // shrugs off a block that met a burst of other work on the machine.
    const ratios = ours.map((ms, i) => ms / ((floor[i] as FloorResult).cpuNsPerRound / 1e6)).sort((x, y) => x - y);
    const ratio = median(ratios);
    const c = median(bare);
    // Read before the sleepers are killed: thousands of exiting processes would show as load for a minute.
    const load = loadAverage();
    const heldNote = held >= n ? `all ${n} stat files held` : `${held} of ${n} stat files held (budget ${heldFilesBudget()} = soft limit / 2 − 64); the other ${n - held} are opened, read and closed by path each sample`;
    return [
      `${n} pids: ${heldNote}; the floor holds ${f.held}; load average at the end ${load}`,
      `  gpumem /proc per sample   CPU ${fmt(a)}  (median of ${REPS} blocks of ${samples} samples; ${((a * 1000) / n).toFixed(2)} µs per pid)`,
      `  C floor per round         CPU ${fmt(b)}  (median of ${REPS} blocks of ${samples} rounds; ${((b * 1000) / n).toFixed(2)} µs per pid)`,
      `  Node, readSync only       CPU ${fmt(c)}  (the same held files read with no parsing: Node's own cost per read, ${(c / b).toFixed(2)}× the floor)`,
      `  ratio gpumem / floor      ${ratio.toFixed(2)}×  (median of the ${REPS} paired blocks, ${(ratios[0] as number).toFixed(2)}–${(ratios[ratios.length - 1] as number).toFixed(2)}; goal ≤ ${GOAL}×) ${ratio <= GOAL ? 'met' : 'NOT met'}`,
    ];
  } finally {
    enrich.close();
    // The shell's own process group: it and the sleepers it started, nothing else.
    try {
      process.kill(-(group.pid as number), 'SIGKILL');
    } catch {
      // Already gone.
    }
  }
}

export async function run(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'gpumem-bench-procfs-'));
  try {
    const bin = buildFloor(dir);
    if (typeof bin !== 'string') {
      process.stdout.write(`procfs: ${bin.missing}; nothing measured\n`);
      process.exitCode = 1;
      return;
    }
    process.stdout.write([
      'call pattern: createHostEnricher() defaults (status --json, status --watch --json): every known pid\'s /proc/PID/stat re-read each sample',
      'fields per pid and sample: pid, comm, state, ppid, pgid, utime, stime, starttime — one pread of a held /proc/PID/stat (gpumem and floor alike)',
      `open files: soft ${softOpenFiles()} (Node raised the soft limit to the hard one at start-up); held-file budget ${heldFilesBudget()}`,
      `load average before: ${loadAverage()} (CPU time of a shared machine is indicative; only the ratio means much)`,
      '',
    ].join('\n'));
    for (const [n, samples] of SIZES) process.stdout.write(`${(await measureSize(bin, n, samples)).join('\n')}\n`);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
